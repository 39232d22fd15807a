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

package cluster

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// stage is the part of a kwok Stage these tests read.
type stage struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		ResourceRef struct {
			Kind string `json:"kind"`
		} `json:"resourceRef"`
		Selector struct {
			MatchExpressions []struct {
				Key string `json:"key"`
			} `json:"matchExpressions"`
		} `json:"selector"`
		Delay struct {
			DurationFrom struct {
				ExpressionFrom string `json:"expressionFrom"`
			} `json:"durationFrom"`
		} `json:"delay"`
	} `json:"spec"`
}

func readStages(t *testing.T) map[string]stage {
	t.Helper()
	paths, err := writeStages(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]stage{}
	for _, p := range paths {
		data, err := stages.ReadFile("stages/" + p[strings.LastIndex(p, "/")+1:])
		if err != nil {
			t.Fatal(err)
		}
		var s stage
		if err := yaml.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if s.Kind != "Stage" {
			t.Errorf("%s: kind %q, want Stage", p, s.Kind)
		}
		byName[s.Metadata.Name] = s
	}
	return byName
}

func TestStagesCoverNodeAndPodLifecycle(t *testing.T) {
	got := readStages(t)
	for name, kind := range map[string]string{
		"node-initialize":           "Node",
		"node-heartbeat-with-lease": "Node",
		"pod-create":                "Pod",
		"pod-ready":                 "Pod",
		"pod-delete":                "Pod",
	} {
		if s, ok := got[name]; !ok || s.Spec.ResourceRef.Kind != kind {
			t.Errorf("stage %s for %s missing (have %v)", name, kind, got)
		}
	}
}

// The pod stages and longhornsim meet at VolumesMountedAnnotation; a typo
// on either side would make pods with volumes start unattached or never.
func TestPodStagesHonourVolumesMountedAnnotation(t *testing.T) {
	got := readStages(t)
	for _, name := range []string{"pod-ready", "pod-delete"} {
		found := false
		for _, e := range got[name].Spec.Selector.MatchExpressions {
			found = found || strings.Contains(e.Key, `["`+VolumesMountedAnnotation+`"]`)
		}
		if !found {
			t.Errorf("stage %s does not select on %s", name, VolumesMountedAnnotation)
		}
	}
}

// The simulated image pull is the pod-ready Stage's delay, read from the
// annotations the benchmark sets; a typo would make cold runs warm.
func TestPodReadyDelaysOnlyColdNodes(t *testing.T) {
	delay := readStages(t)["pod-ready"].Spec.Delay.DurationFrom.ExpressionFrom
	for _, annotation := range []string{ImagePullTimeAnnotation, ColdNodesAnnotation} {
		if !strings.Contains(delay, `["`+annotation+`"]`) {
			t.Errorf("pod-ready's delay does not read %s: %s", annotation, delay)
		}
	}
	if !strings.Contains(delay, ".spec.nodeName") {
		t.Errorf("pod-ready's delay does not depend on the pod's node: %s", delay)
	}
}
