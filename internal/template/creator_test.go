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

package template

import (
	"context"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// TestCreatorMakesTheDefaultTemplateOnce: at start-up the default template
// appears in the manager's namespace with the label, the annotation and the
// default spec; a later start keeps a user's edits and recreates it only if
// it was deleted.
func TestCreatorMakesTheDefaultTemplateOnce(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	started, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = started.Env.Stop() })
	c := started.Client
	const ns = "s3gw-remediation-system"
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})).To(Succeed())
	creator := &Creator{Client: c, Namespace: ns, Log: logf.Log, Backoff: wait.Backoff{Duration: 10 * time.Millisecond, Steps: 3}}
	g.Expect(creator.NeedLeaderElection()).To(BeFalse())

	g.Expect(creator.Start(ctx)).To(Succeed())
	got := &s3gwv1alpha1.S3GWRemediationTemplate{}
	key := client.ObjectKey{Namespace: ns, Name: "s3gw-remediation-default-template"}
	g.Expect(c.Get(ctx, key, got)).To(Succeed())
	g.Expect(got.Labels).To(HaveKeyWithValue("remediation.medik8s.io/default-template", "true"))
	g.Expect(got.Annotations).To(HaveKeyWithValue("remediation.medik8s.io/multiple-templates-support", "true"))
	spec := got.Spec.Template.Spec
	g.Expect(spec.Fencing.Mode).To(Equal(s3gwv1alpha1.FencingModeRequireEvidence), "the CRD's defaults")
	g.Expect(spec.Release.Strategy).To(Equal(s3gwv1alpha1.ReleaseControllerDetach))
	g.Expect(got.Spec.PrePull).To(Equal(s3gwv1alpha1.PrePullSpec{Enabled: true, Mechanism: s3gwv1alpha1.PrePullInitContainer}),
		"images pre-pulled, as in the chart's default template")
	g.Expect(spec.WorkloadSelector).NotTo(BeNil())

	// A user's edit survives the next start.
	got.Spec.Template.Spec.Release.Strategy = s3gwv1alpha1.ReleaseDeleteVolumeAttachment
	delete(got.Labels, "remediation.medik8s.io/default-template")
	g.Expect(c.Update(ctx, got)).To(Succeed())
	g.Expect(creator.Start(ctx)).To(Succeed())
	g.Expect(c.Get(ctx, key, got)).To(Succeed())
	g.Expect(got.Spec.Template.Spec.Release.Strategy).To(Equal(s3gwv1alpha1.ReleaseDeleteVolumeAttachment))
	g.Expect(got.Labels).NotTo(HaveKey("remediation.medik8s.io/default-template"))

	// Deleted, it comes back at the next start.
	g.Expect(c.Delete(ctx, got)).To(Succeed())
	g.Expect(creator.Start(ctx)).To(Succeed())
	g.Expect(c.Get(ctx, key, got)).To(Succeed())
	g.Expect(got.Spec.Template.Spec.Release.Strategy).To(Equal(s3gwv1alpha1.ReleaseControllerDetach))
}

// TestCreatorGivesUpWithoutFailingTheManager: a namespace that does not
// exist makes every attempt fail; Start still returns nil.
func TestCreatorGivesUpWithoutFailingTheManager(t *testing.T) {
	g := NewWithT(t)
	started, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = started.Env.Stop() })
	creator := &Creator{Client: started.Client, Namespace: "missing", Log: logf.Log,
		Backoff: wait.Backoff{Duration: 10 * time.Millisecond, Steps: 2}}
	g.Expect(creator.Start(context.Background())).To(Succeed())
	g.Expect(started.Client.Get(context.Background(), client.ObjectKey{Namespace: "missing", Name: DefaultName},
		&s3gwv1alpha1.S3GWRemediationTemplate{})).NotTo(Succeed())
}
