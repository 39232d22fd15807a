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

package attachments

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/longhorn"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// TestUnmarkInUse runs the release write against a real API server: it
// drops exactly the named volumes, leaves the rest of the node's status,
// and refuses to write over a change it has not seen.
func TestUnmarkInUse(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	started, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = started.Env.Stop() })
	c := started.Client

	ours, other := longhorn.UniqueVolumeName("pvc-ours"), longhorn.UniqueVolumeName("pvc-other")
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-0001"}}
	g.Expect(c.Create(ctx, node)).To(Succeed())
	node.Status = corev1.NodeStatus{VolumesInUse: []corev1.UniqueVolumeName{ours, other},
		Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown"}}}
	g.Expect(c.Status().Update(ctx, node)).To(Succeed())

	stale := node.DeepCopy()
	removed, err := UnmarkInUse(ctx, c, node, []string{"pvc-ours", "pvc-gone"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(Equal(1))
	got := &corev1.Node{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	g.Expect(got.Status.VolumesInUse).To(Equal([]corev1.UniqueVolumeName{other}))
	g.Expect(got.Status.Conditions).To(HaveLen(1), "the rest of the status is left as it was")
	g.Expect(node.ResourceVersion).To(Equal(got.ResourceVersion), "the caller's node is the one written")

	_, err = UnmarkInUse(ctx, c, stale, []string{"pvc-other"})
	g.Expect(apierrors.IsConflict(err)).To(BeTrue(), "a write from a stale read is refused: %v", err)
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	g.Expect(got.Status.VolumesInUse).To(Equal([]corev1.UniqueVolumeName{other}))

	removed, err = UnmarkInUse(ctx, c, got, []string{"pvc-other"})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(removed).To(Equal(1))
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(node), got)).To(Succeed())
	g.Expect(got.Status.VolumesInUse).To(BeEmpty())
}
