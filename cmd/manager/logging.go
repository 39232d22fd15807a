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
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// loggerOptions are the manager's defaults for controller-runtime's --zap-*
// flags. A remediation goes from its CR to the release in a second or two,
// so its log lines carry times to the nanosecond (controller-runtime's
// default, RFC 3339, stops at the second); --zap-time-encoding overrides it.
func loggerOptions() zap.Options {
	return zap.Options{TimeEncoder: zapcore.RFC3339NanoTimeEncoder}
}
