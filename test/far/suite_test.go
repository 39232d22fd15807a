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
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

// The suite runs one FAR stand-in against envtest, acting as FAR's
// ServiceAccount with FAR's RBAC as OLM installs it, and runs the real
// fence_dummy from Debian's fence-agents.

const farNamespace = "fence-agents-remediation"

var (
	adminClient client.Client
	far         *Controller
	powered     = &powerLog{}
	fixtures    atomic.Int32
)

func TestMain(m *testing.M) {
	if err := RequireAgent("fence_dummy"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	started, err := testenv.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code, err := run(started, m)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	_ = started.Env.Stop()
	os.Exit(code)
}

func run(started *testenv.Started, m *testing.M) (int, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	adminClient = started.Client
	if err := adminClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: farNamespace}}); err != nil {
		return 0, err
	}
	if err := InstallRBAC(ctx, adminClient, farNamespace, SecretsClusterWide); err != nil {
		return 0, err
	}
	if _, err := startFAR(ctx, started.Config, powered.record, nil); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// startFAR runs a FAR stand-in until ctx ends; the suite's is far. wrap,
// when set, wraps the client its controller reads and writes with.
func startFAR(ctx context.Context, cfg *rest.Config, power func(context.Context, string, string),
	wrap func(client.Client) client.Client) (*Controller, error) {
	mgr, err := NewManager(cfg, farNamespace, logr.Discard())
	if err != nil {
		return nil, err
	}
	c := &Controller{Client: mgr.GetClient(), Power: power}
	if wrap != nil {
		c.Client = wrap(c.Client)
	}
	if err := c.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if far == nil {
		far = c
	}
	go func() { _ = mgr.Start(ctx) }()
	return c, nil
}

// powerLog records what the agents did to the machines.
type powerLog struct {
	mu      sync.Mutex
	actions map[string][]string
}

func (p *powerLog) record(_ context.Context, node, action string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.actions == nil {
		p.actions = map[string][]string{}
	}
	p.actions[node] = append(p.actions[node], action)
}

func (p *powerLog) of(node string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.actions[node])
}

// fixture is one test's namespace, node and fence_dummy status directory.
type fixture struct {
	t    *testing.T
	g    *WithT
	ctx  context.Context
	ns   string
	node string
	dir  string
}

func newFixture(t *testing.T) *fixture {
	n := fixtures.Add(1)
	f := &fixture{t: t, g: NewWithT(t), ctx: context.Background(), ns: fmt.Sprintf("far-%d", n),
		node: fmt.Sprintf("far-node-%d", n), dir: t.TempDir()}
	f.g.SetDefaultEventuallyTimeout(30 * time.Second)
	f.g.SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	f.create(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}})
	f.create(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: f.node}})
	// The machine is on: fence_dummy reads a missing status file as off.
	f.g.Expect(os.WriteFile(f.statusFile(), []byte("on"), 0o600)).To(Succeed())
	return f
}

func (f *fixture) create(obj client.Object) {
	f.t.Helper()
	f.g.Expect(adminClient.Create(f.ctx, obj)).To(Succeed())
}

// pod puts a pod on the fixture's node.
func (f *fixture) pod(name string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: corev1.PodSpec{NodeName: f.node, Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	f.create(p)
	return p
}

// statusFile is fence_dummy's power status file for the node.
func (f *fixture) statusFile() string { return filepath.Join(f.dir, f.node+".status") }

// dummySpec runs fence_dummy with type file: the status file comes from the
// shared Secret (as credentials would), templated per node, the action and
// plug from the shared parameters.
func (f *fixture) dummySpec(action, secret string) Spec {
	return Spec{
		Agent:            "fence_dummy",
		SharedParameters: map[string]string{"--type": "file", "--action": action, "--plug": "{{.NodeName}}"},
		SharedSecretName: ptr.To(secret), RetryCount: 2,
		RetryInterval: &metav1.Duration{Duration: 100 * time.Millisecond},
	}
}

// secret creates the shared Secret holding the status file path.
func (f *fixture) secret(namespace, name string) {
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		StringData: map[string]string{"--status-file": filepath.Join(f.dir, "{{.NodeName}}.status")}})
}

// cr creates a FenceAgentsRemediation for the fixture's node the way NHC
// does for a template with multiple-templates support: generateName and
// the node-name annotation.
func (f *fixture) cr(namespace string, spec Spec) *unstructured.Unstructured {
	obj := &FenceAgentsRemediation{Spec: spec}
	obj.Namespace, obj.GenerateName = namespace, f.node+"-"
	obj.Annotations = map[string]string{"remediation.medik8s.io/node-name": f.node}
	u, err := obj.toUnstructured()
	f.g.Expect(err).NotTo(HaveOccurred())
	f.create(u)
	return u
}

// get reads the CR back; nil once it is gone.
func (f *fixture) get(u *unstructured.Unstructured) *FenceAgentsRemediation {
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(GVK)
	if err := adminClient.Get(f.ctx, client.ObjectKeyFromObject(u), got); err != nil {
		f.g.Expect(client.IgnoreNotFound(err)).To(Succeed())
		return nil
	}
	obj, err := fromUnstructured(got)
	f.g.Expect(err).NotTo(HaveOccurred())
	return obj
}

// conditions returns the CR's Processing, FenceAgentActionSucceeded and
// Succeeded statuses.
func (f *fixture) conditions(u *unstructured.Unstructured) [3]metav1.ConditionStatus {
	var out [3]metav1.ConditionStatus
	obj := f.get(u)
	if obj == nil {
		return out
	}
	for i, t := range []string{ProcessingType, FenceAgentActionSucceededType, SucceededType} {
		if c := meta.FindStatusCondition(obj.Status.Conditions, t); c != nil {
			out[i] = c.Status
		}
	}
	return out
}

func (f *fixture) taints() []corev1.Taint {
	n := &corev1.Node{}
	f.g.Expect(adminClient.Get(f.ctx, client.ObjectKey{Name: f.node}, n)).To(Succeed())
	return n.Spec.Taints
}

func hasTaint(taints []corev1.Taint, want corev1.Taint) bool {
	return slices.ContainsFunc(taints, func(t corev1.Taint) bool { return t.MatchTaint(&want) })
}

var (
	processingOnly = [3]metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionUnknown, metav1.ConditionUnknown}
	allFalse       = [3]metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse}
	remediated     = [3]metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionTrue, metav1.ConditionTrue}
)
