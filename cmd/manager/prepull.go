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
	"flag"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/s3gw-tech/s3gw-remediation/internal/protection"
	"github.com/s3gw-tech/s3gw-remediation/internal/template"
)

// prePullImageFlag is --prepull-image: the image the pre-pull pods run
// (it must hold /prepull); empty means the manager's own.
var prePullImageFlag string

// imagePullEstimate is what a cold candidate node adds to a pod's expected
// RTO in the protection report.
var imagePullEstimate time.Duration

func init() {
	flag.StringVar(&prePullImageFlag, "prepull-image", "",
		"Image of the pre-pull pods (spec.prePull): it must hold the /prepull program and be pullable in the gateways' namespaces. "+
			"Empty means the manager's own image, read from its pod.")
	flag.DurationVar(&imagePullEstimate, "image-pull-estimate", protection.DefaultImagePullEstimate,
		"How long a replacement on a node without the gateway's images takes to pull them: added to the protection report's expected RTO "+
			"when a candidate node is cold.")
}

// managerContainer is the manager's container name in config/manager, the
// chart and the CSV.
const managerContainer = "manager"

// prePullImage is --prepull-image or else the manager's own image, read
// from its pod: named by its hostname, in DEPLOYMENT_NAMESPACE. The reason
// says where it came from, or why it is unknown (outside a cluster).
func prePullImage(ctx context.Context, reader client.Reader, getenv func(string) string, hostname func() (string, error)) (image, why string) {
	if prePullImageFlag != "" {
		return prePullImageFlag, "--prepull-image"
	}
	namespace := getenv(template.NamespaceEnv)
	name, err := hostname()
	if namespace == "" || err != nil {
		return "", "not running in a pod (" + template.NamespaceEnv + " unset)"
	}
	pod := &corev1.Pod{}
	if err := reader.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		return "", fmt.Sprintf("reading the manager's pod %s/%s: %v", namespace, name, err)
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == managerContainer {
			return c.Image, "the manager's pod " + namespace + "/" + name
		}
	}
	return "", "the manager's pod " + namespace + "/" + name + " has no container " + managerContainer
}
