#!/usr/bin/env bash
# Builds the test control plane (etcd, etcdctl, kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, kwok, helm, and metrics-server
# for the usage tests) from Go modules
# at the versions pinned in versions.env, into a cache outside the checkout:
#
#   ${KDESCHED_CACHE:-$HOME/.cache/kdesched}/<versions-hash>/bin
#
# Go's module and build caches live in ${KDESCHED_CACHE}/go/{mod,build}, shared
# by every versions-hash. A binary already in the cache is not rebuilt; when all
# requested binaries are there the script only checks and exits (well under 2 s).
#
# Usage: build.sh [--print-bin-dir] [BINARY...]   (default: all binaries)
set -euo pipefail

# shellcheck source=scripts/cluster/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

wanted=()
while [ $# -gt 0 ]; do
  case "$1" in
    --print-bin-dir) kd_bin_dir; exit 0 ;;
    -h|--help) usage; exit 0 ;;
    -*) kd_die "unknown option $1 (see --help)" ;;
    *)
      found=0
      for b in "${KD_ALL_BINARIES[@]}"; do [ "$b" = "$1" ] && found=1; done
      [ "${found}" = 1 ] || kd_die "unknown binary '$1' (known: ${KD_ALL_BINARIES[*]})"
      wanted+=("$1") ;;
  esac
  shift
done
[ "${#wanted[@]}" -gt 0 ] || wanted=("${KD_ALL_BINARIES[@]}")

CACHE_ROOT="$(kd_cache_root)"
HASH="$(kd_versions_hash)"
KEY_DIR="${CACHE_ROOT}/${HASH}"
BIN_DIR="${KEY_DIR}/bin"

SHARE_DIR="${KEY_DIR}/share"
have() {
  [ -x "${BIN_DIR}/$1" ] || return 1
  # kwok is useless without its stage definitions, metrics-server without its RBAC (see below).
  [ "$1" != kwok ] || [ -s "${SHARE_DIR}/kwok-stages.yaml" ] || return 1
  [ "$1" != metrics-server ] || [ -s "${SHARE_DIR}/metrics-server-rbac.yaml" ]
}
missing() {
  local b list=()
  for b in "${wanted[@]}"; do have "$b" || list+=("$b"); done
  printf '%s\n' "${list[@]+"${list[@]}"}"
}

# Fast path: nothing to do.
if [ -z "$(missing)" ]; then
  echo "build.sh: up to date: ${BIN_DIR} (${wanted[*]})"
  exit 0
fi

command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || kd_die "go not found"
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"

mkdir -p "${BIN_DIR}" "${CACHE_ROOT}/go/mod" "${CACHE_ROOT}/go/build"
# One build per cache key at a time (CI and a developer on the same machine).
exec 9>"${KEY_DIR}/.build.lock"
if ! flock -n 9; then
  kd_log "another build.sh holds ${KEY_DIR}/.build.lock; waiting"
  flock 9
fi
if [ -z "$(missing)" ]; then
  echo "build.sh: up to date: ${BIN_DIR} (built by the other run)"
  exit 0
fi

# shellcheck disable=SC1090
source "${KD_VERSIONS_FILE}"
: "${KUBERNETES_VERSION:?}" "${KUBERNETES_STAGING_VERSION:?}" "${ETCD_VERSION:?}" \
  "${KWOK_VERSION:?}" "${HELM_MODULE:?}" "${HELM_VERSION:?}" "${METRICS_SERVER_VERSION:?}" \
  "${CONTAINERD_VERSION:?}" "${RUNC_VERSION:?}" "${CRI_TOOLS_VERSION:?}"

export GOMODCACHE="${CACHE_ROOT}/go/mod"
export GOCACHE="${CACHE_ROOT}/go/build"
export GOTOOLCHAIN=local
export CGO_ENABLED=0
# 2 cores: at most 2 packages compiled at once.
export GOFLAGS="-p=2 -trimpath -buildvcs=false"
export GOPATH="${CACHE_ROOT}/go/path"
unset GOBIN GOWORK

LOG="${KEY_DIR}/build.log"
TIMES="${KEY_DIR}/build-times.txt"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kdesched-build.XXXXXX")"
cleanup() { rm -rf "${WORK}"; }
trap cleanup EXIT

: >"${LOG}"
{
  echo "# build.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) $(go env GOVERSION) $(nproc) cores"
  grep -Ev '^[[:space:]]*(#|$)' "${KD_VERSIONS_FILE}"
} >>"${TIMES}"

# run LABEL CMD...: runs CMD with output to the build log; on failure shows its tail.
run() {
  local label="$1"; shift
  echo "### ${label}: $*" >>"${LOG}"
  if ! "$@" >>"${LOG}" 2>&1; then
    tail -n 40 "${LOG}" >&2
    kd_die "${label} failed (full log: ${LOG})"
  fi
}

# timed NAME CMD...: runs CMD and reports how long it took.
timed() {
  local name="$1"; shift
  local t0; t0="$(kd_now_ms)"
  kd_log "building ${name} ..."
  run "${name}" "$@"
  local took; took="$(kd_elapsed "${t0}")"
  local size=""
  [ -f "${BIN_DIR}/${name}" ] && size=" ($(du -m "${BIN_DIR}/${name}" | cut -f1) MiB)"
  kd_log "  ${name}: ${took}${size}"
  printf '%-26s %s%s\n' "${name}" "${took}" "${size}" >>"${TIMES}"
}

needs() { local b; for b in "$@"; do missing | grep -qx "$b" && return 0; done; return 1; }

# go build into a temp name, then rename: a killed build never leaves a
# half-written binary that the fast path would accept.
gobuild() {
  local out="$1" pkg="$2" ldflags="$3"
  go build -mod=mod -ldflags="${ldflags}" -o "${BIN_DIR}/.${out}.tmp" "${pkg}"
  mv -f "${BIN_DIR}/.${out}.tmp" "${BIN_DIR}/${out}"
}

# goinstall NAME PKG@VERSION [LDFLAGS]: for modules without replace directives, go install
# builds them with exactly their own go.mod.
goinstall() {
  local out="$1" pkgver="$2" ldflags="-s -w${3:+ $3}"
  GOBIN="${WORK}/gobin" go install -ldflags="${ldflags}" "${pkgver}"
  mv -f "${WORK}/gobin/${out}" "${BIN_DIR}/${out}"
}

total0="$(kd_now_ms)"
kd_log "building into ${BIN_DIR}: $(missing | tr '\n' ' ')(log: ${LOG})"

# ---- etcd and etcdctl -------------------------------------------------------
# Their go.mod files carry replace directives (../api, ...), so go install
# pkg@version refuses them; a generated module requiring them works.
if needs etcd etcdctl; then
  m="${WORK}/etcd"; mkdir -p "${m}"
  cat >"${m}/go.mod" <<EOF
module kdesched.local/cluster-build/etcd

go 1.26

require (
	go.etcd.io/etcd/server/v3 ${ETCD_VERSION}
	go.etcd.io/etcd/etcdctl/v3 ${ETCD_VERSION}
)
EOF
  t0="$(kd_now_ms)"
  (cd "${m}" && run "etcd modules" go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}" \
    "go.etcd.io/etcd/etcdctl/v3@${ETCD_VERSION}")
  kd_log "  etcd module download/resolve: $(kd_elapsed "${t0}")"
  printf '%-26s %s\n' "(etcd modules)" "$(kd_elapsed "${t0}")" >>"${TIMES}"
  if needs etcd; then (cd "${m}" && timed etcd gobuild etcd go.etcd.io/etcd/server/v3 '-s -w'); fi
  if needs etcdctl; then (cd "${m}" && timed etcdctl gobuild etcdctl go.etcd.io/etcd/etcdctl/v3 '-s -w'); fi
fi

# ---- Kubernetes -------------------------------------------------------------
# k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them
# with ./staging/src/...; a dependent module must replace each of them with the
# matching published release instead. The list comes from the pinned go.mod.
if needs kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; then
  m="${WORK}/kubernetes"; mkdir -p "${m}"
  t0="$(kd_now_ms)"
  kmod="$(cd "${m}" && go mod download -json "k8s.io/kubernetes@${KUBERNETES_VERSION}" | jq -r .GoMod)"
  [ -f "${kmod}" ] || kd_die "could not download k8s.io/kubernetes@${KUBERNETES_VERSION}"
  mapfile -t staging < <(sed -nE 's#^[[:space:]]*(k8s\.io/[^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/src/.*#\1#p' "${kmod}")
  [ "${#staging[@]}" -gt 10 ] || kd_die "found no staging replace directives in ${kmod}"
  {
    echo "module kdesched.local/cluster-build/kubernetes"
    echo
    echo "go 1.26"
    echo
    echo "require k8s.io/kubernetes ${KUBERNETES_VERSION}"
    echo
    echo "replace ("
    for s in "${staging[@]}"; do printf '\t%s => %s %s\n' "${s}" "${s}" "${KUBERNETES_STAGING_VERSION}"; done
    echo ")"
  } >"${m}/go.mod"
  kpkgs=()
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; do
    kpkgs+=("k8s.io/kubernetes/cmd/${b}@${KUBERNETES_VERSION}")
  done
  (cd "${m}" && run "kubernetes modules" go get "${kpkgs[@]}")
  kd_log "  kubernetes module download/resolve (${#staging[@]} staging replaces): $(kd_elapsed "${t0}")"
  printf '%-26s %s\n' "(kubernetes modules)" "$(kd_elapsed "${t0}")" >>"${TIMES}"

  minor="${KUBERNETES_VERSION#v1.}"; minor="${minor%%.*}"
  kld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    kld+=" -X ${p}.gitVersion=${KUBERNETES_VERSION} -X ${p}.gitMajor=1 -X ${p}.gitMinor=${minor}"
    kld+=" -X ${p}.gitTreeState=clean -X ${p}.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  for b in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; do
    if needs "${b}"; then (cd "${m}" && timed "${b}" gobuild "${b}" "k8s.io/kubernetes/cmd/${b}" "${kld}"); fi
  done
fi

# ---- kwok and helm ----------------------------------------------------------
if needs kwok; then
  [ -x "${BIN_DIR}/kwok" ] || timed kwok goinstall kwok "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  # The kwok binary has no built-in stages; kwokctl composes its defaults from
  # the YAML files in the module. Take the same ones from the pinned module:
  # node-initialize, node-heartbeat-with-lease and pod-ready/complete/delete,
  # plus the node-not-ready chaos stage that cluster.sh node-notready uses (it
  # only acts on nodes labelled node-not-ready.stage.kwok.x-k8s.io=true).
  kdir="$(cd "${WORK}" && go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | jq -r .Dir)"
  mkdir -p "${SHARE_DIR}"
  for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml \
    node/chaos/node-not-ready.yaml; do
    [ -f "${kdir}/kustomize/stage/${f}" ] || kd_die "kwok stage ${f} not found in ${kdir}"
    printf -- '---\n# sigs.k8s.io/kwok@%s kustomize/stage/%s\n' "${KWOK_VERSION}" "${f}"
    cat "${kdir}/kustomize/stage/${f}"
  done >"${SHARE_DIR}/.kwok-stages.yaml.tmp"
  mv -f "${SHARE_DIR}/.kwok-stages.yaml.tmp" "${SHARE_DIR}/kwok-stages.yaml"
fi
if needs helm; then
  # Helm's own version string (its Makefile sets it the same way).
  timed helm goinstall helm "${HELM_MODULE}/cmd/helm@${HELM_VERSION}" \
    "-X ${HELM_MODULE}/internal/version.version=${HELM_VERSION}"
fi
# ---- metrics-server ---------------------------------------------------------
# Its go.mod has no replace directives, so go install builds it with exactly the
# dependencies it was released with (k8s.io/* v0.36.x; they are newer than the
# control plane's for otel, cel-go, etcd's client and others, so little of the
# kube-apiserver build is reused from the Go build cache).
if needs metrics-server; then
  [ -x "${BIN_DIR}/metrics-server" ] || timed metrics-server goinstall metrics-server \
    "sigs.k8s.io/metrics-server/cmd/metrics-server@${METRICS_SERVER_VERSION}" \
    "-X k8s.io/client-go/pkg/version.gitVersion=${METRICS_SERVER_VERSION}"
  # Its own RBAC (ServiceAccount kube-system/metrics-server, system:metrics-server,
  # auth-delegator, extension-apiserver-authentication-reader), applied verbatim by
  # cluster.sh up --metrics-server.
  msdir="$(cd "${WORK}" && go mod download -json "sigs.k8s.io/metrics-server@${METRICS_SERVER_VERSION}" | jq -r .Dir)"
  [ -f "${msdir}/manifests/base/rbac.yaml" ] || kd_die "manifests/base/rbac.yaml not found in ${msdir}"
  mkdir -p "${SHARE_DIR}"
  { printf '# sigs.k8s.io/metrics-server@%s manifests/base/rbac.yaml\n' "${METRICS_SERVER_VERSION}"
    cat "${msdir}/manifests/base/rbac.yaml"; } >"${SHARE_DIR}/.metrics-server-rbac.yaml.tmp"
  mv -f "${SHARE_DIR}/.metrics-server-rbac.yaml.tmp" "${SHARE_DIR}/metrics-server-rbac.yaml"
fi

# ---- the real node's container runtime --------------------------------------
# containerd 2 (daemon, runc shim, ctr) and crictl: pure Go, go install with their own go.mod.
# runc needs cgo and libseccomp (apt-get install libseccomp-dev): seccomp profiles are what the
# chart's RuntimeDefault asks for, and a runc without them would run the pod unconfined.
if needs containerd containerd-shim-runc-v2 ctr; then
  cld="-X github.com/containerd/containerd/v2/version.Version=${CONTAINERD_VERSION}"
  for b in containerd containerd-shim-runc-v2 ctr; do
    if needs "${b}"; then
      GOFLAGS="${GOFLAGS} -tags=no_btrfs,no_devmapper,no_zfs" \
        timed "${b}" goinstall "${b}" "github.com/containerd/containerd/v2/cmd/${b}@${CONTAINERD_VERSION}" "${cld}"
    fi
  done
fi
if needs runc; then
  [ -f /usr/include/seccomp.h ] || kd_die "runc needs libseccomp-dev (apt-get install libseccomp-dev)"
  CGO_ENABLED=1 GOFLAGS="${GOFLAGS} -tags=seccomp" \
    timed runc goinstall runc "github.com/opencontainers/runc@${RUNC_VERSION}" "-X main.version=${RUNC_VERSION#v}"
fi
if needs crictl; then
  timed crictl goinstall crictl "sigs.k8s.io/cri-tools/cmd/crictl@${CRI_TOOLS_VERSION}" \
    "-X sigs.k8s.io/cri-tools/pkg/version.Version=${CRI_TOOLS_VERSION}"
fi

left="$(missing)"
[ -z "${left}" ] || kd_die "still missing after build: ${left}"
{
  echo "go=$(go env GOVERSION)"
  grep -Ev '^[[:space:]]*(#|$)' "${KD_VERSIONS_FILE}"
  echo "recipe=${KD_BUILD_RECIPE}"
} >"${KEY_DIR}/manifest"
kd_log "done in $(kd_elapsed "${total0}"): ${BIN_DIR}"
printf '%-26s %s\n' "(total)" "$(kd_elapsed "${total0}")" >>"${TIMES}"
ls -l "${BIN_DIR}" >&2
