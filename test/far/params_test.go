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

package far

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestValidateParams: FAR's validateFenceAgentParams cases.
func TestValidateParams(t *testing.T) {
	const node = "worker-1"
	for _, tc := range []struct {
		name        string
		spec        Spec
		secrets     map[string]string
		templated   bool
		want        map[string]string
		wantErr     error
		errContains string
	}{{
		name:    "shared parameters alone do not name the node",
		spec:    Spec{SharedParameters: map[string]string{"--ip": "10.0.0.1", "--action": "off"}},
		wantErr: ErrMissingParams,
	}, {
		name:    "no parameters at all",
		wantErr: ErrMissingParams,
	}, {
		name: "a {{.NodeName}} template in the shared parameters names it",
		spec: Spec{SharedParameters: map[string]string{"--plug": "{{.NodeName}}", "--action": "off"}},
		want: map[string]string{"--plug": node, "--action": "off"},
	}, {
		name: "node parameters name it, and override shared ones",
		spec: Spec{SharedParameters: map[string]string{"--ip": "10.0.0.1"},
			NodeParameters: map[string]map[string]string{"--ip": {node: "10.0.0.9"}, "--port": {"other": "2"}}},
		want: map[string]string{"--ip": "10.0.0.9"},
	}, {
		name: "node parameters for other nodes only still count",
		spec: Spec{SharedParameters: map[string]string{"--ip": "10.0.0.1"},
			NodeParameters: map[string]map[string]string{"--port": {"other": "2"}}},
		want: map[string]string{"--ip": "10.0.0.1"},
	}, {
		name:      "a templated shared Secret names it",
		spec:      Spec{SharedParameters: map[string]string{"--type": "file"}},
		secrets:   map[string]string{"--status-file": "/run/" + node},
		templated: true,
		want:      map[string]string{"--type": "file", "--status-file": "/run/" + node},
	}, {
		name:    "an untemplated Secret does not",
		spec:    Spec{SharedParameters: map[string]string{"--type": "file"}},
		secrets: map[string]string{"--password": "x"},
		wantErr: ErrMissingParams,
	}, {
		name:        "a Secret parameter may not repeat a spec parameter",
		spec:        Spec{SharedParameters: map[string]string{"--plug": "{{.NodeName}}", "--password": "a"}},
		secrets:     map[string]string{"--password": "b"},
		errContains: "invalid multiple definition of FAR parameter, parameter name: --password",
	}, {
		name:    "only reboot and off",
		spec:    Spec{SharedParameters: map[string]string{"--plug": "{{.NodeName}}", "--action": "on"}},
		wantErr: ErrUnsupportedAction,
	}, {
		name:    "also in node parameters",
		spec:    Spec{NodeParameters: map[string]map[string]string{"--action": {node: "status"}}},
		wantErr: ErrUnsupportedAction,
	}, {
		name:        "a broken template",
		spec:        Spec{SharedParameters: map[string]string{"--plug": "{{.NodeName"}},
		errContains: "failed to parse template",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			far := &FenceAgentsRemediation{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: tc.spec}
			got, err := validateParams(far, node, tc.secrets, tc.templated)
			switch {
			case tc.wantErr != nil:
				g.Expect(err).To(MatchError(tc.wantErr))
			case tc.errContains != "":
				g.Expect(err).To(MatchError(ContainSubstring(tc.errContains)))
			default:
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(got).To(Equal(tc.want))
			}
		})
	}
}

// TestBuildParams reads the Secrets: the node's Secret overrides the shared
// one, the shared one is templated, and --action defaults to reboot.
func TestBuildParams(t *testing.T) {
	f := newFixture(t)
	g := f.g
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: farNamespace, Name: f.ns + "-shared"},
		StringData: map[string]string{"--username": "admin", "--password": "shared", "--status-file": "/run/{{.NodeName}}"}})
	f.create(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: farNamespace, Name: f.ns + "-own"},
		StringData: map[string]string{"--password": "own"}})
	cr := &FenceAgentsRemediation{ObjectMeta: metav1.ObjectMeta{Namespace: farNamespace, Name: "x",
		Annotations: map[string]string{"remediation.medik8s.io/node-name": f.node}},
		Spec: Spec{Agent: "fence_dummy", SharedParameters: map[string]string{"--type": "file"},
			SharedSecretName: ptr.To(f.ns + "-shared"), NodeSecretNames: map[string]string{f.node: f.ns + "-own"}}}

	var params map[string]string
	g.Eventually(func() (err error) { // FAR reads Secrets from its cache
		params, _, err = BuildParams(f.ctx, far.Client, cr)
		return err
	}).Should(Succeed())
	g.Expect(params).To(Equal(map[string]string{"--type": "file", "--username": "admin", "--password": "own",
		"--status-file": "/run/" + f.node, "--action": ActionReboot}))
	g.Expect(Command("fence_dummy", params)).To(Equal([]string{"fence_dummy", "--action=reboot", "--password=own",
		"--status-file=/run/" + f.node, "--type=file", "--username=admin"}))

	cr.Spec.SharedSecretName = ptr.To("missing")
	_, retry, err := BuildParams(f.ctx, far.Client, cr)
	g.Expect(err).To(HaveOccurred())
	g.Expect(retry).To(BeTrue(), "a Secret FAR cannot read is retried")
}
