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

package controllers

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"sync"
)

// requestLog records a manager's requests to the API server, each as its
// method, path and body. The manager reconciles every story's objects in
// the suite, so a remediation's cost is the requests that name its world:
// its namespace, nodes or volumes in the path, or, for an Event about a
// Node (written to "default"), the object the body regards.
type requestLog struct {
	mu    sync.Mutex
	lines []string
}

// record logs req, leaving its body readable for the transport.
func (l *requestLog) record(req *http.Request) error {
	line := req.Method + " " + req.URL.Path
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
		line += " " + string(body)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	return nil
}

// len is how many requests are logged, a mark for since.
func (l *requestLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

// naming counts the requests logged since mark that name world id, and
// all logged since mark.
func (l *requestLog) naming(id string, mark int) (named, all int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// w4 names "ns-w4", "w4-failed" and "pvc-w4-s3gw", never "w41-failed".
	token := regexp.MustCompile(`(^|[^a-z0-9])` + regexp.QuoteMeta(id) + `([^0-9]|$)`)
	for _, line := range l.lines[mark:] {
		if token.MatchString(line) {
			named++
		}
	}
	return named, len(l.lines) - mark
}
