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

import "github.com/s3gw-tech/s3gw-remediation/hack/internal/markers"

// marker is one table's place in a document.
type marker struct {
	Table string
	// Dir is the result directory the marker names; empty for the latest.
	Dir string
}

// fill replaces what lies between each BEGIN and END marker line of text
// with the table render returns for it, set off by blank lines.
func fill(text string, render func(marker) (string, error)) (string, error) {
	return markers.Fill(text, "bench-tables", func(r markers.Region) (string, error) {
		table, err := render(marker{Table: r.Name, Dir: r.Arg})
		return "\n" + table + "\n", err
	})
}
