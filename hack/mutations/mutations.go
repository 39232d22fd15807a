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

package main

import "slices"

// Mutation is a deliberate defect in the source: the world-model test must
// find violations with it, or it is blind to that defect.
type Mutation struct {
	// Name says which defect it plants.
	Name string
	// Edits are applied together.
	Edits []Edit
	// ReportOnly marks a defect the model is known not to turn into a lost
	// write on its own (a guard behind another guard, or a liveness rule),
	// or too rarely for the fixed seed: it is run and reported, and a zero
	// does not fail the run.
	ReportOnly bool
	// BehindReachability runs the mutation, and the unmutated code it is
	// compared with, with release.requireReachableReplicas false. With every
	// replica reachable, Longhorn stops each one the old engine could write
	// to, so a release loses nothing in the model whatever the evidence: the
	// fencing rules are then defence in depth, and only show with the
	// opt-out, where they are the only guard.
	BehindReachability bool
	// Behind takes out, in the mutation's run and in the unmutated run it
	// is compared with, the guard its rule stands behind: the new
	// violations are then the rule's own. Like BehindReachability, for a
	// rule that is defence in depth.
	Behind []Edit
	// Hazards is WORLDMODEL_HAZARDS for the mutation's run and the
	// unmutated run it is compared with; "" runs the default hazards. The
	// rules of the release in two steps guard the second after the
	// operator's Longhorn write, so their mutations run with the targeted
	// cuts (withTargetedCuts); a rule against a neighbour the default
	// hazards leave out runs with that neighbour's hazard.
	Hazards string
}

// withTargetedCuts is the default hazards and the targeted cuts of a
// replica node right after the operator's Longhorn write: every hazard but
// SNR, which joined "all" after these mutations' figures were taken.
const withTargetedCuts = "revision-counter,clock-skew,informer-lag,cut-after-ticket,cut-after-release"

// planted is the mutation as its run applies it: the guard it stands
// behind taken out, then its defect.
func (m Mutation) planted() Mutation {
	return Mutation{Name: m.Name, Edits: append(slices.Clone(m.Behind), m.Edits...)}
}

// Edit replaces Old, which must occur exactly once in File (relative to the
// repository root), by New.
type Edit struct {
	File, Old, New string
}

// Files and texts several mutations edit.
const (
	gateGo        = "internal/failover/evidence/gate.go"
	isolationGo   = "internal/failover/evidence/isolation.go"
	decideGo      = "internal/failover/step/decide.go"
	storageGo     = "internal/failover/release/storage.go"
	releaseGo     = "internal/failover/release/plan.go"
	fencerHoldGo  = "internal/failover/release/fencer_hold.go"
	taintOwnerGo  = "internal/failover/taint_owner.go"
	heartbeatGo   = "internal/failover/heartbeat.go"
	strandedCheck = "if stranded := strandedToRelease(o); len(stranded) > 0 && "
	strandedOff   = "if stranded := strandedToRelease(o); false && len(stranded) > 0 && "
)

// evidenceOfAnyFailure takes out the rule that evidence must have arisen
// during this failure: the heartbeat rules stand behind it.
var evidenceOfAnyFailure = Edit{
	File: gateGo,
	Old:  "\tcase !aroseDuringFailure(o, name, createdAt):\n",
	New:  "\tcase false && !aroseDuringFailure(o, name, createdAt):\n",
}

// mutations are the defects the model must catch: the rules issues #8 and
// #16 added, each switched back off. Keep Old exact: when the code moves on, the run
// fails and names the mutation to update.
var mutations = []Mutation{
	{
		Name: "#8.1 replicas on other unreachable nodes do not count",
		Edits: []Edit{{
			File: isolationGo,
			Old:  "\t\t\tunreachable = append(unreachable, v.Stranded(o.Node.Name, o.Now)...)\n",
			New:  "",
		}, {
			File: storageGo,
			Old:  strandedCheck,
			New:  strandedOff,
		}},
	},
	{
		Name: "#8.1b fencing evidence releases with a replica Longhorn cannot reach",
		Edits: []Edit{{
			File: storageGo,
			Old:  strandedCheck,
			New:  strandedOff,
		}},
	},
	{
		Name: "#8.2 evidence from an earlier failure counts",
		Edits: []Edit{{
			File: gateGo,
			Old:  "\tcase !aroseDuringFailure(o, name, createdAt):\n",
			New:  "\tcase false && !aroseDuringFailure(o, name, createdAt):\n",
		}, {
			File: gateGo,
			Old:  "\tcase !hb.Silent(o.Now):\n",
			New:  "\tcase false && !hb.Silent(o.Now):\n",
		}},
		BehindReachability: true,
	},
	{
		// It stands behind the rule that evidence arose during this
		// failure (Behind). Even with that rule out in both runs, under
		// WORLDMODEL_POLICY=accept-unreachable-replicas and the default
		// hazards (clock skew included), it adds nothing in 5 000 episodes
		// of the fixed seed (81 and 81); the likely reason, not traced, is
		// that the model's fencers fence for real whenever the kubelet's
		// clock makes it look silent early. TestHeartbeat's skewed-kubelet rows
		// and TestEvaluateGateEvidenceOfThisFailure fail with it.
		Name:   "#16.3b the kubelet's renewTime is compared with the controller's clock",
		Behind: []Edit{evidenceOfAnyFailure},
		Edits: []Edit{{
			File: heartbeatGo,
			Old:  "\treturn !h.Seen.At.IsZero() && now.Sub(h.Seen.At) > h.LeaseDurationOrDefault()\n",
			New:  "\treturn now.Sub(h.LeaseRenewed) > h.LeaseDurationOrDefault()\n",
		}},
		ReportOnly: true,
	},
	{
		// The kubelet's clock in place of kube-apiserver's stamp against
		// kube-controller-manager's transition. The model's kubelets lose
		// the API server for minutes, so a kubelet back in the seconds
		// before its status post is rarely read; the skewed-kubelet rows
		// of TestHeartbeatSilentOnControlPlane fail with it.
		Name: "#16.3b the kubelet's renewTime is compared with kube-controller-manager's Unknown transition",
		Edits: []Edit{{
			File: heartbeatGo,
			Old:  "\t\t!h.ReadySince.Before(h.LeaseWritten.Add(stampResolution+h.LeaseDurationOrDefault()))\n",
			New:  "\t\t!h.ReadySince.Before(h.LeaseRenewed.Add(stampResolution+h.LeaseDurationOrDefault()))\n",
		}},
		ReportOnly: true,
	},
	{
		// A status post that left the node Unknown (a kubelet patching from
		// a stale read) while its Lease still carries an old stamp; the
		// model's kubelets always post Ready. TestHeartbeatSilentOnControlPlane's
		// stale-patch row fails with it.
		Name: "#16.3b a change seen after the Unknown transition does not veto the stamps",
		Edits: []Edit{{
			File: heartbeatGo,
			Old:  "\treturn h.Ready == ReadyUnknown && !h.LeaseWritten.IsZero() && !h.changedSinceUnknown() &&\n",
			New:  "\treturn h.Ready == ReadyUnknown && !h.LeaseWritten.IsZero() &&\n",
		}},
		ReportOnly: true,
	},
	{
		// A replica node's Lease aged on the node's clock, not on the
		// controller's: a kubelet clock ahead keeps a dead node reachable.
		// TestHeartbeatLagging's skewed rows and TestReach fail with it.
		Name: "#16.3b a replica node's Lease renewals are aged on the node's clock",
		Edits: []Edit{{
			File: heartbeatGo,
			Old:  "\tcase h.Seen.Witnessed:\n\t\treturn now.Sub(h.Seen.At) > half\n",
			New:  "\tcase h.Seen.Witnessed:\n\t\treturn now.Sub(h.LeaseRenewed) > half\n",
		}},
		ReportOnly: true,
	},
	{
		// Run with the node re-creation, where the guard fires, but only
		// on a true fence: evidence it refuses that the gate would
		// otherwise count was created after the new Node's Unknown
		// transition or seen pending after the controller first read it
		// (aroseDuringFailure), so a fencer acted after the re-creation,
		// and every fencer of the model acts on the machine (FAR's agent,
		// an admin's taint once it is off); a machine that runs s3gw
		// again posts status to the new Node first. Behind another guard;
		// TestEvaluateGateEvidenceOfThisFailure's no-sign-of-life row sees it.
		// With that guard taken out too (Behind evidenceOfAnyFailure, in
		// both runs), 5 000 episodes with the re-creation still show 0 and
		// 0: the model leaves no fencer's success from before
		// a re-creation for the new Node to inherit.
		Name: "#16.3c timed evidence counts for a node with no sign of life",
		Edits: []Edit{{
			File: gateGo,
			Old:  "\tcase hb.NoSignOfLife():\n",
			New:  "\tcase false && hb.NoSignOfLife():\n",
		}},
		ReportOnly: true,
		Hazards:    "revision-counter,clock-skew,informer-lag,node-recreated",
	},
	{
		Name: "#8.3 a new failure under the same CR does not start over",
		Edits: []Edit{{
			File: decideGo,
			Old:  "o.Episode != nil && !o.Episode.Continues(o.Node.Heartbeat):",
			New:  "o.Episode != nil && false && !o.Episode.Continues(o.Node.Heartbeat):",
		}},
		ReportOnly: true,
	},
	{
		Name: "#8.4 ControllerDetach edits a live kubelet's volumesInUse",
		Edits: []Edit{{
			File: releaseGo,
			Old:  "kubeletAlive: !o.Node.Heartbeat.Lost(o.Now)}",
			New:  "kubeletAlive: false && !o.Node.Heartbeat.Lost(o.Now)}",
		}},
		ReportOnly: true,
	},
	{
		Name: "#8.5 volumes are released while their pod is in the API",
		Edits: []Edit{{
			File: releaseGo,
			Old:  "\t\t\tcase t.PodPresent:\n\t\t\t\t// The attach-detach controller still wants it on the node.\n",
			New:  "\t\t\tcase false:\n",
		}},
		ReportOnly: true,
	},
	{
		// A force-delete is a deferred release (the attach-detach
		// controller's 6-minute force detach). The loss needs a second
		// fault minutes later: a CI run's fresh seed (0x4cb15540f76f1c3b)
		// found it in 4 of 20 000 episodes, the fixed seed's 20 000 show
		// none (-seed 0x4cb15540f76f1c3b -episodes 20000 -run 'cannot follow').
		Name: "a pod is force-deleted though its release cannot follow at once",
		Edits: []Edit{{
			File: releaseGo,
			Old:  "\t\tcase !t.PodPresent || t.ForceDeleted || waitsForKubelet(o, t):\n\t\tcase keptByFinalizers(gate, t):\n",
			New:  "\t\tcase !t.PodPresent || t.ForceDeleted:\n\t\tcase false:\n",
		}},
		ReportOnly: true,
	},
	{
		Name: "#8.6 cleanup removes an out-of-service taint it did not add",
		Edits: []Edit{{
			File: "internal/attachments/taint_actions.go",
			Old:  "if w.Node == nil || TaintOwner(w.Node, taint) != w.Owner {",
			New:  "if w.Node == nil || !HasTaint(w.Node, taint) {",
		}, {
			File: "internal/attachments/taint.go",
			Old:  "\tif TaintOwner(node, taint) != owner {\n\t\treturn nil\n\t}\n",
			New:  "",
		}},
	},
	{
		// FAR and SNR remove the taint by key and leave the annotation; an
		// admin's taint added later is then taken for ours. The sequence
		// needs the operator's own taint, SNR (or FAR) removing it while the
		// node is still off, and an admin putting one back (the
		// taint-handover hazard, test/worldmodel/retaint.go): with both
		// hazards, 1 new violation of 5 000 episodes of the fixed seed
		// (episode 3263: SNR removes the operator's taint at 1 086 s, the
		// admin adds theirs at 1 131 s, the node returns at 1 200 s and the
		// operator removes the admin's taint as its own). The envtest story
		// "drops its owner annotation once a fencer removed its taint by
		// key" fails with it too.
		Name: "#16.3 the taint owner annotation is trusted without the taint it names",
		Edits: []Edit{{
			File: taintOwnerGo,
			Old: "\tcase taint == nil || taint.TimeAdded == nil || record.Owner == \"\" ||\n" +
				"\t\t!taint.TimeAdded.Truncate(time.Second).Equal(record.TimeAdded.Truncate(time.Second)):\n\t\treturn \"\", true\n",
			New: "\tcase taint == nil:\n\t\treturn \"\", false\n",
		}},
		Hazards: "revision-counter,clock-skew,informer-lag,snr,taint-handover",
	},
	{
		// The model's admin creates a Disabled S3GWRemediation beside
		// NHC's pending one (test/worldmodel/manual.go): 20 new violations
		// of 5 000 episodes of the fixed seed, the Disabled one moving
		// s3gw off a node whose gateway still writes. The envtest story
		// "Two remediations of one node" fails with it too.
		Name: "#16.3d a remediation acts on a pod another remediation of its node selects under different rules",
		Edits: []Edit{{
			File: decideGo,
			Old:  "\tif shared, d := sharedTargetsCheck(o); shared {\n",
			New:  "\tif shared, d := sharedTargetsCheck(o); false && shared {\n",
		}},
	},
	{
		// The release in two steps (#16, the replica-node race): the
		// Kubernetes release no longer waits for each replica's own
		// instance manager to show it stopped. A replica node cut from the
		// control plane right after the reachability check keeps its
		// replica, and the old engine's writes there, out of the new
		// engine.
		Name: "#16.5 the release does not wait for the replicas' stops",
		Edits: []Edit{{
			File: "internal/failover/release/replica_stop.go",
			Old:  "\trunning := false\n",
			New:  "\treturn true, \"\"\n\trunning := false\n",
		}},
		Hazards: withTargetedCuts,
	},
	{
		// On storage isolation alone, the ticket no longer waits for a
		// fencer at work or a delegate still to be created: the fencer's
		// own release, after a replica node was cut in the second after
		// the ticket's removal, starts the new engine without that
		// replica's writes (world model, seed 0x5eed2026: 7 of 20 000).
		// Too rare for the first 5 000 episodes once losses are charged by
		// replay (2 operator-caused with it and without it);
		// TestDecideReplicaStops' "while a fencer is at work" row fails
		// with it.
		Name: "#16.5b the ticket does not wait for a fencer at work",
		Edits: []Edit{{
			File: "internal/failover/release/replica_stop.go",
			Old:  "\tif gate.ProvesShutdown || !slices.Equal(gate.Evidence, []string{evidence.EvidenceStorageIsolation}) {\n",
			New:  "\tif true || gate.ProvesShutdown || !slices.Equal(gate.Evidence, []string{evidence.EvidenceStorageIsolation}) {\n",
		}},
		Hazards:    withTargetedCuts,
		ReportOnly: true,
	},
	{
		// After the detach, a replica node cut off before its stop may hold
		// the old engine's last writes alone; a delegate created then
		// releases the volume itself (FAR's out-of-service taint) and
		// Longhorn starts the new engine without that replica (fresh seed
		// 0x5aa9dfe7917a97a4, episode 19766, default hazards). Too rare for
		// the fixed seed's first 5 000 episodes with the targeted cuts once
		// losses are charged by replay (2 operator-caused with it and
		// without it); TestDecideReplicaStops' "gate closed after the
		// detach" row fails with it.
		Name: "#16.5c a delegate is created while a replica Longhorn detached is not proven stopped",
		Edits: []Edit{{
			File: fencerHoldGo,
			Old:  "if unstopped := stopsUnconfirmedAfterDetach(o); len(unstopped) > 0 {",
			New:  "if unstopped := stopsUnconfirmedAfterDetach(o); false && len(unstopped) > 0 {",
		}},
		Hazards:    withTargetedCuts,
		ReportOnly: true,
	},
	{
		// A replica Longhorn cannot reach (on the failed node, or on a
		// node it counts down) may alone have the old engine's last
		// writes; a delegate created then releases the volume itself and
		// Longhorn starts the new engine without it: with it, the fixed
		// seed's operator-caused losses go from 3 to 134 in 20 000
		// episodes. TestDecideReplicaStops' "a replica on the failed node"
		// row fails with it too.
		Name: "a delegate is created while a replica Longhorn cannot reach may have the last writes",
		Edits: []Edit{{
			File: fencerHoldGo,
			Old:  "if stranded := strandedToRelease(o); len(stranded) > 0 {",
			New:  "if stranded := strandedToRelease(o); false && len(stranded) > 0 {",
		}},
	},
	{
		Name: "storage isolation ignores a replica on the failed node",
		Edits: []Edit{{
			File: isolationGo,
			Old:  "\t\t\t\tif r.Node == o.Node.Name {\n\t\t\t\t\treturn fmt.Sprintf(\"replica %s of %s is on the node\"",
			New:  "\t\t\t\tif false && r.Node == o.Node.Name {\n\t\t\t\t\treturn fmt.Sprintf(\"replica %s of %s is on the node\"",
		}, {
			File: storageGo,
			Old:  strandedCheck,
			New:  strandedOff,
		}},
	},
	{
		Name: "a remediator condition counts whatever its status",
		Edits: []Edit{{
			File: "internal/fencing/remediators.go",
			Old:  "\treturn found && c.status == metav1.ConditionTrue\n",
			New:  "\treturn found && c.status != \"\"\n",
		}},
		BehindReachability: true,
	},
	{
		Name: "#16.3a a volume with the revision counter disabled is released",
		Edits: []Edit{{
			File: "internal/failover/release/volume_rules.go",
			Old:  "\t\treturn v.RevisionCounterDisabled && !spec.Release.AcceptStaleReadsWithoutRevisionCounter\n",
			New:  "\t\treturn false && v.RevisionCounterDisabled && !spec.Release.AcceptStaleReadsWithoutRevisionCounter\n",
		}},
	},
}
