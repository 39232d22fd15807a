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

package evidence

import (
	"fmt"
	"time"

	s3gwv1alpha1 "github.com/s3gw-tech/s3gw-remediation/api/v1alpha1"
	"github.com/s3gw-tech/s3gw-remediation/internal/failover"
)

// Remediator kinds the manager's role may read as evidence (and create as
// delegates); other kinds need a ClusterRole of their own.
const (
	groupFAR = "fence-agents-remediation.medik8s.io"
	groupSNR = "self-node-remediation.medik8s.io"
)

// SourceRemediators names the listed remediators' source.
const SourceRemediators = "Remediators"

// remediators accepts, kind by kind as spec.fencing.remediators lists
// them, a remediator's CR for the node whose proving condition became True
// during the node's current failure.
var remediators = Source{
	Name:       SourceRemediators,
	Summary:    "a listed remediator's CR for the node (FAR, SNR) whose condition became True during this failure",
	Field:      "remediators",
	EnabledCEL: "(has(self.remediators) && size(self.remediators) > 0)",
	Enabled:    func(f s3gwv1alpha1.FencingSpec) bool { return len(f.Remediators) > 0 },
	Judge: func(o failover.State, v *Verdict) {
		for _, listed := range o.Spec.Fencing.Remediators {
			judgeRemediator(o, listed, v)
		}
	},
	// Each listed remediator that can prove anything reports success now.
	Imagine: func(o failover.State, f *failover.State) {
		f.Evidence.InvalidRemediators = o.Evidence.InvalidRemediators
		for _, listed := range o.Spec.Fencing.Remediators {
			if _, invalid := o.Evidence.InvalidRemediators[listed.Kind]; !invalid {
				f.Evidence.Remediators = append(f.Evidence.Remediators, succeededFor(listed.Kind, f.Node.Name, f.Now))
			}
		}
	},
	ProvesShutdown: true,
	MayStillProve:  remediatorMayStillReport,
	Needs: []failover.Need{{Group: groupFAR, Resource: "fenceagentsremediations", Verbs: failover.Read},
		{Group: groupSNR, Resource: "selfnoderemediations", Verbs: failover.Read}},
}

// judgeRemediator accepts each CR of the listed kind whose condition became
// True during the node's current failure.
func judgeRemediator(o failover.State, listed s3gwv1alpha1.RemediatorEvidence, v *Verdict) {
	if why, invalid := o.Evidence.InvalidRemediators[listed.Kind]; invalid {
		v.lacks(listed.Kind + ": " + why)
		v.blocks(listed.Kind)
		return
	}
	found, fenced := false, false
	for _, cr := range o.Evidence.Remediators {
		if cr.Kind != listed.Kind {
			continue
		}
		found = true
		if why := fencedMissing(o, cr, listed.ConditionType); why != "" {
			v.lacks(cr.Kind + "/" + cr.Name + " " + why)
			continue
		}
		fenced = true
		v.proves(cr.Kind + "/" + cr.Name)
	}
	if !found {
		v.lacks(fmt.Sprintf("no %s for the node", listed.Kind))
	}
	if !fenced {
		v.blocks(listed.Kind)
	}
}

// remediatorMayStillReport is true while a listed remediator kind that can
// prove anything has no CR for the node yet (NHC may still create one) or
// one that has not failed.
func remediatorMayStillReport(o failover.State) bool {
	for _, listed := range o.Spec.Fencing.Remediators {
		if _, invalid := o.Evidence.InvalidRemediators[listed.Kind]; invalid {
			continue
		}
		found, working := false, false
		for _, cr := range o.Evidence.Remediators {
			if cr.Kind == listed.Kind {
				found, working = true, working || cr.Failure == ""
			}
		}
		if !found || working {
			return true
		}
	}
	return false
}

// fencedMissing returns why a fencer's CR does not prove the current
// failure fenced, or "" when it does.
func fencedMissing(o failover.State, cr failover.RemediatorCR, conditionType string) string {
	switch {
	case !cr.Fenced:
		return fmt.Sprintf("has no %s=True", conditionType)
	}
	if why := notCurrent(o, failover.CRSighting(cr), &cr.CreatedAt); why != "" {
		return fmt.Sprintf("%s=True %s", conditionType, why)
	}
	return ""
}

// succeededFor is a fencer's CR for the node that reports success now.
func succeededFor(kind, node string, now time.Time) failover.RemediatorCR {
	return failover.RemediatorCR{Kind: kind, Name: node, Fenced: true, CreatedAt: now}
}
