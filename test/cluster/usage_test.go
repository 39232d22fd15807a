/*
Copyright 2026 The s3gw-remediation Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package cluster

import (
	"os"
	"testing"
	"time"
)

func TestProcessUsageOfThisProcess(t *testing.T) {
	// Touch 64 MiB and burn CPU so that both show.
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		buf[0]++
	}
	u, err := ProcessUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.PeakRSS < 64<<20 || u.PeakRSS < u.RSS {
		t.Errorf("usage %+v: want a peak RSS of at least 64 MiB, and at least the current RSS", u)
	}
	if u.RSSAnon < 64<<20 || u.RSSFile == 0 || u.RSSAnon+u.RSSFile > u.RSS {
		t.Errorf("usage %+v: want the 64 MiB touched anonymous, the binary file-backed, both within the RSS", u)
	}
	if u.CPU < 10*time.Millisecond {
		t.Errorf("usage %+v: want at least the 50 ms of CPU just spent, in ticks", u)
	}
	if _, err := ProcessUsage(1 << 30); err == nil {
		t.Error("ProcessUsage of a process that does not exist succeeded")
	}
}
