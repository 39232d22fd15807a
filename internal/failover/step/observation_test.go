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

package step

import (
	"testing"

	. "github.com/onsi/gomega"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/fixture"
)

func TestTargetAndVolumeState(t *testing.T) {
	gone := func(volumes ...failover.Volume) failover.Target {
		tg := fixture.RecordedTarget("s3gw-0", volumes...)
		tg.PodPresent = false
		return tg
	}
	replaced := gone(fixture.ReleasedVolume("a"))
	replaced.Replacement = &failover.Replacement{Name: "s3gw-1", NodeName: "worker-2"}
	tests := []struct {
		name   string
		target failover.Target
		state  s3gwv1alpha1.TargetState
	}{
		{"pod still in the API, even with its volumes released", fixture.RecordedTarget("s3gw-0", fixture.ReleasedVolume("a")), s3gwv1alpha1.TargetFound},
		{"pod gone, a volume still attached", gone(fixture.ReleasedVolume("a"), fixture.AttachedVolume("b")), s3gwv1alpha1.TargetEvicted},
		{"pod gone, a skipped volume does not hold it", gone(fixture.ReleasedVolume("a"), fixture.SkippedVolume("nfs")), s3gwv1alpha1.TargetReleased},
		{"pod gone, released, replacement Ready", replaced, s3gwv1alpha1.TargetReplaced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			NewWithT(t).Expect(tt.target.State()).To(Equal(tt.state))
		})
	}
	t.Run("volumes", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(fixture.AttachedVolume("a").State()).To(Equal(s3gwv1alpha1.VolumeAttached))
		ticketOnly := fixture.ReleasedVolume("a")
		ticketOnly.Tickets = []failover.Ticket{{ID: "longhorn-ui", Type: "longhorn-api"}}
		g.Expect(ticketOnly.State()).To(Equal(s3gwv1alpha1.VolumeAttached))
		g.Expect(fixture.ReleasedVolume("a").State()).To(Equal(s3gwv1alpha1.VolumeReleased))
		g.Expect(fixture.SkippedVolume("nfs").State()).To(Equal(s3gwv1alpha1.VolumeSkipped))
	})
}
