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

// Package protection answers, ahead of any failure, whether each s3gw pod a
// template selects would be moved off its node if that node failed now,
// and how fast: the protection report in the template's status.
//
// It decides nothing itself. Whether the remediation would move a pod is
// step.IfNodeFailed, the failover decision run on the imagined
// failure; this package adds whether a NodeHealthCheck would start that
// remediation (ReferencingHealthCheck) and the expected RTO (ExpectedRTO),
// and assembles the report (Report). No I/O: the controller observes.
package protection
