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
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// FileLogger sends controller-runtime's and klog's logs, up to verbosity,
// to logDir/controllers.log, or nowhere when logDir is empty. hack/demo and
// hack/bench keep the operator's logs out of their own output this way. The
// returned func closes the file.
func FileLogger(logDir string, verbosity int) (logr.Logger, func(), error) {
	if logDir == "" {
		ctrl.SetLogger(logr.Discard())
		klog.SetLogger(logr.Discard())
		return logr.Discard(), func() {}, nil
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return logr.Logger{}, nil, fmt.Errorf("creating %s: %w", logDir, err)
	}
	f, err := os.Create(filepath.Join(logDir, "controllers.log"))
	if err != nil {
		return logr.Logger{}, nil, fmt.Errorf("creating the controller log: %w", err)
	}
	var mu sync.Mutex
	l := funcr.New(func(prefix, args string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = fmt.Fprintln(f, prefix, args)
	}, funcr.Options{LogTimestamp: true, Verbosity: verbosity})
	ctrl.SetLogger(l)
	klog.SetLogger(l)
	return l, func() { _ = f.Close() }, nil
}
