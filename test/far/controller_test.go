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

package far

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// TestFencesLikeFAR: a CR in FAR's namespace with the Secret beside it runs
// fence_dummy off for its node; FenceAgentActionSucceeded comes first, then
// FAR deletes every pod on the node and only then reports Succeeded; its
// NoSchedule taint stays until the CR is deleted, and the finalizer goes
// last.
func TestFencesLikeFAR(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.secret(farNamespace, f.ns+"-creds")
	pod := f.pod("victim")
	cr := f.cr(farNamespace, f.dummySpec(ActionOff, f.ns+"-creds"))

	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(remediated))
	g.Expect(os.ReadFile(f.statusFile())).To(BeEquivalentTo("off"), "fence_dummy powered the plug off")
	g.Expect(powered.of(f.node)).To(Equal([]string{ActionOff}))
	g.Expect(apierrors.IsNotFound(adminClient.Get(f.ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}))).To(BeTrue(),
		"ResourceDeletion deleted the node's pods before Succeeded")
	got := f.get(cr)
	g.Expect(got.Finalizers).To(ContainElement(Finalizer))
	g.Expect(f.taints()).To(ContainElement(And(HaveField("Key", NoScheduleTaintKey), HaveField("Effect", corev1.TaintEffectNoSchedule))))
	g.Expect(hasTaint(f.taints(), OutOfServiceTaintOf())).To(BeFalse(), "ResourceDeletion adds no out-of-service taint")
	g.Expect(far.Events()).To(ContainElement(HaveField("Reason", "FenceAgentSucceeded")))

	g.Expect(adminClient.Delete(f.ctx, cr)).To(Succeed())
	g.Eventually(func() *FenceAgentsRemediation { return f.get(cr) }).Should(BeNil())
	g.Expect(hasTaint(f.taints(), RemediationTaint())).To(BeFalse(), "FAR removed its taint before its finalizer")
}

// TestOutOfServiceStrategy: the out-of-service taint is added after the
// agent succeeded and before Succeeded; on deletion FAR removes any taint
// with that key and effect, whoever added it and whatever its value.
func TestOutOfServiceStrategy(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.secret(farNamespace, f.ns+"-creds")
	spec := f.dummySpec(ActionOff, f.ns+"-creds")
	spec.RemediationStrategy = OutOfServiceTaint
	pod := f.pod("kept")
	cr := f.cr(farNamespace, spec)

	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(remediated))
	g.Expect(hasTaint(f.taints(), OutOfServiceTaintOf())).To(BeTrue())
	g.Expect(adminClient.Get(f.ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})).To(Succeed(), "the taint, not FAR, evicts")

	// An admin's taint with the same key and effect but another value.
	node := &corev1.Node{}
	g.Expect(adminClient.Get(f.ctx, client.ObjectKey{Name: f.node}, node)).To(Succeed())
	for i := range node.Spec.Taints {
		if node.Spec.Taints[i].Key == corev1.TaintNodeOutOfService {
			node.Spec.Taints[i].Value = "admin"
		}
	}
	g.Expect(adminClient.Update(f.ctx, node)).To(Succeed())

	g.Expect(adminClient.Delete(f.ctx, cr)).To(Succeed())
	g.Eventually(func() *FenceAgentsRemediation { return f.get(cr) }).Should(BeNil())
	g.Expect(hasTaint(f.taints(), OutOfServiceTaintOf())).To(BeFalse(), "removed by key and effect, whatever its value")
	g.Expect(hasTaint(f.taints(), RemediationTaint())).To(BeFalse())
}

// TestSecretsComeFromTheCRsNamespace: FAR reads a CR's Secrets from the
// CR's own namespace only. A CR in another namespace fences with its Secret
// beside it; a CR whose Secret lives in another namespace (FAR's, or the
// other way round) never does, and never turns False either: FAR retries,
// and NHC's time-out is all that ends it.
func TestSecretsComeFromTheCRsNamespace(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.secret(f.ns, f.ns+"-beside")
	f.secret(farNamespace, f.ns+"-in-far")

	beside := f.cr(f.ns, f.dummySpec(ActionOff, f.ns+"-beside"))
	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(beside) }).Should(Equal(remediated))
	g.Expect(os.WriteFile(f.statusFile(), []byte("on"), 0o600)).To(Succeed())

	elsewhere := f.cr(f.ns, f.dummySpec(ActionOff, f.ns+"-in-far"))
	inFAR := f.cr(farNamespace, f.dummySpec(ActionOff, f.ns+"-beside"))
	for _, cr := range []*unstructured.Unstructured{elsewhere, inFAR} {
		g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(processingOnly))
		g.Consistently(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).
			WithTimeout(2 * time.Second).Should(Equal(processingOnly))
		_, retry, err := BuildParams(f.ctx, far.Client, f.get(cr))
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%v", err)
		g.Expect(retry).To(BeTrue())
	}
	g.Expect(os.ReadFile(f.statusFile())).To(BeEquivalentTo("on"), "no agent ran for them")
	g.Expect(powered.of(f.node)).To(HaveLen(1))
}

// TestFARsOwnRBACStopsFAR: with FAR's own RBAC (a Role for Secrets in its
// namespace, as `make deploy` installs it) FAR's cache cannot list Secrets
// cluster-wide; the first CR that names a Secret, even in FAR's namespace,
// waits for that cache forever, and FAR's one worker with it: a CR after it
// that needs no Secret is not even started. (Seen with the real FAR.)
func TestFARsOwnRBACStopsFAR(t *testing.T) {
	g := NewWithT(t)
	own, err := testenv.Start()
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = own.Env.Stop() }()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	c := own.Client
	g.Expect(c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: farNamespace}})).To(Succeed())
	g.Expect(InstallRBAC(ctx, c, farNamespace, SecretsInFARNamespace)).To(Succeed())
	// The worker is stalled once it asks the cache for a Secret it may not
	// list: only then is the second CR created, so that it cannot be
	// queued ahead of the first CR's fencing pass.
	asks := &secretAsks{asked: make(chan struct{})}
	_, err = startFAR(ctx, own.Config, nil, func(c client.Client) client.Client {
		asks.Client = c
		return asks
	})
	g.Expect(err).NotTo(HaveOccurred())

	f := &fixture{t: t, g: g, ctx: ctx, node: "worker-1", dir: t.TempDir()}
	g.Expect(c.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.node}})).To(Succeed())
	g.Expect(c.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: farNamespace, Name: "creds"},
		StringData: map[string]string{"--status-file": f.dir + "/{{.NodeName}}"}})).To(Succeed())
	first := createIn(g, c, f, f.dummySpec(ActionOff, "creds"))
	conditions := func(u *unstructured.Unstructured) []metav1.Condition {
		got := u.DeepCopy()
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(u), got)).To(Succeed())
		obj, err := fromUnstructured(got)
		g.Expect(err).NotTo(HaveOccurred())
		return obj.Status.Conditions
	}
	g.Eventually(func() []metav1.Condition { return conditions(first) }).WithTimeout(30 * time.Second).Should(HaveLen(3))
	g.Eventually(asks.asked).WithTimeout(30 * time.Second).Should(BeClosed())
	second := createIn(g, c, f, Spec{Agent: "fence_dummy", SharedParameters: map[string]string{"--type": "file",
		"--action": ActionOff, "--status-file": f.dir + "/{{.NodeName}}"}})
	// The second CR needs no Secret: a free worker fences it within a
	// second. The worker, stalled on the first CR's Secret, never does.
	g.Consistently(func() []metav1.Condition { return conditions(second) }).WithTimeout(5*time.Second).ShouldNot(
		ContainElement(And(HaveField("Type", FenceAgentActionSucceededType), Not(HaveField("Status", metav1.ConditionUnknown)))),
		"FAR's worker waits on the Secret cache")
	g.Expect(conditions(first)).To(ContainElement(And(HaveField("Type", FenceAgentActionSucceededType),
		HaveField("Status", metav1.ConditionUnknown))), "never fenced")
	_, err = os.Stat(filepath.Join(f.dir, f.node))
	g.Expect(os.IsNotExist(err)).To(BeTrue(), "no agent ran")
}

// createIn creates a CR for the fixture's node in FAR's namespace with c.
func createIn(g *WithT, c client.Client, f *fixture, spec Spec) *unstructured.Unstructured {
	obj := &FenceAgentsRemediation{Spec: spec}
	obj.Namespace, obj.GenerateName = farNamespace, f.node+"-"
	obj.Annotations = map[string]string{"remediation.medik8s.io/node-name": f.node}
	u, err := obj.toUnstructured()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(c.Create(f.ctx, u)).To(Succeed())
	return u
}

// TestFailedAgentIsNotRetried: an agent that fails every attempt sets all
// three conditions False once, after retrycount attempts, and FAR never
// runs it again for that CR.
func TestFailedAgentIsNotRetried(t *testing.T) {
	f := newFixture(t)
	g := f.g
	spec := Spec{Agent: "fence_dummy", RetryCount: 2, RetryInterval: &metav1.Duration{Duration: 100 * time.Millisecond},
		SharedParameters: map[string]string{"--type": "fail", "--plug": "{{.NodeName}}", "--action": ActionOff, "--power-timeout": "1"}}
	cr := f.cr(farNamespace, spec)

	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(allFalse))
	got := f.get(cr)
	g.Expect(got.Status.Conditions).To(HaveEach(HaveField("Reason", string(AgentFailed))))
	g.Expect(powered.of(f.node)).To(BeEmpty())
	executed := func() int {
		n := 0
		for _, e := range far.Events() {
			if e.Reason == "FenceAgentExecuted" && strings.HasSuffix(e.Object, "/"+cr.GetName()) {
				n++
			}
		}
		return n
	}
	g.Expect(executed()).To(Equal(1))

	// Any later pass leaves it alone.
	touch(f, cr)
	g.Consistently(executed).WithTimeout(2 * time.Second).Should(Equal(1))
	g.Expect(f.conditions(cr)).To(Equal(allFalse))
}

// TestAgentTimeout: an attempt longer than the time-out is killed and
// retried; FAR classifies the killed agent (an exec exit error, not a
// context error) as FenceAgentFailed, not FenceAgentTimedOut.
func TestAgentTimeout(t *testing.T) {
	g := NewWithT(t)
	var e Executor
	out, cancelled := e.runWithRetry(t.Context(), []string{"fence_dummy", "--type=file", "--action=off", "--delay=30",
		"--status-file=" + t.TempDir() + "/x"}, 2, 10*time.Millisecond, 500*time.Millisecond)
	g.Expect(cancelled).To(BeFalse())
	g.Expect(out.Attempts).To(HaveLen(2))
	g.Expect(out.Err).To(MatchError(ContainSubstring("signal: killed")))
	g.Expect(out.TimedOut).To(BeFalse(), "FAR reports FenceAgentFailed for a killed agent")
}

// TestNodeNameAnnotationWins: the node is the node-name annotation's, the
// CR's name only without it.
func TestNodeNameAnnotationWins(t *testing.T) {
	g := NewWithT(t)
	cr := &FenceAgentsRemediation{}
	cr.Name = "worker-1-x7k2p"
	g.Expect(NodeName(cr)).To(Equal("worker-1-x7k2p"))
	cr.Annotations = map[string]string{"remediation.medik8s.io/node-name": "worker-1"}
	g.Expect(NodeName(cr)).To(Equal("worker-1"))
}

// TestNodeNotFound: a CR for no node turns False at once and gets no
// finalizer.
func TestNodeNotFound(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.node = "no-such-node"
	cr := f.cr(farNamespace, f.dummySpec(ActionOff, "unused"))

	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(allFalse))
	got := f.get(cr)
	g.Expect(got.Status.Conditions).To(HaveEach(HaveField("Reason", string(NodeNotFound))))
	g.Expect(got.Finalizers).To(BeEmpty())
}

// TestNHCTimeOutStopsFAR: NHC's timed-out annotation turns every condition
// False, also on a CR that had succeeded.
func TestNHCTimeOutStopsFAR(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.secret(farNamespace, f.ns+"-creds")
	cr := f.cr(farNamespace, f.dummySpec(ActionOff, f.ns+"-creds"))
	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(remediated))

	g.Expect(adminClient.Get(f.ctx, client.ObjectKeyFromObject(cr), cr)).To(Succeed())
	anns := cr.GetAnnotations()
	anns["remediation.medik8s.io/nhc-timed-out"] = time.Now().UTC().Format(time.RFC3339)
	cr.SetAnnotations(anns)
	g.Expect(adminClient.Update(f.ctx, cr)).To(Succeed())

	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(allFalse))
	got := f.get(cr)
	for _, t := range []string{FenceAgentActionSucceededType, SucceededType} {
		g.Expect(meta.FindStatusCondition(got.Status.Conditions, t).Reason).To(Equal(string(InterruptedByNHC)))
	}
	g.Expect(meta.FindStatusCondition(got.Status.Conditions, ProcessingType).Reason).To(Equal(string(FinishedSuccessfully)),
		"Processing was False already, so it keeps its reason")
}

// TestRefusedSpecStaysProcessing: a spec without a node-specific parameter
// is refused when FAR builds the command; the controller neither runs the
// agent nor reports anything but Processing.
func TestRefusedSpecStaysProcessing(t *testing.T) {
	f := newFixture(t)
	g := f.g
	cr := f.cr(farNamespace, Spec{Agent: "fence_dummy", SharedParameters: map[string]string{"--type": "file", "--action": ActionOff}})
	g.Eventually(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).Should(Equal(processingOnly))
	g.Consistently(func() [3]metav1.ConditionStatus { return f.conditions(cr) }).WithTimeout(2 * time.Second).Should(Equal(processingOnly))
	g.Expect(powered.of(f.node)).To(BeEmpty())
}

// touch changes a label on the CR, so FAR reconciles it again.
func touch(f *fixture, cr *unstructured.Unstructured) {
	f.t.Helper()
	f.g.Expect(adminClient.Get(f.ctx, client.ObjectKeyFromObject(cr), cr)).To(Succeed())
	cr.SetLabels(map[string]string{"touched": time.Now().Format("150405.000000")})
	f.g.Expect(adminClient.Update(f.ctx, cr)).To(Succeed())
}

// secretAsks closes asked when the client is first asked for a Secret.
type secretAsks struct {
	client.Client
	once  sync.Once
	asked chan struct{}
}

func (s *secretAsks) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Secret); ok {
		s.once.Do(func() { close(s.asked) })
	}
	return s.Client.Get(ctx, key, obj, opts...)
}
