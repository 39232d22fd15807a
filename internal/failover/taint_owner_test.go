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

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

func TestTaintOwnership(t *testing.T) {
	added := testFencedAt
	record := &TaintOwnerRecord{Owner: "uid-remediation", TimeAdded: added}
	at := func(t time.Time) *Taint { return &Taint{TimeAdded: &t} }
	tests := []struct {
		name   string
		record *TaintOwnerRecord
		taint  *Taint
		owner  types.UID
		stale  bool
	}{
		{"the taint the annotation names: ours", record, at(added), "uid-remediation", false},
		{"same second, sub-second part dropped by the API", record, at(added.Add(400 * time.Millisecond)), "uid-remediation", false},
		{"no annotation: someone else's taint", nil, at(added), "", false},
		{"no annotation, no taint", nil, nil, "", false},
		{"the taint was removed by key: the annotation is stale", record, nil, "", true},
		{"a taint added later under the stale annotation is not ours", record, at(added.Add(time.Minute)), "", true},
		{"a taint without timeAdded is not the one we stamped", record, &Taint{}, "", true},
		{"an annotation naming no owner", &TaintOwnerRecord{TimeAdded: added}, at(added), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			owner, stale := TaintOwnership(tt.record, tt.taint)
			g.Expect(owner).To(Equal(tt.owner))
			g.Expect(stale).To(Equal(tt.stale))
		})
	}
}
