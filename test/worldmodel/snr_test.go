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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// snrWorld is a cluster of nodes nodes, s3gw on n1, with the SNR step after
// ours and a software reboot.
func snrWorld(t *testing.T, nodes int) *World {
	t.Helper()
	sc := &Scenario{Nodes: nodes, Instances: []InstanceSpec{{Node: 0, Replicas: []int{1}}}, Duration: 20 * time.Minute,
		Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
			Mode: s3gwv1alpha1.FencingModeRequireEvidence, StorageIsolation: ptr.To(true)}},
		SNR: &SNRSpec{Timeout: 5 * time.Minute, RebootDuration: snrMinRebootDuration, BootTime: time.Minute}}
	sc.Clocks = generateClocks(rand.New(rand.NewPCG(1, 2)), sc.Nodes).synchronised()
	return newWorld(sc, rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(3, 4)), nil)
}

// createSNR has NHC create the node's SelfNodeRemediation.
func createSNR(t *testing.T, w *World, node string) *unstructured.Unstructured {
	t.Helper()
	for _, step := range w.nhc.steps {
		if step.gvk == gvkSNR {
			w.nhcCreate(node, step)
		}
	}
	for _, obj := range w.api.list(gvkSNR) {
		if crNodeName(obj) == node {
			return obj.(*unstructured.Unstructured)
		}
	}
	t.Fatal("NHC created no SelfNodeRemediation")
	return nil
}

// TestSNRRemovesOutOfServiceTaint: SNR's manager removes an out-of-service
// taint it did not add, by key, once no pod on the node is terminating and
// no VolumeAttachment names it, while its CR lives and the node is down;
// until a minute past timeAssumedRebooted it waits for them, later only
// its CR's deletion removes the taint, and a timed-out CR's deletion
// removes it whatever is left.
func TestSNRRemovesOutOfServiceTaint(t *testing.T) {
	tests := []struct {
		name string
		// after is how long past timeAssumedRebooted the manager looks.
		after       time.Duration
		attachments bool // the s3gw VolumeAttachment still names the node
		deleted     bool
		timedOut    bool
		kept        bool
	}{
		{name: "pods and attachments gone, CR alive, node down: removed", after: time.Second},
		{name: "an attachment left: kept while waiting", after: 30 * time.Second, attachments: true, kept: true},
		{name: "an attachment left past the minute, CR alive: kept", after: 2 * time.Minute, attachments: true, kept: true},
		{name: "an attachment left past the minute, CR deleted: removed", after: 2 * time.Minute, attachments: true, deleted: true},
		{name: "timed out, then deleted: removed", after: time.Second, attachments: true, deleted: true, timedOut: true},
		{name: "timed out, alive: kept", after: time.Second, timedOut: true, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := snrWorld(t, 2)
			n1 := w.nodes[0]
			w.powerOff(n1, "test")
			w.addTaint(w.api.node(n1.Name), withTimeAdded(outOfServiceTaint(), apiTime(w.adminClock())), "an admin")
			cr := createSNR(t, w, n1.Name)
			w.selfNodeRemediation()
			if snrPhase(cr) != snrPreReboot || !hasTaintKey(w.api.node(n1.Name), snrTaintKey) {
				t.Fatalf("phase %q after the first pass, want %s with the NoSchedule taint", snrPhase(cr), snrPreReboot)
			}
			if !tt.attachments {
				for _, va := range w.api.kubeAttachments() {
					w.api.remove(va)
				}
			}
			if tt.timedOut {
				setAnnotation(cr, annotations.NhcTimedOut, "now")
			}
			if tt.deleted {
				w.api.markDeleted(cr)
			}
			w.now = snrAssumedRebooted(cr).Add(tt.after)
			w.selfNodeRemediation() // Reboot-Completed
			w.selfNodeRemediation() // the out-of-service taint
			node := w.api.node(n1.Name)
			if got := outOfService(node); got != tt.kept {
				t.Errorf("out-of-service taint there: %v, want %v (phase %q)", got, tt.kept, snrPhase(cr))
			}
			if n1.Powered {
				t.Error("the node came back")
			}
			if !tt.kept && w.taintedBy[n1.Name] != "" {
				t.Errorf("the admin's taint is still recorded as %q's", w.taintedBy[n1.Name])
			}
		})
	}
}

// TestSNRAgentReboots: the agent reboots its node once its CR is
// Pre-Reboot-Completed when it reaches the API; cut from it, when a peer
// finds a CR for the node or no peer answers, and not when a peer finds
// none or every peer lacks the API too (a rack cut from the control plane,
// whose peers' API errors also count as answers).
func TestSNRAgentReboots(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		cp       bool // n1 reaches the API server
		cr       bool // n1 has a SelfNodeRemediation
		cutPeers bool // n2 is cut from the API server too
		isolated bool // n1 reaches no peer
		want     bool // n1 reboots
	}{
		{name: "API reachable, CR pre-reboot", nodes: 2, cp: true, cr: true, want: true},
		{name: "API reachable, no CR", nodes: 2, cp: true},
		{name: "cut from the API, a peer finds the CR", nodes: 2, cr: true, want: true},
		{name: "cut from the API, a peer finds no CR", nodes: 2},
		{name: "isolated", nodes: 2, isolated: true, want: true},
		{name: "rack cut from the API with its peer", nodes: 3, cr: true, cutPeers: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := snrWorld(t, tt.nodes)
			n1, n2 := w.nodes[0], w.nodes[1]
			if tt.cr {
				createSNR(t, w, n1.Name)
			}
			n1.CP, n2.CP = tt.cp, !tt.cutPeers
			if tt.isolated {
				n1.Net = w.newNet()
			}
			if tt.cutPeers {
				for _, n := range w.nodes[2:] {
					n.Net = w.newNet()
				}
			}
			for range 3 {
				w.selfNodeRemediation()
				w.now = w.now.Add(snrAPICheckFailing)
			}
			if got := !n1.Powered; got != tt.want {
				t.Errorf("n1 rebooted: %v, want %v", got, tt.want)
			}
		})
	}
}

func hasTaintKey(node *corev1.Node, key string) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == key {
			return true
		}
	}
	return false
}
