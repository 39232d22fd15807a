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

// Package worldmodel is the safety proof of docs/safety.md §8: the real
// RemediationReconciler (controller.go is the only file that knows how it
// is wired) against a model of the physical cluster and of the neighbours'
// code, checked by what the s3gw gateway reads.
//
// world.go and engine.go are the physical truth: machines, networks, the
// engine and replica processes and their disks. Every other component
// keeps the API view as its upstream code does, and names the file and
// function it follows: the kubelet, the node lifecycle controller, taint
// eviction and Pod GC, the attach-detach controller, Longhorn's manager,
// NodeHealthCheck, FAR, SNR and an admin. It is written from the
// neighbours' code, not from the operator's rules or from
// test/attachrules, so that a wrong rule shared by the operator and its
// other tests cannot hide a hole here too.
//
// invariant.go is the check: every read returns the last acknowledged
// value (or a write in flight at a crash, consistently). attribution.go
// says whose loss it is: an episode that lost writes is played again with
// the operator installed but never acting, coupled to the first run's
// draws, and a loss is the operator's when the baseline does not expose
// it, exposes it later or exposes less. The run fails on an operator-caused
// loss in no class docs/safety.md §7 documents.
//
// Episodes are drawn from a seed (scenario.go) with hazards an episode may
// have or not (hazards.go) and the neighbours' settings (neighbours.go);
// worldmodel_test.go lists the environment that selects them.
package worldmodel
