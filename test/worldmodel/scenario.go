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
	"time"

	"k8s.io/utils/ptr"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
)

// Scenario is one episode's cluster, configuration and fault script, drawn
// from the episode's seed.
type Scenario struct {
	Nodes     int
	Instances []InstanceSpec
	// Spec is the S3GWRemediationTemplate's spec.template.spec.
	Spec s3gwv1alpha1.S3GWRemediationSpec
	// MultiTemplate puts multiple-templates-support on our template (NHC
	// then uses generateName).
	MultiTemplate bool
	NHC           NHCSpec
	FAR           FARSpec
	Admin         AdminSpec
	// Manual is an admin's hand-made second remediation; nil: none.
	Manual *ManualSpec
	Stale  []StaleEvidence
	Faults []Fault
	// PodFinalizer, when set, is how long a foreign finalizer (some other
	// controller's) keeps a deleted gateway pod in the API.
	PodFinalizer time.Duration
	// CrashRate is the chance the manager dies right after a committed write.
	CrashRate float64
	// InterleaveRate is the chance other components act before a call of
	// the controller.
	InterleaveRate float64
	Duration       time.Duration
	// Clocks are the machines' skews; CacheLag is the most the
	// controller's informer cache trails the API server.
	Clocks   ClockSpec
	CacheLag time.Duration
	// TicketCut and ReleaseCut are the targeted cuts (cuts.go); nil: none.
	TicketCut, ReleaseCut *TargetedCut
	// SNR is the NodeHealthCheck's Self Node Remediation step (snr.go);
	// nil: none.
	SNR *SNRSpec
	// Recreate is an admin's replacement of a NotReady Node object
	// (recreate.go); nil: none.
	Recreate *RecreateSpec
	// Retaint is an admin who puts back an out-of-service taint a fencer
	// removed from a node still off (retaint.go); nil: none.
	Retaint *RetaintSpec
	// Neighbours are kube-controller-manager's and Longhorn's settings
	// (neighbours.go).
	Neighbours NeighbourSettings
}

// InstanceSpec places one s3gw release: its pod's node and its replicas'
// nodes, and whether its Longhorn volume has the revision counter disabled.
type InstanceSpec struct {
	Node                    int
	Replicas                []int
	RevisionCounterDisabled bool
}

// NHCSpec configures the NodeHealthCheck.
type NHCSpec struct {
	// Escalating runs FAR first, then our template.
	Escalating   bool
	FARTimeout   time.Duration
	OurTimeout   time.Duration
	Duration     time.Duration
	HealthyDelay time.Duration
	// NeverDelete is a negative healthyDelay.
	NeverDelete       bool
	MinHealthyPercent int
}

// FARSpec configures FenceAgentsRemediation and its template.
type FARSpec struct {
	Installed bool
	Action    string // off or reboot
	Strategy  string // ResourceDeletion or OutOfServiceTaint
	Delay     time.Duration
	FailRate  float64
	BootTime  time.Duration
}

// AdminSpec is an admin who taints powered-off nodes out of service.
type AdminSpec struct {
	Taints    bool
	After     time.Duration
	TimeAdded bool
	Removes   bool
}

// StaleEvidence is left from an earlier incident on a node.
type StaleEvidence struct {
	FAR  bool // a finished FenceAgentsRemediation; else an out-of-service taint
	Node int
	Age  time.Duration
	// TimeAdded: the taint carries timeAdded.
	TimeAdded bool
}

func pick[T any](r *rand.Rand, options ...T) T { return options[r.IntN(len(options))] }

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)+1))
}

// Policy is what an episode is drawn under: the template's fencing mode,
// whether it accepts releasing while a replica lives where Longhorn cannot
// reach it (release.requireReachableReplicas: false), and which hazards
// the world has.
type Policy struct {
	Mode                      s3gwv1alpha1.FencingMode
	AcceptUnreachableReplicas bool
	// AcceptStaleReads sets release.acceptStaleReadsWithoutRevisionCounter.
	AcceptStaleReads bool
	Hazards          Hazards
	// Neighbours pins settings of the neighbours for every episode.
	Neighbours NeighbourPins
}

// safePolicy is the one the safety run uses: the defaults.
var safePolicy = Policy{Mode: s3gwv1alpha1.FencingModeRequireEvidence, Hazards: defaultHazards}

func (p Policy) String() string {
	s := string(p.Mode)
	if p.AcceptUnreachableReplicas {
		s += ", requireReachableReplicas false"
	}
	if p.AcceptStaleReads {
		s += ", acceptStaleReadsWithoutRevisionCounter"
	}
	s += ", hazards " + p.Hazards.String()
	if p.Neighbours != "" {
		s += ", neighbours " + string(p.Neighbours)
	}
	return s
}

// generate draws a scenario under the policy; late draws what was added
// to the model after the fixed seed's figures were taken (episodeRand).
func generate(r, late *rand.Rand, p Policy) *Scenario {
	sc := &Scenario{Nodes: 3 + r.IntN(4), Duration: 20 * time.Minute,
		CrashRate: pick(r, 0.0, 0.05, 0.15), InterleaveRate: pick(r, 0.0, 0.02, 0.1)}
	instances := 1
	if chance(r, 0.3) {
		instances = 2
	}
	for range instances {
		sc.Instances = append(sc.Instances, generateInstance(r, sc.Nodes))
	}
	sc.FAR = FARSpec{Installed: chance(r, 0.8), Action: pick(r, "off", "reboot"),
		Strategy: pick(r, "ResourceDeletion", farStrategyOutOfServe), Delay: between(r, 5*time.Second, 40*time.Second),
		FailRate: pick(r, 0.0, 0.1, 0.5), BootTime: between(r, 30*time.Second, 3*time.Minute)}
	sc.Spec = generateSpec(r, p, sc.FAR.Installed)
	sc.MultiTemplate = chance(r, 0.5)
	sc.NHC = NHCSpec{Escalating: sc.FAR.Installed && chance(r, 0.4),
		FARTimeout: between(r, time.Minute, 5*time.Minute), OurTimeout: pick(r, 5*time.Minute, 10*time.Minute, 20*time.Minute),
		Duration:     pick(r, 10*time.Second, 30*time.Second, time.Minute, 2*time.Minute, 5*time.Minute),
		HealthyDelay: pick(r, time.Duration(0), 0, time.Minute, 5*time.Minute), NeverDelete: chance(r, 0.05),
		MinHealthyPercent: pick(r, 0, 51)}
	sc.Admin = AdminSpec{Taints: chance(r, 0.3), After: between(r, time.Minute, 10*time.Minute),
		TimeAdded: chance(r, 0.7), Removes: chance(r, 0.5)}
	if chance(r, 0.15) {
		sc.PodFinalizer = between(r, 5*time.Second, 5*time.Minute)
	}
	sc.Stale = generateStale(r, sc)
	sc.Faults = generateFaults(r, sc)
	// Drawn whatever the hazards, so that switching one off changes
	// nothing else in the episode.
	sc.Clocks = generateClocks(r, sc.Nodes)
	for i := range sc.Instances {
		// longhorn-manager csi/util.go: a StorageClass without
		// disableRevisionCounter gets the default, true. The gate refuses
		// such volumes outright, so a third of them is enough to catch a
		// gate that does not, and leaves most episodes to the other rules.
		sc.Instances[i].RevisionCounterDisabled = chance(r, 0.3)
	}
	sc.CacheLag = pick(r, 0, 200*time.Millisecond, time.Second, 3*time.Second)
	// Drawn last, so that the draws above are the same with and without them.
	sc.Manual = generateManual(r, sc, p)
	sc.TicketCut = generateCut(r, 5*time.Second)
	sc.ReleaseCut = generateCut(r, 5*time.Second)
	sc.SNR = generateSNR(r)
	sc.Recreate = generateRecreate(r, sc)
	sc.Retaint = generateRetaint(late)
	sc.Neighbours = generateNeighbours(late)
	p.Hazards.apply(sc)
	// Checked when the policy was read (parseNeighbourPins).
	sc.Neighbours, _ = p.Neighbours.apply(sc.Neighbours)
	return sc
}

// generateInstance places a pod and 1-3 replicas, often one beside the pod.
func generateInstance(r *rand.Rand, nodes int) InstanceSpec {
	in := InstanceSpec{Node: r.IntN(nodes)}
	count := min(pick(r, 1, 2, 3, 3), nodes)
	order := r.Perm(nodes)
	// Longhorn's default layout often keeps a replica beside the pod; the
	// recommended one for s3gw does not.
	if chance(r, 0.35) {
		in.Replicas = append(in.Replicas, in.Node)
	}
	for _, n := range order {
		if len(in.Replicas) == count {
			break
		}
		if n != in.Node {
			in.Replicas = append(in.Replicas, n)
		}
	}
	return in
}

// generateSpec randomizes the template: release strategy and evidence
// sources; RequireEvidence always needs one source (the CRD's rule).
func generateSpec(r *rand.Rand, p Policy, far bool) s3gwv1alpha1.S3GWRemediationSpec {
	mode := p.Mode
	spec := s3gwv1alpha1.S3GWRemediationSpec{}
	spec.Fencing.Mode = mode
	if p.AcceptUnreachableReplicas {
		spec.Release.RequireReachableReplicas = ptr.To(false)
	}
	spec.Release.AcceptStaleReadsWithoutRevisionCounter = p.AcceptStaleReads
	spec.Release.Strategy = pick(r, s3gwv1alpha1.ReleaseControllerDetach, s3gwv1alpha1.ReleaseDeleteVolumeAttachment,
		s3gwv1alpha1.ReleaseOutOfServiceTaint)
	if mode == s3gwv1alpha1.FencingModeDisabled {
		spec.Release.Strategy = pick(r, s3gwv1alpha1.ReleaseControllerDetach, s3gwv1alpha1.ReleaseDeleteVolumeAttachment)
		return spec
	}
	spec.Fencing.StorageIsolation = ptr.To(chance(r, 0.6))
	spec.Fencing.OutOfServiceTaint = ptr.To(chance(r, 0.6))
	if chance(r, 0.5) {
		spec.Fencing.Remediators = []s3gwv1alpha1.RemediatorEvidence{{APIVersion: farGroupVersion.String(),
			Kind: gvkFAR.Kind, ConditionType: farCondition}}
	}
	if far && chance(r, 0.3) {
		spec.Fencing.Delegate = &s3gwv1alpha1.DelegateFencing{APIVersion: farGroupVersion.String(),
			Kind: gvkFARTemplate.Kind, Name: farTemplateName, ConditionType: farCondition}
	}
	if !*spec.Fencing.StorageIsolation && !*spec.Fencing.OutOfServiceTaint && len(spec.Fencing.Remediators) == 0 &&
		spec.Fencing.Delegate == nil {
		spec.Fencing.StorageIsolation = ptr.To(true)
	}
	return spec
}

// generateStale leaves evidence from an earlier incident: a finished FAR
// for a node (usually an s3gw node), or an out-of-service taint on a node
// s3gw does not run on (it would have been evicted).
func generateStale(r *rand.Rand, sc *Scenario) []StaleEvidence {
	var out []StaleEvidence
	if sc.FAR.Installed && chance(r, 0.2) {
		node := sc.Instances[0].Node
		if chance(r, 0.3) {
			node = r.IntN(sc.Nodes)
		}
		out = append(out, StaleEvidence{FAR: true, Node: node, Age: between(r, 5*time.Minute, 2*time.Hour)})
	}
	if chance(r, 0.1) {
		node := r.IntN(sc.Nodes)
		for _, in := range sc.Instances {
			if in.Node == node {
				return out
			}
		}
		out = append(out, StaleEvidence{Node: node, Age: between(r, 5*time.Minute, 2*time.Hour), TimeAdded: chance(r, 0.5)})
	}
	return out
}
