#!/usr/bin/env bash
# Regenerates every generated file and fails if any changed: CRDs, RBAC,
# deepcopy, the OLM bundle and catalog, the Helm chart's generated parts,
# dist/, the monitoring CRD fixtures and the result tables of README.md,
# docs/benchmark.md and bench/README.md (from bench/results). It compares
# the working tree before and after, so it works on uncommitted changes too.
set -euo pipefail
cd "$(dirname "$0")/.."

generated() {
  {
    find api internal -name 'zz_generated.*.go'
    find config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml -type f
    for dir in bundle catalog dist charts/s3gw-remediation/crds charts/s3gw-remediation/files test/crds/monitoring; do
      if [ -d "$dir" ]; then find "$dir" -type f; fi
    done
    echo charts/s3gw-remediation/Chart.yaml
    echo README.md docs/benchmark.md bench/README.md | tr ' ' '\n'
    ls bundle.Dockerfile* catalog.Dockerfile* 2>/dev/null || true
  } | sort | xargs sha256sum
}

before=$(mktemp); after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
generated >"$before"
make --no-print-directory generate manifests $(grep -q '^bundle:' Makefile && echo bundle catalog) \
  chart build-installer monitoring-crds bench-tables >/dev/null
generated >"$after"
if ! diff -u "$before" "$after"; then
  echo "Generated files are out of date: run 'make generate manifests bundle catalog chart build-installer monitoring-crds bench-tables' and commit the result." >&2
  exit 1
fi
echo "Generated files are up to date."
