//go:build e2e

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

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/medik8s/common/pkg/events"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
	"github.com/s3gw-tech/s3gw-remediation/test/attachrules"
	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
	"github.com/s3gw-tech/s3gw-remediation/test/harness"
	"github.com/s3gw-tech/s3gw-remediation/test/nhc"
)

// The manager as the Deployment runs it: processes built from cmd/manager,
// authenticated as its ServiceAccount, with its generated RBAC and the
// admission policies of config/policy. The in-process operator of the other
// specs is stopped meanwhile.
var _ = Describe("The manager as processes", Ordered, func() {
	BeforeAll(func() {
		Expect(env.StopInProcessOperator()).To(Succeed())
		DeferCleanup(func() { Expect(env.StartInProcessOperator(suiteCtx)).To(Succeed()) })
	})

	It("survives the death of the leader's node: the standby takes over and the remediation completes", func(ctx SpecContext) {
		s := newScenario(ctx, "leader", 2)
		managers := startManagers(ctx, "leader", harness.ProcessOptions{LeaderElection: true}, 2)
		em := s.remediate(ctx, s3gwv1alpha1.S3GWRemediationSpec{})

		By("Failing s3gw's node while the leader survives")
		survives := s.gateway(ctx, "survives", s.victims[0], s.spare)
		leader, err := harness.WaitLeader(ctx, time.Minute, managers...)
		Expect(err).NotTo(HaveOccurred())
		base := fail(ctx, survives)[0]
		Expect(base.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(base.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(base)
		expectMoved(ctx, base, s.spare)
		expectDoneOnce(ctx, base, s3gwv1alpha1.ReleaseControllerDetach, 0, false)
		recoverAndExpectCleanup(ctx, base, em)

		By("Failing s3gw's node and, at the same moment, the node of the leader " + leader.Name)
		dies := s.gateway(ctx, "dies", s.victims[1], s.spare)
		leader, err = harness.WaitLeader(ctx, time.Minute, managers...)
		Expect(err).NotTo(HaveOccurred())
		standby := managers[0]
		if standby == leader {
			standby = managers[1]
		}
		before := leaseOf(ctx)
		r := fail(ctx, dies)[0]
		killed := time.Now()
		Expect(env.FailOperatorNode(ctx, leader)).To(Succeed())
		Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
		Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
		report(r)
		expectMoved(ctx, r, s.spare)
		expectDoneOnce(ctx, r, s3gwv1alpha1.ReleaseControllerDetach, 0, false)

		after := leaseOf(ctx)
		Expect(after.Spec.HolderIdentity).NotTo(Equal(before.Spec.HolderIdentity), "the Lease changed hands")
		Expect(harness.WaitLeader(ctx, 10*time.Second, standby)).To(Equal(standby))
		takeover := after.Spec.AcquireTime.Sub(killed)
		baseRTO, _ := base.Seen(harness.ReplacementReady)
		rto, _ := r.Seen(harness.ReplacementReady)
		baseDone, _ := base.Seen(harness.RemediationSucceeded)
		done, _ := r.Seen(harness.RemediationSucceeded)
		figures := fmt.Sprintf("leader failover (lease %ds): takeover %s after the leader was killed; "+
			"replacement Ready %s after the node failure with the leader killed vs %s with the leader alive (added RTO %s); "+
			"Succeeded %s vs %s",
			*before.Spec.LeaseDurationSeconds, harness.FormatDuration(takeover),
			harness.FormatDuration(rto), harness.FormatDuration(baseRTO), signed(rto-baseRTO),
			harness.FormatDuration(done), harness.FormatDuration(baseDone))
		AddReportEntry("leader failover", figures)
		By(figures)

		recoverAndExpectCleanup(ctx, r, em)
		Expect(env.Cluster.RecoverNode(ctx, leader.Node)).To(Succeed())
		Expect(leader.Start(ctx)).To(Succeed())
	}, SpecTimeout(specTimeout))

	It("completes every remediation exactly once while the manager is killed at random moments", func(ctx SpecContext) {
		const wantKills = 20
		strategies := []s3gwv1alpha1.ReleaseStrategy{
			s3gwv1alpha1.ReleaseControllerDetach, s3gwv1alpha1.ReleaseDeleteVolumeAttachment, s3gwv1alpha1.ReleaseOutOfServiceTaint,
		}
		// Without leader election a killed manager restarts at once; the
		// leader handover has a spec of its own.
		manager := startManagers(ctx, "crash", harness.ProcessOptions{}, 1)[0]
		pools := map[s3gwv1alpha1.ReleaseStrategy]*scenario{}
		emulators := map[s3gwv1alpha1.ReleaseStrategy]*nhc.Emulator{}
		for _, strategy := range strategies {
			s := newScenario(ctx, "crash-"+strings.ToLower(string(strategy)), 1)
			spec := s3gwv1alpha1.S3GWRemediationSpec{Release: s3gwv1alpha1.ReleaseSpec{Strategy: strategy}}
			if strategy == s3gwv1alpha1.ReleaseOutOfServiceTaint {
				fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Namespace: harness.TemplateNamespace, Name: "far-" + s.name})
				Expect(err).NotTo(HaveOccurred())
				spec.Fencing = s3gwv1alpha1.FencingSpec{StorageIsolation: ptr.To(false), Delegate: harness.FARDelegate(fence)}
			}
			pools[strategy], emulators[strategy] = s, s.remediate(ctx, spec)
		}

		k := startKiller(manager, slices.Collect(maps.Values(pools)))
		defer k.stop()
		unsure := 0
		for round := 1; k.count() < wantKills; round++ {
			Expect(round).To(BeNumerically("<=", 3), "%d kills after %d rounds", k.count(), round-1)
			By(fmt.Sprintf("Round %d: failing one node per release strategy, %d kills so far", round, k.count()))
			gateways := make([]*harness.Gateway, 0, len(strategies))
			for _, strategy := range strategies {
				s := pools[strategy]
				gateways = append(gateways, s.gateway(ctx, fmt.Sprintf("round%d", round), s.victims[0], s.spare))
			}
			runs := fail(ctx, gateways...)
			for i, r := range runs {
				Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
				Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
				report(r)
				expectMoved(ctx, r, pools[strategies[i]].spare)
			}
			for i, r := range runs {
				recoverAndExpectCleanup(ctx, r, emulators[strategies[i]])
			}
			for i, r := range runs {
				unsure += expectDoneOnce(ctx, r, strategies[i], k.count(), strategies[i] == s3gwv1alpha1.ReleaseOutOfServiceTaint)
			}
		}
		k.stop()
		summary := fmt.Sprintf("%s; %d writes of the remediations cut short by a kill (stored or not, the manager could not know)",
			k.summary(), unsure)
		AddReportEntry("crash loop", summary)
		By(summary)
	}, SpecTimeout(3*specTimeout))

	DescribeTable("completes a remediation exactly once across a restart of",
		func(ctx SpecContext, component string) {
			name := "restart-" + strings.ToLower(strings.TrimPrefix(component, "kube-"))
			s := newScenario(ctx, name, 1)
			managers := startManagers(ctx, name, harness.ProcessOptions{LeaderElection: true}, 2)
			// FAR fences in a step of its own, its template and Secret in
			// FAR's namespace; NHC creates the S3GWRemediation when that step
			// times out, and the restart hits it with everything left to do.
			// (Not a delegate: the manager finds its delegate through its cache
			// and creates it with generateName, so a pass while the cache is
			// behind, as after this restart, creates another; #17 item 3.)
			fence, err := env.CreateFARTemplate(ctx, harness.FARTemplate{Name: s.name})
			Expect(err).NotTo(HaveOccurred())
			em, err := env.EnableRemediation(ctx, harness.Remediation{Name: s.name, NodeSelector: map[string]string{poolLabel: s.name},
				Spec: s3gwv1alpha1.S3GWRemediationSpec{Fencing: s3gwv1alpha1.FencingSpec{
					StorageIsolation: ptr.To(false), Remediators: []s3gwv1alpha1.RemediatorEvidence{harness.FARRemediator()}}},
				FirstSteps: []nhc.Step{{Template: fence, Order: 1, Timeout: farStepTimeout}}})
			Expect(err).NotTo(HaveOccurred())
			g := s.gateway(ctx, "demo", s.victims[0], s.spare)
			_, err = harness.WaitLeader(ctx, time.Minute, managers...)
			Expect(err).NotTo(HaveOccurred())

			r := fail(ctx, g)[0]
			Expect(r.Wait(ctx, harness.RemediationCreated, farStepTimeout+crDeadline)).To(Succeed())
			By("Killing and restarting " + component)
			down, err := env.Cluster.RestartComponents(ctx, 0, component)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Wait(ctx, harness.ReplacementReady, recoveryDeadline)).To(Succeed())
			Expect(r.Wait(ctx, harness.RemediationSucceeded, crDeadline)).To(Succeed())
			report(r)
			rem := expectMovedAfterFAR(ctx, r, s.spare)
			Expect(rem.Status.FencingEvidence).To(ConsistOf(HavePrefix(harness.FARKind + "/" + harness.FARNamespace + "/" + r.Node + "-")))
			// A manager that lost its Lease while etcd was away exits: for
			// the events it may not have sent, that is a kill.
			exits := 0
			for _, m := range managers {
				exits += m.SelfExits()
			}
			expectDoneOnce(ctx, r, s3gwv1alpha1.ReleaseControllerDetach, exits, true)
			created, _ := r.Seen(harness.RemediationCreated)
			ready, _ := r.Seen(harness.ReplacementReady)
			figures := fmt.Sprintf("%s restart: killed %s after the node failure, unavailable for %s; replacement Ready at %s; "+
				"manager processes that exited on their own: %d", component, harness.FormatDuration(created),
				harness.FormatDuration(down), harness.FormatDuration(ready), exits)
			AddReportEntry(component+" restart", figures)
			By(figures)
			recoverAndExpectCleanup(ctx, r, em)
		},
		Entry("kube-apiserver", cluster.APIServer, SpecTimeout(specTimeout)),
		Entry("etcd", cluster.Etcd, SpecTimeout(specTimeout)),
	)
})

// startManagers starts n manager processes, each on a node of its own in a
// zone of its own, and stops them when the spec ends.
func startManagers(ctx context.Context, name string, opts harness.ProcessOptions, n int) []*harness.OperatorProcess {
	labels := map[string]string{harness.ZoneLabel: "zone-" + name + "-managers", "node-role.kubernetes.io/control-plane": ""}
	out := make([]*harness.OperatorProcess, 0, n)
	for i := range n {
		node := fmt.Sprintf("%s-manager-%c", name, 'a'+i)
		Expect(env.AddNodes(ctx, labels, node)).To(Succeed())
		p, err := env.StartOperatorProcess(ctx, fmt.Sprintf("%s-%c", name, 'a'+i), node, opts)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(p.Stop)
		out = append(out, p)
	}
	return out
}

func leaseOf(ctx context.Context) *coordinationv1.Lease {
	var lease coordinationv1.Lease
	Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: harness.ManagerNamespace, Name: harness.LeaderElectionID}, &lease)).To(Succeed())
	return &lease
}

func signed(d time.Duration) string {
	if d < 0 {
		return "-" + harness.FormatDuration(-d)
	}
	return "+" + harness.FormatDuration(d)
}

// expectDoneOnce checks, from the API server's audit log, that the manager
// did each write of the remediation exactly once since the node failed: one
// force-delete of the old pod, one release by the strategy's route, the
// out-of-service taint added and removed once (OutOfServiceTaint) or never
// touched; and that the CR got a RemediationStarted and a
// RemediationFinished event, and no out-of-service taint is left behind.
// Events are best effort (docs/safety.md §6): a kill before the recorder
// sent a queued event loses it, and so does an Event create kube-apiserver
// answers with an error (etcd restarting): client-go never retries it. So
// with kills or such an answer the count is only bounded (at most one more
// per kill); without, it is one.
//
// A write cut short by a SIGKILL ends in the audit log without a definite
// answer (Unsure) and may or may not have been stored; the manager, which
// never learnt the outcome, must then find the work done or do it once
// more. So: at most the expected number of writes succeeded for sure, and
// with the unsure ones there were at least as many. It returns the number
// of unsure writes.
//
// A node FAR fenced is different: FAR deletes every pod on it (its
// ResourceDeletion strategy) the moment its agent succeeded, the moment the
// manager sees the evidence too, so the manager's force-delete may find the
// pod gone; it must still not delete it twice.
func expectDoneOnce(ctx context.Context, r *harness.Run, strategy s3gwv1alpha1.ReleaseStrategy, kills int, fencedByFAR bool) int {
	writes, err := env.ManagerWrites()
	Expect(err).NotTo(HaveOccurred())
	type tally struct{ sure, unsure int }
	count := func(verb, resource, subresource, namespace, name string) tally {
		var t tally
		for _, w := range writes {
			if w.At.Before(r.FailedAt) || w.Verb != verb || w.Resource != resource || w.Subresource != subresource ||
				w.Namespace != namespace || w.Name != name {
				continue
			}
			if w.Unsure {
				t.unsure++
			} else {
				t.sure++
			}
		}
		return t
	}
	va := attachrules.AttachmentName(r.Gateway.Volume.Name, r.Node)
	want := map[string]int{"pod force-deleted": 1, "volumesInUse patched": 0, "VolumeAttachment deleted": 0, "node patched (taint)": 0}
	switch strategy {
	case s3gwv1alpha1.ReleaseControllerDetach:
		want["volumesInUse patched"] = 1
	case s3gwv1alpha1.ReleaseDeleteVolumeAttachment:
		want["VolumeAttachment deleted"] = 1
	case s3gwv1alpha1.ReleaseOutOfServiceTaint:
		want["node patched (taint)"] = 2 // added, then removed once the node recovered
	}
	got := map[string]tally{
		"pod force-deleted":        count("delete", "pods", "", r.OldPod.Namespace, r.OldPod.Name),
		"volumesInUse patched":     count("patch", "nodes", "status", "", r.Node),
		"VolumeAttachment deleted": count("delete", "volumeattachments", "", "", va),
		"node patched (taint)":     count("patch", "nodes", "", "", r.Node),
	}
	unsure := 0
	for what, n := range want {
		t := got[what]
		unsure += t.unsure
		Expect(t.sure).To(BeNumerically("<=", n), "%s for %s (%s): %d for sure, %d unsure", what, r, strategy, t.sure, t.unsure)
		switch {
		case n == 0:
			Expect(t.unsure).To(BeZero(), "%s for %s (%s)", what, r, strategy)
		case what == "pod force-deleted" && fencedByFAR:
			// FAR may have deleted it first.
		default:
			Expect(t.sure+t.unsure).To(BeNumerically(">=", n), "%s for %s (%s): %d for sure, %d unsure", what, r, strategy, t.sure, t.unsure)
		}
	}

	ns, name, _ := strings.Cut(r.Remediation(), "/")
	// Events are sent asynchronously.
	for _, reason := range []string{events.RemediationStartedEventReason, events.RemediationFinishedEventReason} {
		dropped, err := env.ManagerEventsDropped(ns, name, reason)
		Expect(err).NotTo(HaveOccurred())
		if kills == 0 && len(dropped) == 0 {
			Eventually(ctx, func() int { return eventCount(ctx, ns, name, reason) }).WithTimeout(10*time.Second).
				Should(Equal(1), "%s events of %s", reason, name)
			continue
		}
		// An event kube-apiserver refused (etcd away) is lost or was
		// stored anyway.
		Consistently(ctx, func() int { return eventCount(ctx, ns, name, reason) }).WithTimeout(2*time.Second).
			Should(BeNumerically("<=", 1+kills), "%s events of %s (%d kills, refused: %v)", reason, name, kills, dropped)
	}
	if strategy != s3gwv1alpha1.ReleaseOutOfServiceTaint || remediationFor(ctx, r.Node) == nil {
		Expect(nodeHasTaint(ctx, r.Node, outOfServiceTaint)).To(BeFalse(), "no out-of-service taint left on %s", r.Node)
	}
	return unsure
}

// eventCount counts the occurrences of an event on the CR, across Event
// objects and their series.
func eventCount(ctx context.Context, namespace, name, reason string) int {
	var list corev1.EventList
	Expect(env.Client.List(ctx, &list, client.InNamespace(namespace))).To(Succeed())
	n := 0
	for _, ev := range list.Items {
		if ev.InvolvedObject.Name != name || ev.Reason != reason {
			continue
		}
		switch {
		case ev.Series != nil && ev.Series.Count > 0:
			n += int(ev.Series.Count)
		case ev.Count > 0:
			n += int(ev.Count)
		default:
			n++
		}
	}
	return n
}

// killer SIGKILLs the manager at random moments while a remediation of its
// pools exists, and starts it again at once, as the kubelet restarts a
// crashed container. A kill comes 0–150 ms after a remediation appears,
// changes phase or is deleted, so that the next pass is often cut short,
// and otherwise after 0.2–2.5 s of uptime.
type killer struct {
	manager *harness.OperatorProcess
	pools   []*scenario
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once

	mu    sync.Mutex
	kills []kill
}

// kill is one SIGKILL: after how long the process had run, and the phase
// of each remediation under way.
type kill struct {
	uptime time.Duration
	phases []string
}

func startKiller(manager *harness.OperatorProcess, pools []*scenario) *killer {
	k := &killer{manager: manager, pools: pools, done: make(chan struct{}), stopped: make(chan struct{})}
	seed := uint64(GinkgoRandomSeed())
	GinkgoWriter.Printf("Killer seed %d\n", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	go func() {
		defer GinkgoRecover()
		defer close(k.stopped)
		ctx := context.Background()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var seen map[types.UID]string
		var due time.Time
		for {
			select {
			case <-k.done:
				return
			case <-tick.C:
			}
			states := k.states(ctx)
			if len(states) == 0 {
				seen, due = nil, time.Time{}
				continue // nothing under way
			}
			now := time.Now()
			if !maps.Equal(states, seen) {
				if soon := now.Add(between(0, 150*time.Millisecond)); due.IsZero() || soon.Before(due) {
					due = soon
				}
			}
			seen = states
			if due.IsZero() {
				due = now.Add(between(200*time.Millisecond, 2500*time.Millisecond))
			}
			if now.Before(due) {
				continue
			}
			uptime := k.manager.Kill()
			k.mu.Lock()
			k.kills = append(k.kills, kill{uptime: uptime, phases: slices.Collect(maps.Values(states))})
			k.mu.Unlock()
			due = time.Time{}
			if err := k.manager.Start(ctx); err != nil {
				Fail(fmt.Sprintf("restarting the manager: %v", err))
			}
		}
	}()
	return k
}

// states returns the remediations of the pools under way, by UID: their
// phase, "New" before the first status, or "Deleting" once NHC deleted
// them.
func (k *killer) states(ctx context.Context) map[types.UID]string {
	var rems s3gwv1alpha1.S3GWRemediationList
	if err := env.Client.List(ctx, &rems); err != nil {
		return nil
	}
	out := map[types.UID]string{}
	for i := range rems.Items {
		rem := &rems.Items[i]
		if !k.covers(medik8s.NodeName(rem)) {
			continue
		}
		phase := string(rem.Status.Phase)
		switch {
		case !rem.DeletionTimestamp.IsZero():
			phase = "Deleting"
		case phase == "":
			phase = "New"
		}
		out[rem.UID] = phase
	}
	return out
}

func (k *killer) covers(node string) bool {
	for _, s := range k.pools {
		if slices.Contains(s.victims, node) {
			return true
		}
	}
	return false
}

func (k *killer) count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.kills)
}

func (k *killer) stop() {
	k.once.Do(func() { close(k.done) })
	<-k.stopped
}

// summary says how many kills hit which phases, and how long the manager
// had been up each time.
func (k *killer) summary() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	byPhase := map[string]int{}
	uptimes := make([]time.Duration, 0, len(k.kills))
	for _, kl := range k.kills {
		for _, p := range kl.phases {
			byPhase[p]++
		}
		uptimes = append(uptimes, kl.uptime)
	}
	sort.Slice(uptimes, func(i, j int) bool { return uptimes[i] < uptimes[j] })
	phases := make([]string, 0, len(byPhase))
	for _, p := range slices.Sorted(maps.Keys(byPhase)) {
		phases = append(phases, fmt.Sprintf("%s %d", p, byPhase[p]))
	}
	if len(uptimes) == 0 {
		return "crash loop: no kill"
	}
	return fmt.Sprintf("crash loop: %d SIGKILLs of the manager, each restarted at once; remediations under way at the kills, by phase: %s; "+
		"manager uptime before a kill: min %s, median %s, max %s",
		len(k.kills), strings.Join(phases, ", "), harness.FormatDuration(uptimes[0]), harness.FormatDuration(uptimes[len(uptimes)/2]),
		harness.FormatDuration(uptimes[len(uptimes)-1]))
}
