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
	"github.com/s3gw-tech/s3gw-remediation/internal/failover/release"
)

// TestStrategiesAreWhole checks each release strategy describes what Decide
// and the protection report need of it.
func TestStrategiesAreWhole(t *testing.T) {
	for _, s := range release.Strategies {
		t.Run(string(s.Name), func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(s.VolumeWrite == nil).NotTo(Equal(s.NodeWrite == nil), "one write per volume or one per node")
			g.Expect(s.WaitsForLostKubelet && s.VolumeWrite == nil).To(BeFalse(), "a kubelet undoes a volume's write")
			g.Expect(s.Budget).To(BeNumerically(">", 0))
			g.Expect(s.Needs).NotTo(BeEmpty())
			g.Expect(release.Of(s.Name).Name).To(Equal(s.Name))
		})
	}
	NewWithT(t).Expect(release.Of("").Name).To(Equal(s3gwv1alpha1.ReleaseControllerDetach), "unset is the default")
}

// TestNodeWideReleaseNamesEveryVolume: one write for the node releases every
// target volume still attached, so each is counted as released.
func TestNodeWideReleaseNamesEveryVolume(t *testing.T) {
	o := fixture.FencedByFAR()
	o.Spec.Release.Strategy = s3gwv1alpha1.ReleaseOutOfServiceTaint
	o.Targets = []failover.Target{fixture.RecordedTarget("s3gw-0", fixture.AttachedVolume("a"), fixture.AttachedVolume("b"), fixture.ReleasedVolume("c"))}
	fixture.Evicted(&o)
	d := Decide(o)
	g := NewWithT(t)
	g.Expect(releasedBy(d).Node).To(BeTrue())
	g.Expect(releasedBy(d).Volumes).To(HaveLen(2))
	g.Expect(d.Destructive()).To(BeTrue())
}
