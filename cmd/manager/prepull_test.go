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
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestPrePullImage(t *testing.T) {
	g := NewWithT(t)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "s3gw-remediation-system", Name: "controller-manager-7d9f-x2k4q"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "kube-rbac-proxy", Image: "proxy:v1"}, {Name: "manager", Image: "quay.io/s3gw/s3gw-remediation:v0.1.0"}}}}
	reader := fake.NewClientBuilder().WithObjects(pod).Build()
	inPod := func(key string) string {
		if key == "DEPLOYMENT_NAMESPACE" {
			return pod.Namespace
		}
		return ""
	}
	hostname := func() (string, error) { return pod.Name, nil }
	ctx := context.Background()

	image, from := prePullImage(ctx, reader, inPod, hostname)
	g.Expect(image).To(Equal("quay.io/s3gw/s3gw-remediation:v0.1.0"), "the manager's own image")
	g.Expect(from).To(ContainSubstring(pod.Name))

	image, from = prePullImage(ctx, reader, func(string) string { return "" }, hostname)
	g.Expect(image).To(BeEmpty())
	g.Expect(from).To(ContainSubstring("not running in a pod"))

	image, from = prePullImage(ctx, reader, inPod, func() (string, error) { return "", errors.New("no hostname") })
	g.Expect(image).To(BeEmpty())
	g.Expect(from).To(ContainSubstring("not running in a pod"))

	image, from = prePullImage(ctx, reader, inPod, func() (string, error) { return "elsewhere", nil })
	g.Expect(image).To(BeEmpty())
	g.Expect(from).To(ContainSubstring("reading the manager's pod"))

	prePullImageFlag = "mirror.example.com/s3gw-remediation:v0.1.0"
	defer func() { prePullImageFlag = "" }()
	image, from = prePullImage(ctx, reader, inPod, hostname)
	g.Expect(image).To(Equal(prePullImageFlag))
	g.Expect(from).To(Equal("--prepull-image"))
}
