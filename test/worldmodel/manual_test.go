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

package worldmodel

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/medik8s/common/pkg/annotations"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// TestGenerateManual: the admin's CR is drawn in classic mode only, with
// fencing disabled.
func TestGenerateManual(t *testing.T) {
	for _, escalating := range []bool{false, true} {
		drawn := 0
		for i := range 200 {
			sc := &Scenario{NHC: NHCSpec{Escalating: escalating}}
			m := generateManual(rand.New(rand.NewPCG(uint64(i), 1)), sc, safePolicy)
			if m == nil {
				continue
			}
			drawn++
			if m.Spec.Fencing.Mode != s3gwv1alpha1.FencingModeDisabled || m.After < time.Minute || m.After > 6*time.Minute {
				t.Errorf("escalating %v: drew %+v, want fencing Disabled after 1-6 min", escalating, m)
			}
		}
		if escalating && drawn > 0 || !escalating && (drawn < 20 || drawn > 60) {
			t.Errorf("escalating %v: drew %d of 200, want none when escalating, about a fifth otherwise", escalating, drawn)
		}
	}
}

// TestAdminRemediates: the admin's CR comes beside NHC's pending one once
// After has passed with s3gw still on the node, and goes as soon as NHC's
// stops shielding it.
func TestAdminRemediates(t *testing.T) {
	tests := []struct {
		name string
		// at is how long after NHC's CR the admin looks.
		at         time.Duration
		nodeReady  bool
		nhcTimeout bool
		noGateway  bool
		had, want  bool
	}{
		{name: "NHC's CR pending past After, s3gw on the node: created", at: 3 * time.Minute, want: true},
		{name: "before After: not yet", at: time.Minute},
		{name: "s3gw no longer on the node: none", at: 3 * time.Minute, noGateway: true},
		{name: "NHC's CR timed out: not created", at: 3 * time.Minute, nhcTimeout: true},
		{name: "NHC's CR timed out: deleted", at: 3 * time.Minute, nhcTimeout: true, had: true},
		{name: "node Ready again: deleted", at: 3 * time.Minute, nodeReady: true, had: true},
		{name: "NHC's CR still pending: kept", at: 3 * time.Minute, had: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &Scenario{Nodes: 2, Instances: []InstanceSpec{{Node: 0, Replicas: []int{1}}}, Duration: 20 * time.Minute,
				Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
					Mode: s3gwv1alpha1.FencingModeRequireEvidence, StorageIsolation: ptr.To(true)}},
				Manual: &ManualSpec{After: 2 * time.Minute, Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
					Mode: s3gwv1alpha1.FencingModeDisabled}}}}
			sc.Clocks = generateClocks(rand.New(rand.NewPCG(1, 2)), sc.Nodes).synchronised()
			w := newWorld(sc, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)), nil)
			node := w.nodes[0].Name
			readyCondition(w.api.node(node)).Status = corev1.ConditionUnknown
			w.nhcCreate(node, w.nhc.steps[0])
			if tt.had {
				w.createManual(node, node+manualSuffix)
			}
			if tt.nhcTimeout {
				setAnnotation(w.activeNHCRemediation(node), annotations.NhcTimedOut, "now")
			}
			if tt.nodeReady {
				readyCondition(w.api.node(node)).Status = corev1.ConditionTrue
			}
			if tt.noGateway {
				for _, p := range w.api.pods() {
					deletePod(w.api, p, new(int64))
				}
			}
			w.now = w.now.Add(tt.at)
			w.adminRemediates()
			mine := w.api.get(gvkRemediation, remediationNamespace, node+manualSuffix)
			if got := mine != nil && mine.GetDeletionTimestamp() == nil; got != tt.want {
				t.Errorf("the admin's CR is there: %v, want %v", got, tt.want)
			}
		})
	}
}
