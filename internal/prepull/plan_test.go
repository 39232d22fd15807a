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

package prepull

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

func daemonSet(namespace, name, hash string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "7", UID: "uid-" + types.UID(name),
		Annotations: map[string]string{SpecHashAnnotation: hash}}}
}

func TestPlanChanges(t *testing.T) {
	g := NewWithT(t)
	now := metav1.Now()
	deleting := daemonSet("s3gw", "deleting-prepull", "h")
	deleting.DeletionTimestamp = &now
	existing := []*appsv1.DaemonSet{
		daemonSet("s3gw", "same-prepull", "h1"),
		daemonSet("s3gw", "changed-prepull", "old"),
		daemonSet("s3gw", "gone-prepull", "h"),
		daemonSet("s3gw", "moving-prepull", "h"),
		deleting,
	}
	built := []*appsv1.DaemonSet{
		daemonSet("s3gw", "same-prepull", "h1"),
		daemonSet("s3gw", "changed-prepull", "new"),
		daemonSet("s3gw", "new-prepull", "h"),
		daemonSet("s3gw", "deleting-prepull", "h2"),
	}
	desired := make([]Desired, 0, len(built))
	for _, ds := range built {
		ds.ResourceVersion, ds.UID = "", ""
		desired = append(desired, Desired{NamespacedName: types.NamespacedName{Namespace: ds.Namespace, Name: ds.Name},
			Hash: ds.Annotations[SpecHashAnnotation], built: ds})
	}
	keep := map[types.NamespacedName]bool{{Namespace: "s3gw", Name: "moving-prepull"}: true}
	p := PlanChanges(desired, keep, existing)

	names := func(list []*appsv1.DaemonSet) []string {
		out := make([]string, 0, len(list))
		for _, ds := range list {
			out = append(out, ds.Name)
		}
		return out
	}
	g.Expect(names(p.Create)).To(Equal([]string{"new-prepull"}))
	g.Expect(names(p.Update)).To(Equal([]string{"changed-prepull"}))
	g.Expect(p.Update[0].UID).To(BeEquivalentTo("uid-changed-prepull"), "the DaemonSet read, not a namesake")
	g.Expect(p.Update[0].ResourceVersion).To(BeEmpty(), "no lock the DaemonSet controller's status writes would break")
	g.Expect(p.Update[0].Annotations[SpecHashAnnotation]).To(Equal("new"))
	g.Expect(names(p.Delete)).To(Equal([]string{"gone-prepull"}), "kept: a gateway between pods; waited for: one being deleted")
	g.Expect(p.Delete[0]).To(Equal(existing[2]))
	g.Expect(p.Delete[0]).NotTo(BeIdenticalTo(existing[2]), "the plan's own copy, not the cache's object")
	g.Expect(p.Empty()).To(BeFalse())
	g.Expect(PlanChanges(nil, nil, nil).Empty()).To(BeTrue())
}

func TestWantedByAny(t *testing.T) {
	g := NewWithT(t)
	ds := daemonSet("s3gw", "gw-prepull", "h")
	ds.Annotations[TemplatesAnnotation] = "ops/a,ops/b"
	g.Expect(WantedByAny(ds, map[string]bool{"ops/b": true})).To(BeTrue())
	g.Expect(WantedByAny(ds, map[string]bool{"ops/c": true})).To(BeFalse(), "pre-pull turned off on a and b, or both deleted")
	g.Expect(WantedByAny(daemonSet("s3gw", "old", "h"), map[string]bool{"": true})).To(BeFalse(), "no templates recorded")
}

// A plan builds the DaemonSets it writes from their input: those a pass
// only compares are never built.
func TestPlanChangesBuildsWhatItWrites(t *testing.T) {
	g := NewWithT(t)
	in := input(gatewayPod("gw", "node-a", 0), s3gwv1alpha1.PrePullSpec{Enabled: true})
	want := DaemonSet(in)
	d := Desired{NamespacedName: types.NamespacedName{Namespace: want.Namespace, Name: want.Name},
		Hash: want.Annotations[SpecHashAnnotation], Input: in}

	created := PlanChanges([]Desired{d}, nil, nil).Create
	g.Expect(created).To(HaveLen(1))
	g.Expect(created[0]).To(Equal(want))

	stale := daemonSet(want.Namespace, want.Name, "old")
	updated := PlanChanges([]Desired{d}, nil, []*appsv1.DaemonSet{stale}).Update
	g.Expect(updated).To(HaveLen(1))
	g.Expect(updated[0].Spec).To(Equal(want.Spec))
	g.Expect(updated[0].UID).To(Equal(stale.UID))
	g.Expect(created[0]).NotTo(BeIdenticalTo(updated[0]), "each plan builds its own")
}
