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

package worldmodel

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// trace is an episode's readable timeline: physical events, what the
// components and the controller did, and the controller's own log. It is
// only kept when an episode is replayed.
type trace struct {
	lines []string
	// api also records every API write (verbose).
	api bool
}

func (w *World) tracef(source, format string, args ...any) {
	if w.trace == nil {
		return
	}
	w.trace.lines = append(w.trace.lines, fmt.Sprintf("%8.1fs %-7s %s", w.seconds(), source, fmt.Sprintf(format, args...)))
}

// traceChange records API writes when asked for.
func (w *World) traceChange(verb string, obj client.Object) {
	if w.trace == nil || !w.trace.api {
		return
	}
	w.tracef("api", "%s %s %s/%s rv=%s", verb, w.api.gvkOf(obj).Kind, obj.GetNamespace(), obj.GetName(), obj.GetResourceVersion())
}

// logger is the controller's logger: into the trace, or discarded.
func (w *World) logger() logr.Logger {
	if w.trace == nil {
		return logr.Discard()
	}
	return funcr.New(func(prefix, args string) {
		w.tracef("ctrl", "%s", strings.TrimSpace(prefix+" "+args))
	}, funcr.Options{})
}

func (t *trace) String() string {
	if t == nil {
		return ""
	}
	return strings.Join(t.lines, "\n")
}

func specString(spec any) string {
	data, err := json.Marshal(spec)
	if err != nil {
		return err.Error()
	}
	return string(data)
}
