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

package controllers

import (
	"github.com/s3gw-tech/s3gw-remediation/controllers/prepull"
	"github.com/s3gw-tech/s3gw-remediation/controllers/protection"
	"github.com/s3gw-tech/s3gw-remediation/controllers/remediation"
	"github.com/s3gw-tech/s3gw-remediation/controllers/template"
)

// The reconcilers, each in a package of its own, under the names the
// manager, the test harnesses and the world model use.
type (
	// RemediationReconciler moves s3gw off the node an S3GWRemediation names.
	RemediationReconciler = remediation.Reconciler
	// Intervals are the remediation's backstop re-checks.
	Intervals = remediation.Intervals
	// ProtectionReconciler keeps each template's protection report.
	ProtectionReconciler = protection.Reconciler
	// TemplateReconciler marks templates as supporting multiple templates.
	TemplateReconciler = template.Reconciler
	// PrePullReconciler keeps the gateways' images on their candidate nodes.
	PrePullReconciler = prepull.Reconciler
)

// Finalizer keeps an S3GWRemediation until what it added is cleaned up.
const Finalizer = remediation.Finalizer

// NewRemediationReconciler returns a remediation reconciler with the
// default intervals.
var NewRemediationReconciler = remediation.NewReconciler

// DefaultReportInterval is the least time between two writes of one
// template's protection report.
const DefaultReportInterval = protection.DefaultReportInterval

// DefaultIntervals are the production backstops.
func DefaultIntervals() Intervals { return remediation.DefaultIntervals() }
