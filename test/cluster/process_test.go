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
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// fakeComponentEnv makes the test binary act as a misbehaving component
// instead of running tests, so process handling is tested without a cluster.
const fakeComponentEnv = "CLUSTER_TEST_FAKE_COMPONENT"

func TestMain(m *testing.M) {
	switch os.Getenv(fakeComponentEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		fmt.Fprintln(os.Stderr, "listen tcp 127.0.0.1:2379: bind: address already in use")
		os.Exit(1)
	case "stubborn":
		// Ignore SIGTERM and leave a child behind in the same process group.
		signal.Ignore(syscall.SIGTERM)
		child := exec.Command(os.Args[0])
		child.Env = append(os.Environ(), fakeComponentEnv+"=sleep")
		if err := child.Start(); err != nil {
			os.Exit(2)
		}
		fmt.Println(child.Process.Pid)
		select {}
	case "sleep":
		signal.Ignore(syscall.SIGTERM)
		select {}
	}
}

func TestStartReportsLogTailOfCrashingComponent(t *testing.T) {
	binDir := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"} {
		if err := os.Symlink(os.Args[0], filepath.Join(binDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv(fakeComponentEnv, "crash")

	c, err := Start(t.Context(), Options{BinDir: binDir, KwokBinary: filepath.Join(binDir, "kwok"), StartTimeout: 10 * time.Second})
	if err == nil {
		_ = c.Stop()
		t.Fatal("Start succeeded with a crashing etcd")
	}
	for _, want := range []string{"etcd: exited before becoming ready", "address already in use"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestStopKillsStubbornProcessGroup(t *testing.T) {
	t.Setenv(fakeComponentEnv, "stubborn")
	logPath := filepath.Join(t.TempDir(), "stubborn.log")
	comp, err := StartProcess("stubborn", os.Args[0], nil, nil, logPath)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the grandchild exists, so that stop has something to miss.
	var grandchild int
	if err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		data, err := os.ReadFile(logPath)
		if err == nil {
			_, _ = fmt.Sscan(string(data), &grandchild)
		}
		return grandchild != 0, nil
	}); err != nil {
		t.Fatal("fake component did not start its child")
	}

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stopped := make(chan struct{})
	go func() { comp.Stop(200 * time.Millisecond); close(stopped) }()
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("stop did not return")
	}
	if alive := runningInGroup(comp.Pid()); len(alive) > 0 {
		t.Errorf("processes %v (grandchild %d) survived stop", alive, grandchild)
	}
}
