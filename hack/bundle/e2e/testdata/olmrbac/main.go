// Command olmrbac prints what OLM's own resolver.RBACForClusterServiceVersion
// derives from a CSV, accounts sorted by name, and per account in
// NewServiceAccountStepResources' order. It regenerates
// ../rbac-olm-v0.38.0.json, the reference installplan_test.go compares
// PermissionObjects with. It needs OLM's module, so it lives under testdata
// (ignored by the go command) and runs from a copy of hack/tools/olm:
//
//	d=$(mktemp -d) && cp hack/tools/olm/go.mod hack/tools/olm/go.sum $d &&
//	  sed -i 's#^module .*#module olmrbac#; /^tool /d' $d/go.mod &&
//	  cp hack/bundle/e2e/testdata/olmrbac/main.go $d &&
//	  (cd $d && GOFLAGS=-mod=mod go run . $OLDPWD/hack/bundle/e2e/testdata/rbac-csv.yaml) \
//	    >hack/bundle/e2e/testdata/rbac-olm-v0.38.0.json
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	"github.com/operator-framework/operator-lifecycle-manager/pkg/controller/registry/resolver"
	"sigs.k8s.io/yaml"
)

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var csv v1alpha1.ClusterServiceVersion
	if err := yaml.Unmarshal(data, &csv); err != nil {
		panic(err)
	}
	perms, err := resolver.RBACForClusterServiceVersion(&csv)
	if err != nil {
		panic(err)
	}
	names := make([]string, 0, len(perms))
	for n := range perms {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []any
	for _, n := range names {
		p := perms[n]
		if n != "default" {
			p.ServiceAccount.Kind = "ServiceAccount"
			out = append(out, p.ServiceAccount)
		}
		for _, r := range p.Roles {
			r.Kind = "Role"
			out = append(out, r)
		}
		for _, r := range p.RoleBindings {
			r.Kind = "RoleBinding"
			out = append(out, r)
		}
		for _, r := range p.ClusterRoles {
			r.Kind = "ClusterRole"
			out = append(out, r)
		}
		for _, r := range p.ClusterRoleBindings {
			r.Kind = "ClusterRoleBinding"
			out = append(out, r)
		}
	}
	raw, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(raw))
}
