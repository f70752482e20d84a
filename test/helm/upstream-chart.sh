#!/usr/bin/env bash
# Prints the directory of upstream descheduler v0.36.0's Helm chart (charts/descheduler in the Go
# module sigs.k8s.io/descheduler@v0.36.0). The chart tests render it read-only with the real helm
# to compare object names, args and fields with kdesched's chart; nothing of it is copied.
# The module is fetched into the shared Go module cache (the one bench/build-upstream.sh and
# scripts/cluster/build.sh use) when it is not there yet: `go mod download`, checksum-verified.
set -euo pipefail
VERSION=v0.36.0
home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
export GOMODCACHE="${KDESCHED_CACHE:-${home}/.cache/kdesched}/go/mod"
dir="${GOMODCACHE}/sigs.k8s.io/descheduler@${VERSION}/charts/descheduler"
if [ ! -f "${dir}/values.yaml" ]; then
  command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"
  command -v go >/dev/null 2>&1 || { echo "upstream-chart.sh: no go to download sigs.k8s.io/descheduler@${VERSION}" >&2; exit 1; }
  tmp="$(mktemp -d)"
  trap 'rm -rf "${tmp}"' EXIT
  (cd "${tmp}" && GOTOOLCHAIN=local GOFLAGS=-mod=mod go mod download "sigs.k8s.io/descheduler@${VERSION}") >&2
  [ -f "${dir}/values.yaml" ] || { echo "upstream-chart.sh: ${dir} missing after go mod download" >&2; exit 1; }
fi
echo "${dir}"
