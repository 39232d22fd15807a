#!/usr/bin/env bash
# Regenerates every generated file and fails if any changed: CRDs, RBAC,
# deepcopy, the descriptor tables (release strategies, evidence sources and
# report reasons in the API, the chart's questions and the docs), the OLM
# bundle and catalog, the Helm chart's generated parts, dist/, the
# monitoring CRD fixtures, the copies of the shipped NodeHealthCheck and
# StorageClass, and the result tables of README.md, docs/benchmark.md and
# bench/README.md (from bench/results). It compares the working tree before
# and after, so it works on uncommitted changes too.
set -euo pipefail
cd "$(dirname "$0")/.."

generated() {
  {
    find api internal -name 'zz_generated.*.go'
    echo api/v1alpha1/s3gwremediation_types.go
    find config/crd/bases config/rbac/role.yaml config/webhook/manifests.yaml -type f
    for dir in bundle catalog dist charts/s3gw-remediation-crd/templates charts/s3gw-remediation/files test/crds/monitoring; do
      if [ -d "$dir" ]; then find "$dir" -type f; fi
    done
    echo charts/s3gw-remediation/Chart.yaml charts/s3gw-remediation-crd/Chart.yaml | tr ' ' '\n'
    # The hand-written files that carry a generated region or a copy
    # (make generate, make copies).
    echo charts/s3gw-remediation/values.yaml charts/s3gw-remediation/questions.yaml \
      config/samples/remediation_v1alpha1_nodehealthcheck.yaml config/manifests/description.md \
      docs/configuration.md docs/install.md docs/troubleshooting.md | tr ' ' '\n'
    echo README.md docs/benchmark.md bench/README.md | tr ' ' '\n'
    ls bundle.Dockerfile* catalog.Dockerfile* 2>/dev/null || true
  } | sort -u | xargs sha256sum
}

before=$(mktemp); after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
generated >"$before"
make --no-print-directory generate manifests copies $(grep -q '^bundle:' Makefile && echo bundle catalog) \
  chart build-installer monitoring-crds bench-tables >/dev/null
generated >"$after"
if ! diff -u "$before" "$after"; then
  echo "Generated files are out of date: run 'make generate manifests copies bundle catalog chart build-installer monitoring-crds bench-tables' and commit the result." >&2
  exit 1
fi
echo "Generated files are up to date."
