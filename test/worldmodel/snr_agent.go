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
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The SNR agent, a DaemonSet pod on every node: it runs while its node is
// up and its kubelet has resynced since boot (no pod starts before), and
// reboots its node in two ways. With the API server it reboots once per
// CR, when the CR reaches Pre-Reboot-Completed (selfnoderemediation_controller.go,
// ReconcileAgent, rebootIfNeeded, didIRebootMyself). Without it, it asks
// its peers after failed API checks and reboots when one says a CR exists
// for its node, or when none has answered for a while (apicheck/check.go,
// Start, getWorkerPeersResponse; peerhealth/server.go, IsHealthy). The
// peers answer over the pod network: the model's data path.

// snrAgent is one node's agent.
type snrAgent struct {
	down     bool      // the node was seen off since the last boot
	bootedAt time.Time // for didIRebootMyself: uptime against the CR's age
	// apiLostAt is when the API checks began failing; zero while they pass
	// (errorCount 0).
	apiLostAt time.Time
	// lastPeerReply is timeOfLastPeerResponse, set at start.
	lastPeerReply time.Time
	// rebootAt is when the node goes down after Reboot(); zero: none.
	rebootAt time.Time
}

func (w *World) snrAgents() {
	for _, n := range w.nodes {
		a := w.snrAgentOf(n)
		if !n.Powered {
			*a = snrAgent{down: true}
			continue
		}
		if a.down {
			*a = snrAgent{bootedAt: w.now, lastPeerReply: w.now}
		}
		if !n.synced {
			continue
		}
		switch {
		case !a.rebootAt.IsZero():
			if w.now.Before(a.rebootAt) {
				w.wakeAt(a.rebootAt)
				continue
			}
			w.snrReboot(n)
		case n.CP:
			a.apiLostAt = time.Time{}
			if w.snrRebootDue(n.Name, a) {
				w.snrDecideReboot(n, a, "its SelfNodeRemediation is Pre-Reboot-Completed")
			}
		default:
			w.snrAPICheckFailed(n, a)
		}
	}
}

func (w *World) snrAgentOf(n *Node) *snrAgent {
	a := w.snrAgentState[n.Name]
	if a == nil {
		// Up since long before the episode.
		a = &snrAgent{bootedAt: w.start.Add(-time.Hour), lastPeerReply: w.now}
		w.snrAgentState[n.Name] = a
	}
	return a
}

// snrRebootDue: a live CR for the node is Pre-Reboot-Completed and the node
// has not rebooted since the CR was created.
func (w *World) snrRebootDue(node string, a *snrAgent) bool {
	for _, obj := range w.api.list(gvkSNR) {
		cr := obj.(*unstructured.Unstructured)
		if crNodeName(cr) == node && cr.GetDeletionTimestamp() == nil && snrPhase(cr) == snrPreReboot &&
			!a.bootedAt.After(cr.GetCreationTimestamp().Time) {
			return true
		}
	}
	return false
}

// snrAPICheckFailed asks the peers once the API checks failed
// MaxApiErrorThreshold times in a row. Healthy when any peer finds no CR
// for the node (which resets the count), or more than half of them cannot
// reach the API either, or some peer answered within the last 30 s;
// unhealthy when one finds a CR, or none answered for longer.
func (w *World) snrAPICheckFailed(n *Node, a *snrAgent) {
	if a.apiLostAt.IsZero() {
		a.apiLostAt = w.now
	}
	if due := a.apiLostAt.Add(snrAPICheckFailing); w.now.Before(due) {
		w.wakeAt(due)
		return
	}
	healthy, unhealthy, apiErrors, peers := 0, 0, 0, 0
	for _, p := range w.nodes {
		if p == n {
			continue
		}
		peers++
		switch {
		case !p.Powered || !p.synced || !linked(n, p):
			// RequestFailed
		case !p.CP:
			apiErrors++
		case w.snrExistsFor(n.Name):
			unhealthy++
		default:
			healthy++
		}
	}
	if healthy+unhealthy+apiErrors > 0 {
		a.lastPeerReply = w.now
	}
	switch {
	case healthy > 0:
		a.apiLostAt = w.now
	case unhealthy > 0:
		w.snrDecideReboot(n, a, "a peer found its SelfNodeRemediation")
	case apiErrors > peers/2:
	case w.now.After(a.lastPeerReply.Add(snrNoPeersResponseMax)):
		w.snrDecideReboot(n, a, "isolated: no peer answered")
	default:
		w.wakeAt(a.lastPeerReply.Add(snrNoPeersResponseMax + time.Second))
	}
}

// snrExistsFor: a SelfNodeRemediation names the node, deleted or not.
func (w *World) snrExistsFor(node string) bool {
	for _, obj := range w.api.list(gvkSNR) {
		if crNodeName(obj) == node {
			return true
		}
	}
	return false
}

// snrDecideReboot calls Reboot(): the node goes down at once (software
// reboot) or when the watchdog it stopped feeding fires (rebooter.go,
// Reboot).
func (w *World) snrDecideReboot(n *Node, a *snrAgent, why string) {
	a.rebootAt = w.now.Add(w.sc.SNR.WatchdogDelay)
	w.wakeAt(a.rebootAt)
	w.tracef("snr", "agent on %s reboots it: %s", n.Name, why)
	if !w.now.Before(a.rebootAt) {
		w.snrReboot(n)
	}
}

// snrReboot power-cycles the node as FAR's reboot does (fenceOff): off
// now, on after BootTime unless a fault keeps it off.
func (w *World) snrReboot(n *Node) {
	w.fenceOff(n, "SNR agent reboot", w.sc.SNR.BootTime)
	w.snrAgentOf(n).down = true
}
