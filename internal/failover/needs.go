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

package failover

// Need is an API right an evidence source's or a release strategy's adapter
// uses: verbs on a resource, and the admission policy (config/policy) that
// narrows its writes to what the adapter writes. test/manifests checks the
// role generated from the +kubebuilder:rbac markers grants each one, and
// that the named policy matches the write.
type Need struct {
	Group, Resource string
	Verbs           []string
	// Policy names the ValidatingAdmissionPolicy that limits the writes, or
	// is empty for reads and writes no policy narrows.
	Policy string
}

// Verbs, groups and resources the descriptors name.
const (
	VerbPatch  = "patch"
	VerbDelete = "delete"

	GroupLonghorn = "longhorn.io"
	Nodes         = "nodes"
)

// Read is what reading a resource through the manager's cache takes; Write
// adds creating, patching and deleting it.
var (
	Read  = []string{"get", "list", "watch"}
	Write = append(Read[:len(Read):len(Read)], "create", VerbPatch, VerbDelete)
)
