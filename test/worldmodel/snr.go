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

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Self Node Remediation (medik8s/self-node-remediation at 640aac50d7ba),
// as one more escalation step of the NodeHealthCheck: a second
// NodeHealthCheck for the same nodes would wait for ours, as NHC's node
// lease serialises NodeHealthChecks (node-healthcheck-operator,
// internal/controller/resources/lease.go, ObtainNodeLease). Its template
// asks for the OutOfServiceTaint strategy, which Automatic also picks on
// Kubernetes 1.28 and later (selfnoderemediation_controller.go,
// getRuntimeStrategy). snr_manager.go is its controller, snr_agent.go its
// agent on every node.

var (
	snrGroupVersion    = schema.GroupVersion{Group: "self-node-remediation.medik8s.io", Version: medik8sVersion}
	gvkSNR             = snrGroupVersion.WithKind("SelfNodeRemediation")
	gvkSNRTemplate     = snrGroupVersion.WithKind("SelfNodeRemediationTemplate")
	snrTemplateName    = "snr"
	snrStrategyOutServ = "OutOfServiceTaint"
)

// SNRSpec is the Self Node Remediation step of the NodeHealthCheck.
type SNRSpec struct {
	// First puts SNR before the other steps; else it comes after ours.
	First   bool
	Timeout time.Duration
	// RebootDuration is how long after preparing the reboot the manager
	// assumes the node rebooted (status.timeAssumedRebooted): the
	// calculated minimum, or a longer safeTimeToAssumeNodeRebootedSeconds.
	RebootDuration time.Duration
	// WatchdogDelay is how long after the agent decides to reboot the node
	// goes down: at once by software reboot, at most the watchdog timeout
	// once it stops feeding an armed watchdog.
	WatchdogDelay time.Duration
	BootTime      time.Duration
}

// The SelfNodeRemediationConfig defaults
// (api/v1alpha1/selfnoderemediationconfig_types.go) and what the agent and
// the reboot calculator derive from them.
const (
	snrAPICheckInterval   = 15 * time.Second
	snrAPIServerTimeout   = 5 * time.Second
	snrMaxAPIErrors       = 3
	snrWatchdogTimeout    = 60 * time.Second // reboot/calculator.go, GetRebootDuration: default when the node has no annotation
	snrNoPeersResponseMax = 30 * time.Second // reboot/calculator.go, MaxTimeForNoPeersResponse
	// snrOutOfServiceTimeout: the manager waits this long past
	// timeAssumedRebooted for pods and attachments to go
	// (selfnoderemediation_controller.go, OutOfServiceTimeoutDuration).
	snrOutOfServiceTimeout = time.Minute
	// snrAPICheckFailing is when the agent, cut from the API server, first
	// asks its peers: after MaxApiErrorThreshold failed checks, each an
	// interval plus a timed-out request (apicheck/check.go, Start).
	snrAPICheckFailing = snrMaxAPIErrors * (snrAPICheckInterval + snrAPIServerTimeout)
	// snrMinRebootDuration is calculateMinimumRebootDuration with the
	// defaults: the API checks, the peers' 30 s floor, the watchdog timeout
	// and 30 s (reboot/calculator.go).
	snrMinRebootDuration = snrAPICheckFailing + snrNoPeersResponseMax + snrWatchdogTimeout + 30*time.Second
)

// generateSNR draws the SNR step, in half the episodes (SNR's reboots
// move s3gw before the operator would in most of them, so an SNR in every
// episode would leave the operator's own rules little to do). It is drawn
// in every episode, after every other draw, so that the snr hazard changes
// nothing else.
func generateSNR(r *rand.Rand) *SNRSpec {
	present := chance(r, 0.5)
	spec := &SNRSpec{First: chance(r, 0.5), Timeout: pick(r, 5*time.Minute, 10*time.Minute),
		RebootDuration: snrMinRebootDuration + pick(r, time.Duration(0), 0, time.Minute),
		WatchdogDelay:  pick(r, time.Duration(0), between(r, 0, snrWatchdogTimeout)),
		BootTime:       between(r, 30*time.Second, 3*time.Minute)}
	if !present {
		return nil
	}
	return spec
}
