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

package nhc

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// adminClient talks to the one envtest control plane of this package,
// whose configuration is testConfig.
var (
	adminClient client.Client
	testConfig  *rest.Config
)

func TestMain(m *testing.M) {
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	adminClient, testConfig = started.Client, started.Config
	code := m.Run()
	_ = started.Env.Stop()
	os.Exit(code)
}

const (
	farAPIVersion = "fence-agents-remediation.medik8s.io/v1alpha1"
	s3gwTemplate  = "S3GWRemediationTemplate"
	farTemplate   = "FenceAgentsRemediationTemplate"
	testLabel     = "nhc.test/fixture"
)

var fixtureCount atomic.Int32

// fixture is one test's namespace, nodes (labelled for its NodeHealthCheck's
// selector) and fake clock.
type fixture struct {
	t     *testing.T
	g     *WithT
	ctx   context.Context
	c     client.Client
	ns    string
	clock *clocktesting.FakeClock
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, g: NewWithT(t), ctx: context.Background(), c: adminClient,
		ns: fmt.Sprintf("f%d", fixtureCount.Add(1)), clock: clocktesting.NewFakeClock(time.Now())}
	f.g.Expect(f.c.Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})).To(Succeed())
	return f
}

// template creates a template of kind s3gwTemplate or farTemplate.
func (f *fixture) template(kind, name string, multi bool) TemplateRef {
	ref := TemplateRef{APIVersion: s3gwv1alpha1.GroupVersion.String(), Kind: kind, Namespace: f.ns, Name: name}
	spec := map[string]any{"release": map[string]any{"strategy": "ControllerDetach"}}
	if kind == farTemplate {
		ref.APIVersion = farAPIVersion
		spec = map[string]any{"agent": "fence_ipmilan"}
	}
	t := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}}}
	t.SetGroupVersionKind(ref.GVK())
	t.SetNamespace(f.ns)
	t.SetName(name)
	if multi {
		t.SetAnnotations(map[string]string{"remediation.medik8s.io/multiple-templates-support": "true"})
	}
	f.g.Expect(f.c.Create(f.ctx, t)).To(Succeed())
	return ref
}

// deleteTemplate deletes a template the fixture created.
func (f *fixture) deleteTemplate(ref TemplateRef) {
	t := &unstructured.Unstructured{}
	t.SetGroupVersionKind(ref.GVK())
	t.SetNamespace(ref.Namespace)
	t.SetName(ref.Name)
	f.g.Expect(f.c.Delete(f.ctx, t)).To(Succeed())
}

func (f *fixture) nodeName(short string) string { return f.ns + "-" + short }

// node creates a node in the fixture's pool, Ready or not since now.
func (f *fixture) node(short string, ready corev1.ConditionStatus, extraLabels ...string) *corev1.Node {
	labels := map[string]string{testLabel: f.ns}
	for _, l := range extraLabels {
		labels[l] = ""
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.nodeName(short), Labels: labels}}
	f.g.Expect(f.c.Create(f.ctx, node)).To(Succeed())
	f.setReady(short, ready)
	return node
}

func (f *fixture) setReady(short string, ready corev1.ConditionStatus) {
	node := f.getNode(short)
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready,
		LastTransitionTime: metav1.NewTime(f.clock.Now())}}
	f.g.Expect(f.c.Status().Update(f.ctx, node)).To(Succeed())
}

func (f *fixture) getNode(short string) *corev1.Node {
	node := &corev1.Node{}
	f.g.Expect(f.c.Get(f.ctx, client.ObjectKey{Name: f.nodeName(short)}, node)).To(Succeed())
	return node
}

// emulator is a NodeHealthCheck over the fixture's nodes with a 30 s
// unhealthy duration and minHealthy 0, adjusted by opts, created as NHC's
// webhook admits it.
func (f *fixture) emulator(name string, opts func(*Emulator)) *Emulator {
	e := &Emulator{Client: f.c, Name: f.ns + "-" + name, Clock: f.clock, UnhealthyDuration: 30 * time.Second,
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{testLabel: f.ns}}, MinHealthy: ptr.To(intstr.FromInt32(0)),
		Templates: NamespacedReader(f.c, f.ns)}
	opts(e)
	f.g.Expect(e.CreateNodeHealthCheck(f.ctx, f.c)).To(Succeed())
	return e
}

// classic is a classic NodeHealthCheck on a new S3GW template "s3gw".
func (f *fixture) classic(name string, opts ...func(*Emulator)) *Emulator {
	ref := f.template(s3gwTemplate, "s3gw", false)
	return f.emulator(name, func(e *Emulator) {
		e.Template = ref
		for _, o := range opts {
			o(e)
		}
	})
}

// twoSteps is an escalating NodeHealthCheck: an S3GW template "first", then
// a FAR template "second", with the given timeouts.
func (f *fixture) twoSteps(name string, first, second time.Duration, opts ...func(*Emulator)) *Emulator {
	steps := []Step{{Template: f.template(s3gwTemplate, "first", false), Order: 1, Timeout: first},
		{Template: f.template(farTemplate, "second", false), Order: 2, Timeout: second}}
	return f.emulator(name, func(e *Emulator) {
		e.Escalation = steps
		for _, o := range opts {
			o(e)
		}
	})
}

// failAndPass adds failed nodes, waits out the unhealthy duration and runs
// a pass.
func (f *fixture) failAndPass(e *Emulator, shorts ...string) {
	for _, short := range shorts {
		f.node(short, corev1.ConditionFalse)
	}
	f.clock.Step(31 * time.Second)
	f.pass(e)
}

// failed fails a new node and returns the CR of our kind the pass created.
func (f *fixture) failed(e *Emulator, short string) *unstructured.Unstructured {
	f.t.Helper()
	f.failAndPass(e, short)
	return f.onlyCR(e, short, "S3GWRemediation")
}

// pass runs one reconcile pass, which must not fail.
func (f *fixture) pass(e *Emulator) time.Duration {
	f.t.Helper()
	requeue, err := e.Reconcile(f.ctx)
	f.g.Expect(err).NotTo(HaveOccurred())
	return requeue
}

// crs lists the NodeHealthCheck's CRs for a node.
func (f *fixture) crs(e *Emulator, short string) []unstructured.Unstructured {
	crs, err := e.ForNode(f.ctx, f.nodeName(short))
	f.g.Expect(err).NotTo(HaveOccurred())
	return crs
}

// onlyCR is the node's one CR of the kind.
func (f *fixture) onlyCR(e *Emulator, short, kind string) *unstructured.Unstructured {
	f.t.Helper()
	var out []unstructured.Unstructured
	for _, cr := range f.crs(e, short) {
		if cr.GetKind() == kind {
			out = append(out, cr)
		}
	}
	f.g.Expect(out).To(HaveLen(1), "one %s for node %s", kind, short)
	return &out[0]
}

// setSucceeded reports Succeeded on a CR, as its remediator would.
func (f *fixture) setSucceeded(cr *unstructured.Unstructured, status metav1.ConditionStatus) {
	f.g.Expect(f.c.Get(f.ctx, client.ObjectKeyFromObject(cr), cr)).To(Succeed())
	f.g.Expect(unstructured.SetNestedSlice(cr.Object, []any{map[string]any{
		"type": "Succeeded", "status": string(status), "reason": "Test", "message": "",
		"lastTransitionTime": f.clock.Now().UTC().Format(time.RFC3339),
	}}, "status", "conditions")).To(Succeed())
	f.g.Expect(f.c.Status().Update(f.ctx, cr)).To(Succeed())
}

func (f *fixture) reread(cr *unstructured.Unstructured) *unstructured.Unstructured {
	f.g.Expect(f.c.Get(f.ctx, client.ObjectKeyFromObject(cr), cr)).To(Succeed())
	return cr
}

func (f *fixture) gone(cr *unstructured.Unstructured) bool {
	err := f.c.Get(f.ctx, client.ObjectKeyFromObject(cr), cr.DeepCopy())
	f.g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err != nil
}

func (f *fixture) leaseGone(e *Emulator, short string) bool {
	_, err := e.Lease(f.ctx, f.nodeName(short))
	f.g.Expect(client.IgnoreNotFound(err)).To(Succeed())
	return err != nil
}

const timedOutAnnotation = "remediation.medik8s.io/nhc-timed-out"

// newCR is a remediation CR named after the node, with the node-name
// annotation only, as a remediator's delegate or an admin would create it.
func newCR(gvk schema.GroupVersionKind, namespace, node string) *unstructured.Unstructured {
	cr := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{}}}
	cr.SetGroupVersionKind(gvk)
	cr.SetNamespace(namespace)
	cr.SetName(node)
	cr.SetAnnotations(map[string]string{"remediation.medik8s.io/node-name": node})
	return cr
}
