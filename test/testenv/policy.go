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

package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/s3gw-tech/s3gw-remediation/test/cluster"
)

// ManagerUser is the manager's service account as config/default names it;
// tests impersonate it to act as the manager.
const ManagerUser = "system:serviceaccount:s3gw-remediation-system:s3gw-remediation-controller-manager"

// PolicyDir holds the manager's admission policies, a kustomize component.
const PolicyDir = "config/policy"

// policyMessagePrefix starts every message of the policies in PolicyDir.
const policyMessagePrefix = "s3gw-remediation may "

// ManagerPolicy returns the objects of the files PolicyDir's
// kustomization lists, as they are there (without config/default's name
// prefix).
func ManagerPolicy() ([]*unstructured.Unstructured, error) {
	dir := filepath.Join(RepoRoot(), PolicyDir)
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("decoding %s/kustomization.yaml: %w", PolicyDir, err)
	}
	paths := make([]string, 0, len(k.Resources))
	for _, name := range k.Resources {
		paths = append(paths, filepath.Join(dir, name))
	}
	objs, err := cluster.ReadManifestFiles(paths...)
	if err != nil {
		return nil, err
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s lists no objects", PolicyDir)
	}
	return objs, nil
}

// InstallManagerPolicy creates the admission policies with the admin
// client and waits until the API server enforces them on manager, a client
// acting as the manager's service account with its RBAC: policies load
// asynchronously, so a write right after creation may pass unchecked.
func InstallManagerPolicy(ctx context.Context, admin, manager client.Client) error {
	objs, err := ManagerPolicy()
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := admin.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return waitEnforced(ctx, admin, manager)
}

// waitEnforced makes a forbidden dry-run write of each kind the policies
// cover, as the manager, until the API server refuses both.
func waitEnforced(ctx context.Context, admin, manager client.Client) error {
	suffix := rand.String(5)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "policy-probe-" + suffix}}
	pv := "policy-probe-pv"
	va := &storagev1.VolumeAttachment{
		ObjectMeta: metav1.ObjectMeta{Name: "policy-probe-" + suffix},
		Spec: storagev1.VolumeAttachmentSpec{Attacher: "probe.example.com", NodeName: node.Name,
			Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
	}
	for _, obj := range []client.Object{node, va} {
		if err := admin.Create(ctx, obj); err != nil {
			return fmt.Errorf("creating the policy probe %T: %w", obj, err)
		}
	}
	defer func() {
		_ = admin.Delete(context.WithoutCancel(ctx), va)
		_ = admin.Delete(context.WithoutCancel(ctx), node)
	}()
	label := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"labels":{"policy-probe":"true"}}}`))
	probes := map[string]func() error{
		"node label": func() error { return manager.Patch(ctx, node.DeepCopy(), label, client.DryRunAll) },
		"VolumeAttachment delete": func() error {
			return manager.Delete(ctx, va.DeepCopy(), client.DryRunAll)
		},
	}
	probes["unmarked DaemonSet create"] = func() error {
		return manager.Create(ctx, daemonSetProbe(suffix), client.DryRunAll)
	}
	if far := farProbe(suffix); served(manager, far) {
		probes["unmarked FenceAgentsRemediation create"] = func() error {
			return manager.Create(ctx, far.DeepCopy(), client.DryRunAll)
		}
	}
	for name, write := range probes {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			last = write()
			return apierrors.IsForbidden(last) && strings.Contains(last.Error(), policyMessagePrefix), nil
		})
		if err != nil {
			return fmt.Errorf("the admission policies do not refuse the manager's %s: %w", name, errors.Join(err, last))
		}
	}
	return nil
}

// farProbe is a FenceAgentsRemediation without the manager's marker, which
// the delegate policy refuses it to create.
func farProbe(suffix string) *unstructured.Unstructured {
	far := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"agent": "fence_dummy"}}}
	far.SetAPIVersion("fence-agents-remediation.medik8s.io/v1alpha1")
	far.SetKind("FenceAgentsRemediation")
	far.SetNamespace(metav1.NamespaceDefault)
	far.SetName("policy-probe-" + suffix)
	return far
}

// daemonSetProbe is a DaemonSet without the pre-pull label, which the
// pre-pull policy refuses the manager to create.
func daemonSetProbe(suffix string) *appsv1.DaemonSet {
	labels := map[string]string{"policy-probe": suffix}
	return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "policy-probe-" + suffix},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}}}}}
}

// served reports whether the API server serves obj's kind.
func served(c client.Client, obj client.Object) bool {
	gvk := obj.GetObjectKind().GroupVersionKind()
	_, err := c.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}
