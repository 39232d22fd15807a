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

import (
	"flag"
	"time"

	"github.com/s3gw-tech/s3gw-remediation/controllers"
	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
)

// nodeMonitorGracePeriod is kube-controller-manager's, for the expected RTO
// of the protection report; the manager cannot read it from the cluster.
var nodeMonitorGracePeriod time.Duration

// reportInterval is the least time between two writes of one template's
// protection report.
var reportInterval time.Duration

func init() {
	flag.DurationVar(&nodeMonitorGracePeriod, "node-monitor-grace-period", protection.DefaultNodeMonitorGracePeriod,
		"kube-controller-manager's --node-monitor-grace-period, used in the protection report's expected RTO.")
	flag.DurationVar(&reportInterval, "protection-report-interval", controllers.DefaultReportInterval,
		"The least time between two passes of one template's protection report: a change within it is read, and reported in status and metrics, when it ends (0: every change at once).")
}
