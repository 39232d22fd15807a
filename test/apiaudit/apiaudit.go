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

// Package apiaudit counts a client's kube-apiserver requests from the
// audit log of the local cluster (cluster.Options.AuditLog): exactly, by
// the identity the client authenticated as, not sampled or estimated. The
// benchmarks report with it how many requests a remediation costs.
package apiaudit

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// Request is one API request as the audit log records it.
type Request struct {
	User      string
	UserAgent string
	// Verb is the API verb: get, list, watch, create, update, patch, delete,
	// deletecollection.
	Verb        string
	APIGroup    string
	Resource    string
	Subresource string
	Namespace   string
	Name        string
	Code        int
	// Received is when kube-apiserver received the request; for a watch,
	// when it was opened.
	Received time.Time
}

// Target is the resource the request is about, as "pods", "nodes/status"
// or "longhorn.io/volumes".
func (r Request) Target() string {
	t := r.Resource
	if r.APIGroup != "" {
		t = r.APIGroup + "/" + t
	}
	if r.Subresource != "" {
		t += "/" + r.Subresource
	}
	if t == "" {
		return "(non-resource)"
	}
	return t
}

// event is the part of an audit.k8s.io/v1 Event that Request keeps.
type event struct {
	AuditID string `json:"auditID"`
	Verb    string `json:"verb"`
	User    struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// Read returns the requests in the audit log at path that keep accepts
// (nil keeps all), in the order they were received. Each request counts
// once, whatever stages the policy records.
func Read(path string, keep func(Request) bool) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer func() { _ = f.Close() }()
	return parse(f, keep)
}

func parse(r io.Reader, keep func(Request) bool) ([]Request, error) {
	seen := map[string]bool{}
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			// kube-apiserver may be writing the last line right now.
			continue
		}
		if seen[e.AuditID] {
			continue
		}
		seen[e.AuditID] = true
		req := Request{User: e.User.Username, UserAgent: e.UserAgent, Verb: e.Verb, Received: e.RequestReceivedTimestamp}
		if o := e.ObjectRef; o != nil {
			req.APIGroup, req.Resource, req.Subresource, req.Namespace, req.Name = o.APIGroup, o.Resource, o.Subresource, o.Namespace, o.Name
		}
		if e.ResponseStatus != nil {
			req.Code = e.ResponseStatus.Code
		}
		if keep == nil || keep(req) {
			out = append(out, req)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	slices.SortStableFunc(out, func(a, b Request) int { return a.Received.Compare(b.Received) })
	return out, nil
}

// ByUser keeps the requests of one authenticated user.
func ByUser(user string) func(Request) bool {
	return func(r Request) bool { return r.User == user }
}

// Between returns the requests received in [from, to).
func Between(reqs []Request, from, to time.Time) []Request {
	var out []Request
	for _, r := range reqs {
		if !r.Received.Before(from) && r.Received.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// Count is how many requests there were, in total and per verb and target.
type Count struct {
	Total int `json:"total"`
	// ByKind counts per "verb target", e.g. "list pods", "get longhorn.io/volumes".
	ByKind map[string]int `json:"byKind"`
}

// Tally counts requests.
func Tally(reqs []Request) Count {
	c := Count{Total: len(reqs), ByKind: map[string]int{}}
	for _, r := range reqs {
		c.ByKind[r.Verb+" "+r.Target()]++
	}
	return c
}

// Kinds lists the request kinds, most frequent first.
func (c Count) Kinds() []string {
	kinds := make([]string, 0, len(c.ByKind))
	for k := range c.ByKind {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if d := c.ByKind[b] - c.ByKind[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return kinds
}

// String lists the kinds on one line: "42 (12 list pods, 10 get nodes, …)".
func (c Count) String() string {
	if c.Total == 0 {
		return "0"
	}
	parts := make([]string, 0, len(c.ByKind))
	for _, k := range c.Kinds() {
		parts = append(parts, fmt.Sprintf("%d %s", c.ByKind[k], k))
	}
	return fmt.Sprintf("%d (%s)", c.Total, strings.Join(parts, ", "))
}
