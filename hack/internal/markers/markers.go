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

// Package markers rewrites the generated regions of hand-written files, so
// a generator owns a few lines of a document, a Go file or a YAML file and
// make verify sees when they drift from their source. A region is what lies
// between two lines of one tool:
//
//	<comment> BEGIN <tool> <name> [<arg>]: <note>
//	<comment> END <tool>
//
// where <comment> is "<!--" (closed by "-->"), "//" or "#", indented as the
// file needs.
package markers

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Region is one generated region: its name and the word after it, if any.
type Region struct {
	Name, Arg string
}

// Fill replaces what lies between each BEGIN and END line of the tool with
// what render returns for the region, kept as it is returned.
func Fill(text, tool string, render func(Region) (string, error)) (string, error) {
	begin := regexp.MustCompile(`^\s*(?:<!--|//|#) BEGIN ` + regexp.QuoteMeta(tool) + ` ([a-z-]+)(?: ([^ :]+))?: [^\n]*$`)
	end := regexp.MustCompile(`^\s*(?:<!--|//|#) END ` + regexp.QuoteMeta(tool) + `(?: -->)?$`)
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	var open *Region
	for i, line := range lines {
		bare := strings.TrimRight(line, "\n")
		switch {
		case isComment(bare) && strings.Contains(bare, " BEGIN "+tool+" "):
			if open != nil {
				return "", fmt.Errorf("line %d: BEGIN inside the region %s", i+1, open.Name)
			}
			m := begin.FindStringSubmatch(bare)
			if m == nil {
				return "", fmt.Errorf("line %d: malformed marker %q", i+1, bare)
			}
			open = &Region{Name: m[1], Arg: m[2]}
			out, err := render(*open)
			if err != nil {
				return "", fmt.Errorf("line %d: region %s: %w", i+1, open.Name, err)
			}
			b.WriteString(line + out)
		case end.MatchString(bare):
			if open == nil {
				return "", fmt.Errorf("line %d: END without BEGIN", i+1)
			}
			open = nil
			b.WriteString(line)
		case open == nil:
			b.WriteString(line)
		}
	}
	if open != nil {
		return "", errors.New("the region " + open.Name + " has no END marker")
	}
	return b.String(), nil
}

// isComment reports whether a line is a comment of one of the kinds a
// marker may be.
func isComment(line string) bool {
	line = strings.TrimSpace(line)
	return strings.HasPrefix(line, "<!--") || strings.HasPrefix(line, "//") || strings.HasPrefix(line, "#")
}
