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

package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/medik8s"
)

// Milestone is one step of a failover, as seen from the API.
type Milestone int

// The milestones, in the order a remediated failover usually passes them.
const (
	// NodeLost: the node's kubelet was stopped (FailNode).
	NodeLost Milestone = iota
	// NodeNotReady: the node-lifecycle controller marked the node not Ready.
	NodeNotReady
	// RemediationCreated: an S3GWRemediation for the node appeared.
	RemediationCreated
	// OldPodTerminating: the gateway pod on the node got a deletionTimestamp
	// (taint eviction or a delete) but is still in the API.
	OldPodTerminating
	// Fenced: the S3GWRemediation reports Fenced=True.
	Fenced
	// OldPodGone: the gateway pod on the node is gone from the API.
	OldPodGone
	// AttachmentReleased: no VolumeAttachment of the gateway's volume on the
	// node is left.
	AttachmentReleased
	// ReplacementScheduled: a new gateway pod is bound to another node.
	ReplacementScheduled
	// ReplacementAttached: the volume's VolumeAttachment on another node is
	// attached.
	ReplacementAttached
	// ReplacementReady: a gateway pod on another node is Ready.
	ReplacementReady
	// RemediationSucceeded: the S3GWRemediation reports Succeeded=True.
	RemediationSucceeded

	milestoneCount
)

// Milestones lists every milestone in order.
func Milestones() []Milestone {
	out := make([]Milestone, 0, milestoneCount)
	for m := range milestoneCount {
		out = append(out, m)
	}
	return out
}

var milestoneNames = [...]string{
	NodeLost:             "node lost (kubelet stopped)",
	NodeNotReady:         "node NotReady",
	OldPodTerminating:    "old pod Terminating",
	RemediationCreated:   "S3GWRemediation created",
	Fenced:               "fenced",
	OldPodGone:           "old pod gone",
	AttachmentReleased:   "attachment released from the dead node",
	ReplacementScheduled: "replacement scheduled",
	ReplacementAttached:  "replacement's volume attached",
	ReplacementReady:     "replacement Ready",
	RemediationSucceeded: "S3GWRemediation Succeeded",
}

func (m Milestone) String() string {
	if m >= 0 && m < milestoneCount {
		return milestoneNames[m]
	}
	return fmt.Sprintf("Milestone(%d)", int(m))
}

// Notify is told about every milestone of a run as it is first seen, with
// the time since the node was lost.
type Notify func(r *Run, m Milestone, after time.Duration)

// Run is one node failure of one gateway, observed from watches.
type Run struct {
	Gateway *Gateway
	// Node is the failed node; OldPod and OldUID the gateway pod that ran there.
	Node   string
	OldPod types.NamespacedName
	OldUID types.UID
	// FailedAt is when the node's kubelet was stopped.
	FailedAt time.Time

	notify   Notify
	knownCRs map[types.UID]bool

	mu          sync.Mutex
	seen        [milestoneCount]time.Time
	waiters     [milestoneCount]chan struct{}
	remediation string
	replacement string // pod
	newNode     string
	phases      []PhaseEntry
}

// PhaseEntry is an S3GWRemediation phase and when it was first seen.
type PhaseEntry struct {
	Phase s3gwv1alpha1.Phase
	After time.Duration
}

func newRun(g *Gateway, node string, old *corev1.Pod, notify Notify) *Run {
	r := &Run{Gateway: g, Node: node, OldPod: client.ObjectKeyFromObject(old), OldUID: old.UID,
		notify: notify, knownCRs: map[types.UID]bool{}}
	for i := range r.waiters {
		r.waiters[i] = make(chan struct{})
	}
	return r
}

// Seen returns how long after the node was lost m was first seen.
func (r *Run) Seen(m Milestone) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[m].IsZero() {
		return 0, false
	}
	return r.seen[m].Sub(r.FailedAt), true
}

// WallClockStep returns how far the wall clock moved against the
// monotonic one between the node's loss and when m was first seen: zero
// unless the machine's clock was set meanwhile. Times read from elsewhere
// (kube-apiserver's audit log) are wall-clock readings; the timeline is
// monotonic.
func (r *Run) WallClockStep(m Milestone) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.seen[m]
	if seen.IsZero() {
		return 0, false
	}
	// Round(0) drops the monotonic reading: Sub then compares wall clocks.
	return seen.Round(0).Sub(r.FailedAt.Round(0)) - seen.Sub(r.FailedAt), true
}

// Between returns the time from milestone a to b, if both were seen.
func (r *Run) Between(a, b Milestone) (time.Duration, bool) {
	ta, okA := r.Seen(a)
	tb, okB := r.Seen(b)
	return tb - ta, okA && okB
}

// Remediation names the S3GWRemediation created for the node, if any.
func (r *Run) Remediation() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.remediation
}

// Phases lists the phases the node's S3GWRemediation went through, as seen.
func (r *Run) Phases() []PhaseEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]PhaseEntry(nil), r.phases...)
}

// Replacement names the Ready replacement pod and its node, once seen.
func (r *Run) Replacement() (pod, node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replacement, r.newNode
}

// Wait blocks until m is seen, ctx ends or timeout passes.
func (r *Run) Wait(ctx context.Context, m Milestone, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-r.waiters[m]:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for %q of %s: %w", m, r, ctx.Err())
	case <-timer.C:
		return fmt.Errorf("%q of %s not seen within %s; timeline so far:\n%s", m, r, timeout, r.Format())
	}
}

// Done returns a channel closed once m is seen.
func (r *Run) Done(m Milestone) <-chan struct{} { return r.waiters[m] }

func (r *Run) String() string {
	return fmt.Sprintf("gateway %s/%s on node %s", r.Gateway.Namespace, r.Gateway.Release, r.Node)
}

// Entry is one seen milestone.
type Entry struct {
	Milestone Milestone
	After     time.Duration
}

// Timeline returns the milestones seen so far, in time order.
func (r *Run) Timeline() []Entry {
	var out []Entry
	for _, m := range Milestones() {
		if d, ok := r.Seen(m); ok {
			out = append(out, Entry{Milestone: m, After: d})
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].After < out[j-1].After; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Format prints the timeline, one milestone a line.
func (r *Run) Format() string {
	var b strings.Builder
	for _, e := range r.Timeline() {
		fmt.Fprintf(&b, "  %8s  %s\n", "+"+FormatDuration(e.After), e.Milestone)
	}
	return b.String()
}

// FormatDuration rounds to 100 ms below a minute and to seconds above.
func FormatDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// record notes m at now unless already seen, and tells notify.
func (r *Run) record(m Milestone, now time.Time) {
	r.mu.Lock()
	if !r.seen[m].IsZero() {
		r.mu.Unlock()
		return
	}
	r.seen[m] = now
	close(r.waiters[m])
	r.mu.Unlock()
	if r.notify != nil {
		r.notify(r, m, now.Sub(r.FailedAt))
	}
}

// tracker watches the objects a failover touches and updates every active
// run's timeline on each change.
type tracker struct {
	cache  cache.Cache
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	runs []*Run
}

func startTracker(ctx context.Context, cfg *rest.Config) (*tracker, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: Scheme(), DefaultTransform: cache.TransformStripManagedFields()})
	if err != nil {
		return nil, fmt.Errorf("creating the timeline cache: %w", err)
	}
	t := &tracker{cache: c, done: make(chan struct{})}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.observeChange(obj) },
		UpdateFunc: func(_, obj any) { t.observeChange(obj) },
		DeleteFunc: func(obj any) { t.observeChange(obj) },
	}
	for _, obj := range []client.Object{&corev1.Node{}, &corev1.Pod{}, &storagev1.VolumeAttachment{}, &s3gwv1alpha1.S3GWRemediation{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return nil, fmt.Errorf("creating informer for %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("watching %T: %w", obj, err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	t.cancel = cancel
	go func() {
		defer close(t.done)
		_ = c.Start(runCtx)
	}()
	if !c.WaitForCacheSync(runCtx) {
		t.stop()
		return nil, errors.New("timeline cache did not sync")
	}
	return t, nil
}

func (t *tracker) stop() {
	t.cancel()
	<-t.done
}

func (t *tracker) add(r *Run) {
	t.mu.Lock()
	t.runs = append(t.runs, r)
	t.mu.Unlock()
}

// observeChange re-evaluates the runs when obj's change can move one of
// their timelines: a node only if it is a run's node, a pod only in a
// run's gateway namespace. Every other change is skipped: at thousands of
// nodes, kwok's status heartbeats of the healthy ones, each evaluated
// against every run under one lock, queued the milestones behind them for
// tens of seconds and took CPU from the cluster measured.
func (t *tracker) observeChange(obj any) {
	if tombstone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	t.mu.Lock() // keeps evaluations in order across the informer goroutines
	defer t.mu.Unlock()
	if !t.concerns(obj) {
		return
	}
	now := time.Now()
	ctx := context.Background()
	for _, r := range t.runs {
		if err := t.evaluate(ctx, r, now); err != nil {
			continue // the next event evaluates again
		}
	}
}

// concerns tells whether obj is read by the evaluation of some run.
func (t *tracker) concerns(obj any) bool {
	switch o := obj.(type) {
	case *corev1.Node:
		return slices.ContainsFunc(t.runs, func(r *Run) bool { return r.Node == o.Name })
	case *corev1.Pod:
		return slices.ContainsFunc(t.runs, func(r *Run) bool { return r.Gateway.Namespace == o.Namespace })
	}
	return true
}

// evaluate records every milestone of r that holds in the cache now.
func (t *tracker) evaluate(ctx context.Context, r *Run, now time.Time) error {
	var node corev1.Node
	if err := t.cache.Get(ctx, client.ObjectKey{Name: r.Node}, &node); err != nil {
		return err
	}
	if c := readyCondition(&node); c == nil || c.Status != corev1.ConditionTrue {
		r.record(NodeNotReady, now)
	}
	var old corev1.Pod
	err := t.cache.Get(ctx, r.OldPod, &old)
	switch {
	case client.IgnoreNotFound(err) != nil:
		return err
	case err != nil || old.UID != r.OldUID:
		r.record(OldPodGone, now)
	case !old.DeletionTimestamp.IsZero():
		r.record(OldPodTerminating, now)
	}
	if err := t.evaluateRemediation(ctx, r, now); err != nil {
		return err
	}
	attachedTo, err := t.evaluateAttachments(ctx, r, now)
	if err != nil {
		return err
	}
	return t.evaluateReplacement(ctx, r, now, attachedTo)
}

// evaluateAttachments records the release from the dead node and returns
// the other node the volume is attached to, if any.
func (t *tracker) evaluateAttachments(ctx context.Context, r *Run, now time.Time) (string, error) {
	var vas storagev1.VolumeAttachmentList
	if err := t.cache.List(ctx, &vas); err != nil {
		return "", err
	}
	onDeadNode := false
	attachedTo := ""
	for _, va := range vas.Items {
		if va.Spec.Source.PersistentVolumeName == nil || *va.Spec.Source.PersistentVolumeName != r.Gateway.Volume.Name {
			continue
		}
		if va.Spec.NodeName == r.Node {
			onDeadNode = true
		} else if va.Status.Attached {
			attachedTo = va.Spec.NodeName
		}
	}
	if !onDeadNode {
		r.record(AttachmentReleased, now)
	}
	return attachedTo, nil
}

// evaluateReplacement records the replacement pod's progress on another node.
func (t *tracker) evaluateReplacement(ctx context.Context, r *Run, now time.Time, attachedTo string) error {
	var pods corev1.PodList
	if err := t.cache.List(ctx, &pods, client.InNamespace(r.Gateway.Namespace), client.MatchingLabels(r.Gateway.Labels)); err != nil {
		return err
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.UID == r.OldUID || p.Spec.NodeName == "" || p.Spec.NodeName == r.Node || !p.DeletionTimestamp.IsZero() {
			continue
		}
		r.record(ReplacementScheduled, now)
		if attachedTo == p.Spec.NodeName {
			r.record(ReplacementAttached, now)
		}
		if PodReady(p) {
			// Ready implies attached: a mount waits for the attachment, even
			// if its watch event has not reached this cache yet.
			r.record(ReplacementAttached, now)
			r.mu.Lock()
			if r.replacement == "" {
				r.replacement, r.newNode = p.Name, p.Spec.NodeName
			}
			r.mu.Unlock()
			r.record(ReplacementReady, now)
		}
	}
	return nil
}

func (t *tracker) evaluateRemediation(ctx context.Context, r *Run, now time.Time) error {
	var rems s3gwv1alpha1.S3GWRemediationList
	if err := t.cache.List(ctx, &rems); err != nil {
		return err
	}
	for i := range rems.Items {
		rem := &rems.Items[i]
		if medik8s.NodeName(rem) != r.Node || r.knownCRs[rem.UID] {
			continue
		}
		r.mu.Lock()
		if r.remediation == "" {
			r.remediation = rem.Namespace + "/" + rem.Name
		}
		if p := rem.Status.Phase; p != "" && (len(r.phases) == 0 || r.phases[len(r.phases)-1].Phase != p) {
			r.phases = append(r.phases, PhaseEntry{Phase: p, After: now.Sub(r.FailedAt)})
		}
		r.mu.Unlock()
		r.record(RemediationCreated, now)
		if meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionFenced) {
			r.record(Fenced, now)
		}
		if meta.IsStatusConditionTrue(rem.Status.Conditions, s3gwv1alpha1.ConditionSucceeded) {
			r.record(RemediationSucceeded, now)
		}
	}
	return nil
}

// Fail stops the kubelet of the node the gateway runs on and returns the
// run that watches the failover.
func (e *Env) Fail(ctx context.Context, g *Gateway, notify Notify) (*Run, error) {
	runs, err := e.FailAll(ctx, []*Gateway{g}, notify)
	if err != nil {
		return nil, err
	}
	return runs[0], nil
}

// FailAll stops, at the same moment, the nodes the gateways run on.
func (e *Env) FailAll(ctx context.Context, gateways []*Gateway, notify Notify) ([]*Run, error) {
	var existing s3gwv1alpha1.S3GWRemediationList
	if err := e.Client.List(ctx, &existing); err != nil {
		return nil, fmt.Errorf("listing S3GWRemediations: %w", err)
	}
	runs := make([]*Run, 0, len(gateways))
	for _, g := range gateways {
		pod, err := e.WaitForReadyGateway(ctx, g, readyTimeout)
		if err != nil {
			return nil, err
		}
		r := newRun(g, pod.Spec.NodeName, pod, notify)
		for _, rem := range existing.Items {
			r.knownCRs[rem.UID] = true
		}
		runs = append(runs, r)
	}
	now := time.Now()
	for _, r := range runs {
		r.FailedAt = now
		e.tracker.add(r)
	}
	for _, r := range runs {
		if err := e.Cluster.FailNode(ctx, r.Node); err != nil {
			return nil, err
		}
		r.record(NodeLost, now)
	}
	return runs, nil
}

// Recover restarts the failed node's kubelet and waits until it is Ready.
func (e *Env) Recover(ctx context.Context, r *Run) error {
	return e.Cluster.RecoverNode(ctx, r.Node)
}

// RemediationFor returns the node's S3GWRemediation from the API, or nil.
func (e *Env) RemediationFor(ctx context.Context, node string) (*s3gwv1alpha1.S3GWRemediation, error) {
	var rems s3gwv1alpha1.S3GWRemediationList
	if err := e.Client.List(ctx, &rems); err != nil {
		return nil, fmt.Errorf("listing S3GWRemediations: %w", err)
	}
	for i := range rems.Items {
		if medik8s.NodeName(&rems.Items[i]) == node {
			return &rems.Items[i], nil
		}
	}
	return nil, nil
}

// CompareTimelines prints runs side by side: one row per milestone, one
// column per run, "—" for what a run never reached.
func CompareTimelines(titles []string, runs []*Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %-40s", "")
	for _, t := range titles {
		fmt.Fprintf(&b, "  %-24s", t)
	}
	b.WriteString("\n")
	for _, m := range Milestones() {
		fmt.Fprintf(&b, "  %-40s", m)
		for _, r := range runs {
			cell := "—"
			if d, ok := r.Seen(m); ok {
				cell = "+" + FormatDuration(d)
			}
			fmt.Fprintf(&b, "  %-24s", cell)
		}
		b.WriteString("\n")
	}
	return b.String()
}
