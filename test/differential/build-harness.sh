#!/usr/bin/env bash
# Builds the differential harness (test/differential/harness: upstream descheduler v0.36's real
# plugin code as a Go module dependency) into the cache bench/build-upstream.sh and
# scripts/cluster/build.sh use:
#
#   ${KDESCHED_CACHE:-$HOME/.cache/kdesched}/differential-harness-<key>/harness
#
# <key> hashes the harness sources, go.mod, go.sum and the Go version, so a changed harness is
# rebuilt and an unchanged one is reused (the script checks and exits in well under a second).
# The module graph is exactly go.mod/go.sum (-mod=readonly): sigs.k8s.io/descheduler v0.36.0 with
# the replace directive upstream's own go.mod carries, modules fetched through the Go module proxy
# and checked against sum.golang.org. GOMODCACHE/GOCACHE and the build flags are the ones
# bench/build-upstream.sh uses, so the k8s packages it compiled are reused.
#
# Usage: test/differential/build-harness.sh [--print-bin]
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="${here}/harness"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE_ROOT="${KDESCHED_CACHE:-${home}/.cache/kdesched}"
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"
command -v go >/dev/null 2>&1 || die "go not found (/usr/local/go/bin)"

key="$( (cd "${src}" && cat go.mod go.sum ./*.go; go env GOVERSION) | sha256sum | cut -c1-16)"
KEY_DIR="${CACHE_ROOT}/differential-harness-${key}"
BIN="${KEY_DIR}/harness"

if [ "${1:-}" = --print-bin ]; then echo "${BIN}"; exit 0; fi
[ $# -eq 0 ] || die "usage: $0 [--print-bin]"
if [ -x "${BIN}" ]; then
  echo "build-harness.sh: up to date: ${BIN}"
  exit 0
fi

mkdir -p "${KEY_DIR}" "${CACHE_ROOT}/go/mod" "${CACHE_ROOT}/go/build"
exec 9>"${KEY_DIR}/.build.lock"
flock -n 9 || { log "another build holds ${KEY_DIR}/.build.lock; waiting"; flock 9; }
if [ -x "${BIN}" ]; then echo "build-harness.sh: up to date: ${BIN} (built by the other run)"; exit 0; fi

export GOMODCACHE="${CACHE_ROOT}/go/mod" GOCACHE="${GOCACHE_OVERRIDE:-${CACHE_ROOT}/go/build}" GOPATH="${CACHE_ROOT}/go/path"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-p=2 -trimpath -buildvcs=false"
unset GOBIN GOWORK

t0=$(date +%s%3N)
log "building ${src} (GOCACHE=${GOCACHE})"
(cd "${src}" && go build -mod=readonly -ldflags="-s -w" -o "${KEY_DIR}/.harness.tmp" .) ||
  die "go build failed"
mv -f "${KEY_DIR}/.harness.tmp" "${BIN}"
took=$(( $(date +%s%3N) - t0 ))
secs="$((took / 1000)).$(((took % 1000) / 100))"
echo "go=$(go env GOVERSION) built=$(date -u +%Y-%m-%dT%H:%M:%SZ) build_seconds=${secs}" >"${KEY_DIR}/manifest"
echo "build-harness.sh: built ${BIN} in ${secs}s"
