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

package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/onsi/gomega"

	"github.com/s3gw-tech/s3gw-remediation/test/testenv"
)

var dashboardFile = filepath.Join("config", "grafana", "s3gw-remediation.json")

// dashboard is the part of the Grafana dashboard model the checks read.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query string `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int        `json:"id"`
	Title      string     `json:"title"`
	Datasource datasource `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		Expr       string     `json:"expr"`
		Datasource datasource `json:"datasource"`
	} `json:"targets"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func readDashboard(g *gomega.WithT) dashboard {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), dashboardFile))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	var d dashboard
	g.Expect(json.Unmarshal(data, &d)).To(gomega.Succeed())
	return d
}

func (p panel) exprs() []string {
	out := make([]string, 0, len(p.Targets))
	for _, t := range p.Targets {
		out = append(out, t.Expr)
	}
	return out
}

// TestDashboardIsPortable: every query goes to the datasource the user
// picks, panels have unique ids and do not overlap on Grafana's 24-column
// grid.
func TestDashboardIsPortable(t *testing.T) {
	g := gomega.NewWithT(t)
	d := readDashboard(g)
	g.Expect(d.UID).NotTo(gomega.BeEmpty())
	g.Expect(d.Templating.List).To(gomega.ContainElement(gomega.And(
		gomega.HaveField("Name", "datasource"), gomega.HaveField("Type", "datasource"), gomega.HaveField("Query", "prometheus"))))
	want := datasource{Type: "prometheus", UID: "${datasource}"}
	ids := map[int]bool{}
	cells := map[[2]int]string{}
	for _, p := range d.Panels {
		g.Expect(ids).NotTo(gomega.HaveKey(p.ID), "panel %q reuses id %d", p.Title, p.ID)
		ids[p.ID] = true
		g.Expect(p.Datasource).To(gomega.Equal(want), "panel %q", p.Title)
		for _, t := range p.Targets {
			g.Expect(t.Datasource).To(gomega.Equal(want), "panel %q", p.Title)
		}
		g.Expect(p.GridPos.X+p.GridPos.W).To(gomega.BeNumerically("<=", 24), "panel %q", p.Title)
		for x := p.GridPos.X; x < p.GridPos.X+p.GridPos.W; x++ {
			for y := p.GridPos.Y; y < p.GridPos.Y+p.GridPos.H; y++ {
				g.Expect(cells).NotTo(gomega.HaveKey([2]int{x, y}), "panel %q overlaps %q", p.Title, cells[[2]int{x, y}])
				cells[[2]int{x, y}] = p.Title
			}
		}
	}
}
