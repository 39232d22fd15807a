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

package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"
)

// Write is one write request of the manager that may have changed
// something, from kube-apiserver's audit log: answered with success, or cut
// short (Unsure).
type Write struct {
	Verb                            string
	APIGroup, Resource, Subresource string
	Namespace, Name                 string
	Code                            int
	At                              time.Time
	// Reason is an Event's reason (the audit policy logs the manager's
	// Event creates with their body).
	Reason string
	// Unsure is set when the request ended without a definite answer (a
	// 5xx such as 504: the client went away, typically killed, while
	// kube-apiserver handled it). Such a write may or may not have been
	// stored.
	Unsure bool
}

// succeeded is true when kube-apiserver answered with success.
func (w Write) succeeded() bool { return w.Code >= 200 && w.Code <= 299 }

func (w Write) String() string {
	res := w.Resource
	if w.Subresource != "" {
		res += "/" + w.Subresource
	}
	return fmt.Sprintf("%s %s %s/%s (%d)", w.Verb, res, w.Namespace, w.Name, w.Code)
}

// auditEvent holds the fields of an audit.k8s.io/v1 Event that Write needs.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		APIGroup    string `json:"apiGroup"`
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time `json:"stageTimestamp"`
	RequestObject  *struct {
		Reason string `json:"reason"`
	} `json:"requestObject"`
}

// ManagerWrites lists the manager's writes so far that succeeded or may
// have (Unsure), in order, from the audit log the cluster keeps with
// ManagerAuditPolicy. Refused attempts (a conflict, a NotFound, a
// precondition or admission failure) are left out: they changed nothing.
func (e *Env) ManagerWrites() ([]Write, error) {
	all, err := e.managerRequests()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, w := range all {
		if w.Unsure || w.succeeded() {
			out = append(out, w)
		}
	}
	return out, nil
}

// ManagerEventsDropped lists the manager's Event creates with reason about
// the object named regarding (in namespace) that kube-apiserver answered
// with an error other than AlreadyExists, as it does while etcd is away.
// client-go's events broadcaster never retries those
// (tools/events/event_broadcaster.go, recordEvent: a StatusError is
// "rejected (will not retry!)"), so each may be an event lost for good;
// whether it was stored anyway, nobody knows.
func (e *Env) ManagerEventsDropped(namespace, regarding, reason string) ([]Write, error) {
	all, err := e.managerRequests()
	if err != nil {
		return nil, err
	}
	var out []Write
	for _, w := range all {
		if w.Resource == "events" && w.Verb == "create" && w.Namespace == namespace && w.Reason == reason &&
			strings.HasPrefix(w.Name, regarding+".") && !w.succeeded() && w.Code != http.StatusConflict {
			out = append(out, w)
		}
	}
	return out, nil
}

// managerRequests lists every write request of the manager that completed,
// whatever its answer; Unsure is set on the 5xx ones.
func (e *Env) managerRequests() ([]Write, error) {
	f, err := os.Open(e.Cluster.AuditLogPath())
	if err != nil {
		return nil, fmt.Errorf("reading the audit log (set cluster.Options.AuditPolicy to harness.ManagerAuditPolicy()): %w", err)
	}
	defer func() { _ = f.Close() }()
	var out []Write
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			// kube-apiserver killed mid-line leaves a partial last line.
			continue
		}
		if ev.Stage != "ResponseComplete" || ev.ObjectRef == nil || ev.ResponseStatus == nil {
			continue
		}
		code := ev.ResponseStatus.Code
		reason := ""
		if ev.RequestObject != nil {
			reason = ev.RequestObject.Reason
		}
		out = append(out, Write{
			Verb: ev.Verb, APIGroup: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource,
			Subresource: ev.ObjectRef.Subresource, Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name,
			Code: code, At: ev.StageTimestamp, Unsure: code >= 500, Reason: reason,
		})
	}
	return out, sc.Err()
}
