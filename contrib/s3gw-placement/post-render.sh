#!/bin/sh
# Helm post-renderer for s3gw's chart: reads the rendered manifests on
# stdin and writes them with s3gw's gateway kept off the s3gw-data nodes
# (placement.yaml). Needs kubectl (or $KUBECTL) for its built-in kustomize.
#   Helm 3: helm install s3gw s3gw/s3gw --post-renderer ./post-render.sh ...
#   Helm 4: helm plugin install ./contrib/s3gw-placement
#           helm install s3gw s3gw/s3gw --post-renderer s3gw-placement ...
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/all.yaml"
cp "$here/kustomization.yaml" "$here/placement.yaml" "$work/"
"${KUBECTL:-kubectl}" kustomize "$work"
