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

// Package eventrecorder lets medik8s/common's event helpers, written for the
// legacy core/v1 recorder, emit events.k8s.io/v1 Events through
// controller-runtime's current recorder.
package eventrecorder

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record"
)

// Legacy adapts an events.k8s.io recorder to record.EventRecorder.
type Legacy struct {
	Recorder events.EventRecorder
}

var _ record.EventRecorder = Legacy{}

// Event records an event; the reason doubles as the action the new API asks for.
func (l Legacy) Event(object runtime.Object, eventtype, reason, message string) {
	l.Recorder.Eventf(object, nil, eventtype, reason, reason, "%s", message)
}

// Eventf records an event with a formatted message.
func (l Legacy) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	l.Event(object, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

// AnnotatedEventf records an event; events.k8s.io Events carry no annotations,
// so they are dropped.
func (l Legacy) AnnotatedEventf(object runtime.Object, _ map[string]string, eventtype, reason, messageFmt string, args ...any) {
	l.Eventf(object, eventtype, reason, messageFmt, args...)
}
