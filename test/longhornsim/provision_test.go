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

package longhornsim

import (
	"testing"

	. "github.com/onsi/gomega"
	storagev1 "k8s.io/api/storage/v1"
)

func TestRevisionCounterDisabled(t *testing.T) {
	tests := []struct {
		name     string
		params   map[string]string
		disabled bool
		err      bool
	}{
		{"Longhorn's CSI default: off", nil, true, false},
		{"other parameters only: off", map[string]string{"numberOfReplicas": "3"}, true, false},
		{"s3gw's class: on", map[string]string{"disableRevisionCounter": "false"}, false, false},
		{"explicitly off", map[string]string{"disableRevisionCounter": "true"}, true, false},
		{"not a boolean", map[string]string{"disableRevisionCounter": "no thanks"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			disabled, err := revisionCounterDisabled(tt.params)
			if tt.err {
				g.Expect(err).To(HaveOccurred())
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(disabled).To(Equal(tt.disabled))
		})
	}
}

// TestInstalledClassKeepsTheRevisionCounter: the class the simulator
// installs is the one docs/configuration.md asks s3gw for.
func TestInstalledClassKeepsTheRevisionCounter(t *testing.T) {
	g := NewWithT(t)
	var class *storagev1.StorageClass
	for _, obj := range footprint() {
		if c, ok := obj.(*storagev1.StorageClass); ok && c.Name == StorageClassName {
			class = c
		}
	}
	g.Expect(class).NotTo(BeNil())
	disabled, err := revisionCounterDisabled(class.Parameters)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(disabled).To(BeFalse())
}
