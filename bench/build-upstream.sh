#!/usr/bin/env bash
# Builds the upstream descheduler (sigs.k8s.io/descheduler) for the side-by-side
# benchmarks, pinned, into the same cache style as scripts/cluster/build.sh:
#
#   ${KDESCHED_CACHE:-$HOME/.cache/kdesched}/upstream-<version>/bin/descheduler
#
# The version is the newest v0.36 patch the Go module proxy serves
# (`go list -m -versions sigs.k8s.io/descheduler`: v0.36.0; v0.36.1+ answer 403).
# Its go.mod carries a replace directive (k8s.io/kube-openapi pinned to a
# pseudo-version), so `go install pkg@version` refuses it; the module is instead
# downloaded (checksum-verified against sum.golang.org by the go command), copied
# out of the read-only module cache and built inside itself, with exactly its own
# go.mod, go.sum and replace directives (-mod=readonly: nothing is re-resolved).
# ldflags set pkg/version as upstream's Makefile does.
#
# A cached binary is not rebuilt: the script checks and exits (well under 1 s).
#
# Usage: bench/build-upstream.sh [--print-bin]      (env: UPSTREAM_VERSION)
set -euo pipefail

UPSTREAM_MODULE=sigs.k8s.io/descheduler
UPSTREAM_VERSION="${UPSTREAM_VERSION:-v0.36.0}"
# Bump when the recipe below changes, so an old binary is not reused.
RECIPE=1

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

home="${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}"
CACHE_ROOT="${KDESCHED_CACHE:-${home}/.cache/kdesched}"
KEY_DIR="${CACHE_ROOT}/upstream-${UPSTREAM_VERSION}"
BIN="${KEY_DIR}/bin/descheduler"

if [ "${1:-}" = --print-bin ]; then echo "${BIN}"; exit 0; fi
[ $# -eq 0 ] || die "usage: $0 [--print-bin]"

cached() { [ -x "${BIN}" ] && [ -f "${KEY_DIR}/manifest" ] && grep -qx "recipe=${RECIPE}" "${KEY_DIR}/manifest"; }
if cached; then
  echo "build-upstream.sh: up to date: ${BIN} ($(sed -n 's/^build_seconds=//p' "${KEY_DIR}/manifest")s when built)"
  exit 0
fi

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"
command -v go >/dev/null 2>&1 || die "go not found (/usr/local/go/bin)"
command -v jq >/dev/null 2>&1 || die "jq not found (apt-get install jq)"

mkdir -p "${KEY_DIR}/bin" "${CACHE_ROOT}/go/mod" "${CACHE_ROOT}/go/build"
exec 9>"${KEY_DIR}/.build.lock"
flock -n 9 || { log "another build holds ${KEY_DIR}/.build.lock; waiting"; flock 9; }
if cached; then echo "build-upstream.sh: up to date: ${BIN} (built by the other run)"; exit 0; fi

export GOMODCACHE="${CACHE_ROOT}/go/mod" GOCACHE="${CACHE_ROOT}/go/build" GOPATH="${CACHE_ROOT}/go/path"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-p=2 -trimpath -buildvcs=false"
unset GOBIN GOWORK

WORK="$(mktemp -d "${TMPDIR:-/tmp}/kdesched-upstream.XXXXXX")"
trap 'chmod -R u+w "${WORK}" 2>/dev/null; rm -rf "${WORK}"' EXIT
LOG="${KEY_DIR}/build.log"
: >"${LOG}"

t0=$(date +%s%3N)
log "downloading ${UPSTREAM_MODULE}@${UPSTREAM_VERSION} (log: ${LOG})"
info="$(cd "${WORK}" && go mod download -json "${UPSTREAM_MODULE}@${UPSTREAM_VERSION}")" ||
  die "go mod download ${UPSTREAM_MODULE}@${UPSTREAM_VERSION} failed"
dir="$(jq -r .Dir <<<"${info}")"; sum="$(jq -r .Sum <<<"${info}")"
[ -f "${dir}/go.mod" ] || die "no go.mod in ${dir}"
cp -r "${dir}" "${WORK}/src"
chmod -R u+w "${WORK}/src"
log "replace directives in its go.mod: $(grep -c '=>' "${WORK}/src/go.mod")"

ld="-s -w"
for kv in "version=${UPSTREAM_VERSION}" "buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)" "gitbranch=release-${UPSTREAM_VERSION%.*}" "gitsha1=module-${sum}"; do
  ld+=" -X ${UPSTREAM_MODULE}/pkg/version.${kv}"
done
log "building ${UPSTREAM_MODULE}/cmd/descheduler (2 cores: several minutes cold) ..."
if ! (cd "${WORK}/src" && go build -mod=readonly -ldflags="${ld}" -o "${KEY_DIR}/bin/.descheduler.tmp" ./cmd/descheduler) >>"${LOG}" 2>&1; then
  tail -n 30 "${LOG}" >&2
  die "build failed (log: ${LOG})"
fi
mv -f "${KEY_DIR}/bin/.descheduler.tmp" "${BIN}"
took=$(( $(date +%s%3N) - t0 ))
secs="$((took / 1000)).$(((took % 1000) / 100))"
{
  echo "module=${UPSTREAM_MODULE}"
  echo "version=${UPSTREAM_VERSION}"
  echo "module_sum=${sum}"
  echo "go=$(go env GOVERSION)"
  echo "recipe=${RECIPE}"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "build_seconds=${secs}"
} >"${KEY_DIR}/manifest"
log "built ${BIN} in ${secs}s ($(du -m "${BIN}" | cut -f1) MiB)"
"${BIN}" version 2>&1 | head -n 2 >&2 || true
echo "build-upstream.sh: built ${BIN} in ${secs}s"
