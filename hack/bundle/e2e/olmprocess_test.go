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

package e2e

import "testing"

func TestShutdownRacePanic(t *testing.T) {
	// The tail of the olm operator's log in the CI run that met the race.
	const race = `{"level":"error","msg":"Reconciler error","error":"Patch \"https://127.0.0.1:45529/apis/...\": context canceled"}
panic: send on closed channel

goroutine 423 [running]:
github.com/operator-framework/operator-lifecycle-manager/pkg/lib/queueinformer.(*operator).processNextWorkItem(0xa291ac7c2c0, {0x2e8eb50, 0xa291ab2e050}, 0xa291af9c840)
	github.com/operator-framework/operator-lifecycle-manager@v0.38.0/pkg/lib/queueinformer/queueinformer_operator.go:319 +0xb0d
`
	tests := []struct {
		name string
		log  string
		want bool
	}{
		{"the queueinformer's send on its closed atLevel channel", race, true},
		{"a clean exit", `time="..." level=info msg="shutting down"`, false},
		{"the same panic elsewhere", "panic: send on closed channel\n\ngoroutine 7 [running]:\nmain.run()\n", false},
		{"another panic in the queueinformer", "panic: runtime error: invalid memory address or nil pointer dereference\n" +
			"github.com/operator-framework/operator-lifecycle-manager/pkg/lib/queueinformer.(*operator).processNextWorkItem(...)\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShutdownRacePanic(tt.log); got != tt.want {
				t.Errorf("ShutdownRacePanic() = %v, want %v", got, tt.want)
			}
		})
	}
}
