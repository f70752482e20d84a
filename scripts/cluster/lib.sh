# shellcheck shell=bash
# Shared helpers for scripts/cluster/*.sh and test/e2e/*.sh. Source it:
#   source "$(git rev-parse --show-toplevel)/scripts/cluster/lib.sh"
# It defines functions and a few KD_* variables only; it does not change shell
# options of the caller.

KD_CLUSTER_SCRIPTS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KD_VERSIONS_FILE="${KD_CLUSTER_SCRIPTS}/versions.env"
# Bump when build.sh changes how binaries are built (flags, ldflags, sources),
# so cached binaries from the old recipe are not reused.
KD_BUILD_RECIPE=1
# Every binary build.sh produces, in build order.
# shellcheck disable=SC2034  # used by build.sh
KD_ALL_BINARIES=(etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm metrics-server
  kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc crictl)
# The real node's binaries (cluster.sh up --real-node).
# shellcheck disable=SC2034  # used by ci.sh and cluster.sh
KD_NODE_BINARIES=(kubelet kube-proxy containerd containerd-shim-runc-v2 ctr runc crictl)

kd_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
kd_die() { printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2; exit 1; }

# Milliseconds since the epoch (GNU date).
kd_now_ms() { date +%s%3N; }
# kd_elapsed START_MS -> "12.3s"
kd_elapsed() { local d=$(( $(kd_now_ms) - $1 )); printf '%d.%01ds' $((d / 1000)) $(((d % 1000) / 100)); }

kd_cache_root() {
  local home="${HOME:-}"
  [ -n "${home}" ] || home="$(getent passwd "$(id -u)" | cut -d: -f6)"
  printf '%s\n' "${KDESCHED_CACHE:-${home}/.cache/kdesched}"
}

# Hash of the pinned versions (comments and blank lines ignored) and the build
# recipe revision: the cache key.
kd_versions_hash() {
  { grep -Ev '^[[:space:]]*(#|$)' "${KD_VERSIONS_FILE}"; echo "recipe=${KD_BUILD_RECIPE}"; } |
    sha256sum | cut -c1-16
}

kd_bin_dir() { printf '%s/%s/bin\n' "$(kd_cache_root)" "$(kd_versions_hash)"; }

kd_cluster_dir() { printf '%s\n' "${KDESCHED_CLUSTER_DIR:-/tmp/kdesched-cluster}"; }

# kd_wait_for DESCRIPTION TIMEOUT_SECONDS COMMAND [ARGS...]
# Runs COMMAND (output discarded) every 0.5 s until it succeeds; returns 1 after
# TIMEOUT_SECONDS.
kd_wait_for() {
  local desc="$1" timeout="$2"; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  while true; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      kd_log "timed out after ${timeout}s waiting for: ${desc}"
      return 1
    fi
    sleep 0.5
  done
}

# kd_env_load [CLUSTER_DIR]: exports the variables cluster.sh up wrote
# (KUBECONFIG, APISERVER_URL, ETCD_ENDPOINT, CA_FILE, ...) and puts the cached
# binaries first on PATH.
kd_env_load() {
  local dir="${1:-$(kd_cluster_dir)}"
  [ -f "${dir}/env" ] || { kd_log "no cluster env at ${dir}/env (run cluster.sh up)"; return 1; }
  set -a
  # shellcheck disable=SC1091
  . "${dir}/env"
  set +a
  PATH="${KD_BIN_DIR}:${PATH}"
  export PATH
}

# kd_kubectl ARGS...: kubectl against the loaded cluster.
kd_kubectl() { "${KD_BIN_DIR}/kubectl" --kubeconfig "${KUBECONFIG}" "$@"; }

# kd_pod_running_ready NAMESPACE POD: true when the pod is Running and Ready.
kd_pod_running_ready() {
  local out
  out="$(kd_kubectl -n "$1" get pod "$2" -o \
    'jsonpath={.status.phase}/{.status.conditions[?(@.type=="Ready")].status}')" || return 1
  [ "${out}" = "Running/True" ]
}

# kd_node_ready NODE: true when the node's Ready condition is True.
kd_node_ready() {
  local out
  out="$(kd_kubectl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" || return 1
  [ "${out}" = "True" ]
}

# kd_node_not_ready NODE: true when the node's Ready condition is False or Unknown.
kd_node_not_ready() {
  local out
  out="$(kd_kubectl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" || return 1
  [ "${out}" = "False" ] || [ "${out}" = "Unknown" ]
}

# kd_wait_pods_ready NAMESPACE SELECTOR COUNT TIMEOUT: waits until exactly COUNT
# non-terminating pods match SELECTOR and all are Running and Ready.
kd_pods_ready_count() {
  local ns="$1" sel="$2" want="$3" lines
  lines="$(kd_kubectl -n "${ns}" get pods -l "${sel}" -o \
    'jsonpath={range .items[*]}{.metadata.deletionTimestamp}|{.status.phase}|{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')" || return 1
  local total=0 ready=0 l
  while IFS= read -r l; do
    [ -n "${l}" ] || continue
    total=$((total + 1))
    [ "${l}" = "|Running|True" ] && ready=$((ready + 1))
  done <<<"${lines}"
  [ "${total}" -eq "${want}" ] && [ "${ready}" -eq "${want}" ]
}
kd_wait_pods_ready() {
  kd_wait_for "${3} ready pod(s) with ${2} in ${1}" "$4" kd_pods_ready_count "$1" "$2" "$3"
}
