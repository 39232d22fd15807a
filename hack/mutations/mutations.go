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

// Mutation is a deliberate defect in the source: the world-model test must
// find violations with it, or it is blind to that defect.
type Mutation struct {
	// Name says which defect it plants.
	Name string
	// File is relative to the repository root.
	File string
	// Old must occur exactly once in File; it is replaced by New.
	Old, New string
}

// mutations are the defects the model must catch. Keep Old exact: when the
// code moves on, the run fails and names the mutation to update.
var mutations = []Mutation{
	{
		Name: "storage isolation ignores a replica on the failed node",
		File: "internal/longhorn/state.go",
		Old:  "\t\tcase r.Spec.NodeID == node:\n\t\t\tp.OnNode = true\n",
		New:  "\t\tcase r.Spec.NodeID == node:\n\t\t\tp.OnNode = false\n",
	},
	{
		Name: "a remediator condition counts whatever its status",
		File: "internal/fencing/remediators.go",
		Old:  "\t\t\treturn m[\"status\"] == string(metav1.ConditionTrue)\n",
		New:  "\t\t\treturn m[\"status\"] != \"\"\n",
	},
}
