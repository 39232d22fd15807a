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
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/s3gw-tech/s3gw-remediation/test/harness"
)

var modeColors = map[string]string{
	"none":                     "#7f7f7f",
	"longhorn-policy":          "#e69f00",
	"controller-detach":        "#0072b2",
	"oos-at-notready":          "#cc79a7",
	"delete-volume-attachment": "#56b4e9",
	"out-of-service-taint":     "#009e73",
}

const (
	plotWidth  = 1000.0
	plotLeft   = 320.0
	plotRight  = 30.0
	plotRowH   = 56.0
	panelHead  = 64.0
	panelFoot  = 56.0
	headHeight = 56.0
)

// series is one row of a panel: a mode's values in seconds, +Inf for runs
// that never got there.
type series struct {
	mode   modeResult
	values []float64
	stats  stats
}

// refLine is a dashed vertical marker.
type refLine struct {
	at    float64
	label string
}

// svg draws two panels. The first shows, per mode, every run's RTO (node
// lost → replacement Ready): each run a dot, p50–p90 a box, min–max a
// line, runs that never recovered an arrow to the window's edge; dashed
// lines mark when Kubernetes declares the node NotReady and evicts its
// pods. The second zooms in on the operator's modes: S3GWRemediation
// created → replacement Ready.
func (r *result) svg() string {
	rto := make([]series, 0, len(r.Modes))
	var cr []series
	for _, m := range r.Modes {
		rto = append(rto, series{mode: m, values: milestoneValues(m, harness.NodeLost, harness.ReplacementReady), stats: m.RTO})
		if m.CRToReady.Count > 0 {
			cr = append(cr, series{mode: m, values: milestoneValues(m, harness.RemediationCreated, harness.ReplacementReady), stats: m.CRToReady})
		}
	}
	window := r.Window.Seconds()
	height := headHeight + panelHeight(len(rto)) + 14
	if len(cr) > 0 {
		height += panelHeight(len(cr))
	}

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	b.WriteString(`<text x="20" y="24" font-size="16" font-weight="bold">s3gw recovery after a node failure, per mode</text>` + "\n")
	fmt.Fprintf(&b, `<text x="20" y="44" fill="#444">%d runs per mode · %s · NodeHealthCheck after %s NotReady · %s</text>`+"\n",
		r.N, html.EscapeString(timingName(r.Settings)), r.NHCDuration, r.Started.Format("2006-01-02"))

	y := headHeight
	y = r.panel(&b, y, "Node lost → replacement Ready (RTO)", rto, math.Ceil(window/60)*60, 60, "minutes after the node was lost", 60, []refLine{
		{r.Grace.Seconds(), "NotReady"},
		{(r.Grace + r.Eviction).Seconds(), "pods evicted"},
	})
	if len(cr) > 0 {
		hi := 10.0
		for _, s := range cr {
			for _, v := range s.values {
				if !math.IsInf(v, 0) {
					hi = math.Max(hi, v)
				}
			}
		}
		step := 10.0
		if hi > 120 {
			step = 30
		}
		r.panel(&b, y, "S3GWRemediation created → replacement Ready", cr, math.Ceil(hi*1.1/step)*step, step,
			"seconds after NodeHealthCheck created the S3GWRemediation", 1, []refLine{{r.AttachDelay.Seconds(), "simulated attach delay"}})
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" fill="#555" font-size="11">dot = one run · box = p50–p90 · line = min–max · thick bar = p50</text>`+"\n", plotLeft, height-8)
	b.WriteString("</svg>\n")
	return b.String()
}

func panelHeight(rows int) float64 { return panelHead + plotRowH*float64(rows) + panelFoot }

// panel draws one chart starting at y and returns where the next begins.
func (r *result) panel(b *strings.Builder, y float64, title string, rows []series, xMax, tick float64,
	axisLabel string, tickUnit float64, refs []refLine) float64 {
	plotW := plotWidth - plotLeft - plotRight
	x := func(s float64) float64 { return plotLeft + plotW*math.Min(math.Max(s, 0), xMax)/xMax }
	top := y + panelHead
	axisY := top + plotRowH*float64(len(rows))

	fmt.Fprintf(b, `<text x="20" y="%.1f" font-size="14" font-weight="bold">%s</text>`+"\n", y+22, html.EscapeString(title))
	for i := range rows {
		if i%2 == 1 {
			fmt.Fprintf(b, `<rect x="0" y="%.1f" width="%.0f" height="%.1f" fill="#f5f5f5"/>`+"\n", top+plotRowH*float64(i), plotWidth, plotRowH)
		}
	}
	for s := 0.0; s <= xMax+1e-9; s += tick {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", x(s), top-6, x(s), axisY)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%.0f</text>`+"\n", x(s), axisY+16, s/tickUnit)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#444">%s</text>`+"\n", plotLeft+plotW/2, axisY+34, html.EscapeString(axisLabel))
	for i, ref := range refs {
		if ref.at <= 0 || ref.at > xMax {
			continue
		}
		labelY := top - 12 - 13*float64(1-i%2)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#b00" stroke-dasharray="4,3"/>`+"\n", x(ref.at), labelY+4, x(ref.at), axisY)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#b00" font-size="11">%s (%s)</text>`+"\n", x(ref.at)+3, labelY, ref.label, fmtSeconds(ref.at))
	}

	for i, row := range rows {
		mid := top + plotRowH*float64(i) + plotRowH/2
		color := modeColors[row.mode.Name]
		if color == "" {
			color = "#333"
		}
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end" font-weight="bold">%s</text>`+"\n", plotLeft-12, mid-2, html.EscapeString(row.mode.Title))
		s := row.stats
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="#555" font-size="11">p50 %s · p90 %s · p99 %s</text>`+"\n",
			plotLeft-12, mid+13, r.cell(s.P50, s.Count), r.cell(s.P90, s.Count), r.cell(s.P99, s.Count))
		if s.Min != nil {
			hi := xMax
			if s.Max != nil {
				hi = *s.Max
			}
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>`+"\n", x(*s.Min), mid, x(hi), mid, color)
		}
		if s.P50 != nil {
			p90 := xMax
			if s.P90 != nil {
				p90 = *s.P90
			}
			w := math.Max(x(p90)-x(*s.P50), 2)
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="16" fill="%s" fill-opacity="0.3" stroke="%s"/>`+"\n", x(*s.P50), mid-8, w, color, color)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/>`+"\n", x(*s.P50), mid-11, x(*s.P50), mid+11, color)
		}
		stuck := 0
		for j, v := range row.values {
			if math.IsInf(v, 0) {
				stuck++
				continue
			}
			jitter := (float64(j%5) - 2) * 3
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s" stroke="white" stroke-width="0.5"><title>%s: %.1f s</title></circle>`+"\n",
				x(v), mid+jitter, color, html.EscapeString(row.mode.Runs[j].Node), v)
		}
		if stuck > 0 {
			from := x(0)
			if len(refs) > 0 {
				from = x(refs[0].at)
			}
			ax := x(xMax)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="6,3"/>`+"\n", from, mid, ax-8, mid, color)
			fmt.Fprintf(b, `<path d="M%.1f %.1f L%.1f %.1f L%.1f %.1f Z" fill="%s"/>`+"\n", ax-10, mid-6, ax, mid, ax-10, mid+6, color)
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="%s" font-size="11">%d/%d never recovered within %s</text>`+"\n",
				ax-14, mid-9, color, stuck, len(row.values), r.Window)
		}
	}
	return axisY + panelFoot
}

// milestoneValues is, per run, the seconds from milestone a to b, +Inf
// when b was never seen.
func milestoneValues(m modeResult, a, b harness.Milestone) []float64 {
	out := make([]float64, 0, len(m.Runs))
	for _, run := range m.Runs {
		tb, okB := run.Milestones[b.String()]
		ta, okA := run.Milestones[a.String()]
		if a == harness.NodeLost {
			ta, okA = 0, true
		}
		if !okA || !okB {
			out = append(out, math.Inf(1))
			continue
		}
		out = append(out, tb-ta)
	}
	return out
}

// timingName is the timings=... field of the settings line.
func timingName(settings string) string {
	for _, f := range strings.Fields(settings) {
		if name, ok := strings.CutPrefix(f, "timings="); ok {
			return name + " timings"
		}
	}
	return "timings unknown"
}
