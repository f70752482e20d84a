#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for kdesched's tests:
# etcd, kube-apiserver (TLS, Node,RBAC, service-account tokens, default
# admission plugins), kube-controller-manager (default controllers),
# kube-scheduler and kwok (fake nodes, pods marked Running/Ready).
# Binaries come from the cache that build.sh fills.
#
# Usage: cluster.sh COMMAND [ARGS]
#   up [--nodes N | --node-spec FILE] [--apiserver-arg ARG]... [--kcm-arg ARG]...
#                       [--scheduler-arg ARG]... [--kwok-arg ARG]... [--metrics-server]
#                       start everything (default 3 nodes: node1..node3); a
#                       second up on a running cluster is a no-op.
#                       --kwok-arg: an extra kwok flag, e.g. a longer
#                       --node-lease-duration-seconds for thousands of nodes
#                       --metrics-server: kwok also serves the nodes' kubelet
#                       resource metrics and metrics-server answers
#                       metrics.k8s.io through the aggregation layer (metrics.sh)
#       [--real-node [--image OCI_ARCHIVE]...]
#                       --real-node: also one real node, kdesched-node, tainted
#                       kdesched.io/real-node=true:NoSchedule: containerd 2, runc,
#                       the CNI bridge (10.213.0.0/24 on bridge kdsbr0, never
#                       routed off the machine), kubelet and kube-proxy; root only,
#                       one per machine (realnode.sh; a killed run's leftover
#                       node, its processes gone, is taken down first). --image:
#                       import an OCI archive into its containerd (no registry:
#                       pullPolicy Never/IfNotPresent)
#   down                stop exactly the processes up started (by recorded PID),
#                       then remove the data directory; safe to repeat. With a
#                       real node: its pods, daemons, shims, mounts, iptables
#                       chains and rules and the bridge too
#   import-image FILE   import an OCI archive into the real node's containerd
#   real-node-leftovers print what of a real node is still on the machine
#   status              show components, PIDs and addresses
#   wait-ready [SECS]   wait until the apiserver is ready and every node is Ready
#   env                 print the cluster's variables as export lines, with the
#                       cached binaries first on PATH:
#                       eval "$(scripts/cluster/cluster.sh env)"
#                       (the file DIR/env has them as KEY=value lines)
#   kubectl ARGS...     run the cached kubectl with the admin kubeconfig
#   add-nodes (--nodes N | --node-spec FILE)   create more kwok nodes
#   restart-apiserver [--kill] [--apiserver-arg ARG]...
#                       stop (SIGTERM; --kill: SIGKILL, a crash) and start
#                       kube-apiserver on the same port: every watch is dropped
#                       and the new watch cache starts at the current revision,
#                       so watches/lists from older resourceVersions get 410.
#                       --apiserver-arg --name=value: from now on with that flag,
#                       in place of an earlier --name=... (a feature gate
#                       turned off: --apiserver-arg=--feature-gates=WatchList=false)
#   compact-etcd [--restart-apiserver]
#                       compact etcd to its current revision. Requests that
#                       reach etcd with an older resourceVersion get 410 Gone;
#                       the apiserver's watch cache still serves the RVs it
#                       holds, so for 410 on watches either add
#                       --restart-apiserver or run the cluster with
#                       up --apiserver-arg=--watch-cache=false
#   restart-etcd [--kill] [--down SECONDS]
#                       stop etcd (SIGTERM; --kill: SIGKILL, a crash), leave it
#                       down SECONDS (default 0) and start it again on the same
#                       port and data: meanwhile the apiserver answers requests
#                       that reach etcd with errors and its watch cache re-lists
#   pause-apiserver     SIGSTOP kube-apiserver (requests hang)
#   resume-apiserver    SIGCONT kube-apiserver
#   node-notready NAME  make kwok report the node NotReady (Ready=False)
#   node-ready NAME     undo node-notready
#   stop-metrics-server [--kill] / start-metrics-server
#                       stop metrics-server (SIGTERM; --kill: SIGKILL) and start it
#                       again with the same flags (up --metrics-server clusters)
#   start-prometheus [--bearer-token-file FILE] / stop-prometheus
#                       Debian's prometheus scraping kwok's resource metrics
#                       (PROMETHEUS_URL in the env; up --metrics-server clusters);
#                       with a token file also nginx in front of it, passing on
#                       only requests with that bearer token (PROMETHEUS_AUTH_URL;
#                       run it again with another file to rotate the token)
#
# Data directory: ${KDESCHED_CLUSTER_DIR:-/tmp/kdesched-cluster} (several
# clusters can coexist with different directories). It holds pki/, logs/,
# pids/, kubeconfigs, etcd data and the env file.
#
# Node spec file: one node per line, '#' comments, columns separated by blanks,
# '-' for an empty column:
#   NAME  LABELS(k=v,...)  CAPACITY(k=v,...)  TAINTS(k=v:Effect,...)
#   node1 topology.kubernetes.io/zone=zone-a cpu=4,memory=8Gi,pods=110 -
# kubernetes.io/hostname=NAME is always added; missing capacity keys default to
# cpu=4, memory=8Gi, pods=110.
set -euo pipefail

# shellcheck source=scripts/cluster/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
# shellcheck source=scripts/cluster/metrics.sh
source "${KD_CLUSTER_SCRIPTS}/metrics.sh"
# shellcheck source=scripts/cluster/components.sh
source "${KD_CLUSTER_SCRIPTS}/components.sh"
# shellcheck source=scripts/cluster/pki.sh
source "${KD_CLUSTER_SCRIPTS}/pki.sh"
# shellcheck source=scripts/cluster/nodes.sh
source "${KD_CLUSTER_SCRIPTS}/nodes.sh"
# shellcheck source=scripts/cluster/realnode.sh
source "${KD_CLUSTER_SCRIPTS}/realnode.sh"

# Die through exit on these signals so that EXIT traps run (a failed or
# interrupted up stops what it started).
# fd 7 keeps our real stderr: a signal can arrive while output is redirected to
# /dev/null (inside a readiness check), and the EXIT trap should still be heard.
exec 7>&2
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

DIR="$(kd_cluster_dir)"
case "${DIR}" in /*) ;; *) DIR="${PWD}/${DIR}" ;; esac
DIR="${DIR%/}"
if [ -z "${DIR}" ] || [ "${DIR}" = "/" ]; then kd_die "refusing cluster dir /"; fi
MARKER="${DIR}/.kdesched-cluster"
BIN="$(kd_bin_dir)"
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
# Started only on request (metrics.sh); stopped first by down.
OPTIONAL_COMPONENTS=(prometheus-auth prometheus metrics-server kubelet kube-proxy containerd)
STOP_TIMEOUT="${KDESCHED_STOP_TIMEOUT:-15}"
SA_ISSUER="https://kubernetes.default.svc.cluster.local"
SERVICE_CIDR="10.96.0.0/16"
SERVICE_IP="10.96.0.1"

# The whole comment block at the top of this file.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

# ---------------------------------------------------------------------------
# health checks

etcd_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:${ETCD_PORT}/health" | grep -q '"health":"true"'; }
apiserver_ready() {
  curl -fsS --max-time 3 --cacert "${DIR}/pki/ca.crt" --cert "${DIR}/pki/admin.crt" \
    --key "${DIR}/pki/admin.key" "https://127.0.0.1:${APISERVER_PORT}/readyz" | grep -qx ok
}
secure_healthz() { curl -fsSk --max-time 2 "https://127.0.0.1:$1/healthz" | grep -qx ok; }
kctl() { "${BIN}/kubectl" --kubeconfig "${DIR}/admin.kubeconfig" "$@"; }
all_nodes_ready() {
  kctl get nodes -o json |
    jq -e '[.items[] | ([.status.conditions[]? | select(.type == "Ready") | .status][0] == "True")] | all' >/dev/null
}
sa_exists() { kctl -n default get serviceaccount default; }

load_state() {
  [ -f "${DIR}/state" ] || kd_die "no cluster at ${DIR} (run: $0 up)"
  # shellcheck disable=SC1091
  . "${DIR}/state"
}

# ---------------------------------------------------------------------------
# env

write_env() {
  local tmp="${DIR}/.env.tmp" c var
  {
    echo "# kdesched test cluster; source this file (written by cluster.sh)"
    printf 'KDESCHED_CLUSTER_DIR=%q\n' "${DIR}"
    printf 'KD_BIN_DIR=%q\n' "${BIN}"
    printf 'KUBECONFIG=%q\n' "${DIR}/admin.kubeconfig"
    printf 'APISERVER_URL=%q\n' "https://127.0.0.1:${APISERVER_PORT}"
    printf 'APISERVER_PORT=%q\n' "${APISERVER_PORT}"
    printf 'ETCD_ENDPOINT=%q\n' "http://127.0.0.1:${ETCD_PORT}"
    printf 'CA_FILE=%q\n' "${DIR}/pki/ca.crt"
    printf 'ADMIN_CERT_FILE=%q\n' "${DIR}/pki/admin.crt"
    printf 'ADMIN_KEY_FILE=%q\n' "${DIR}/pki/admin.key"
    printf 'SA_ISSUER=%q\n' "${SA_ISSUER}"
    printf 'KCM_HEALTHZ_URL=%q\n' "https://127.0.0.1:${KCM_PORT}/healthz"
    printf 'SCHEDULER_HEALTHZ_URL=%q\n' "https://127.0.0.1:${SCHEDULER_PORT}/healthz"
    for c in "${COMPONENTS[@]}"; do
      var="$(tr 'a-z-' 'A-Z_' <<<"${c#kube-}")_PID"
      printf '%s=%q\n' "${var}" "$(cat "${DIR}/pids/${c}.pid" 2>/dev/null || true)"
    done
    if ms_enabled; then
      printf 'KWOK_SERVER_URL=%q\n' "https://127.0.0.1:${KWOK_PORT}"
      printf 'METRICS_SERVER_URL=%q\n' "https://127.0.0.1:${METRICS_SERVER_PORT}"
      printf 'METRICS_SERVER_PID=%q\n' "$(cat "${DIR}/pids/metrics-server.pid" 2>/dev/null || true)"
    fi
    if [ -n "${PROMETHEUS_PORT:-}" ]; then
      printf 'PROMETHEUS_URL=%q\n' "http://127.0.0.1:${PROMETHEUS_PORT}"
      printf 'PROMETHEUS_PID=%q\n' "$(cat "${DIR}/pids/prometheus.pid" 2>/dev/null || true)"
    fi
    if rn_enabled; then
      printf 'REAL_NODE_NAME=%q\nREAL_NODE_IP=%q\nREAL_NODE_TAINT=%q\nCONTAINERD_ADDRESS=%q\n' \
        "${RN_NAME}" "${RN_IP}" "${RN_TAINT}" "$(rn_sock)"
      printf 'KUBELET_LOG=%q\nKUBELET_PID=%q\n' "${DIR}/logs/kubelet.log" "$(cat "${DIR}/pids/kubelet.pid" 2>/dev/null || true)"
    fi
    if [ -n "${PROMETHEUS_AUTH_PORT:-}" ]; then
      printf 'PROMETHEUS_AUTH_URL=%q\n' "http://127.0.0.1:${PROMETHEUS_AUTH_PORT}"
      printf 'PROMETHEUS_AUTH_PID=%q\n' "$(cat "${DIR}/pids/prometheus-auth.pid" 2>/dev/null || true)"
    fi
  } >"${tmp}"
  mv -f "${tmp}" "${DIR}/env"
}

# ---------------------------------------------------------------------------
# commands

# up_parse_args ARGS...: sets UP_NODE_ARG, APISERVER_EXTRA, KCM_EXTRA, SCHED_EXTRA, KWOK_ARGS,
# METRICS_SERVER.
up_parse_args() {
  UP_NODE_ARG=(--nodes 3) APISERVER_EXTRA=() KCM_EXTRA=() SCHED_EXTRA=() KWOK_ARGS=() RN_IMAGES=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;  # --opt=value -> --opt value
    esac
    case "$1" in
      --nodes|--node-spec|--apiserver-arg|--kcm-arg|--scheduler-arg|--kwok-arg|--image) [ $# -ge 2 ] || kd_die "$1 needs a value" ;;
    esac
    case "$1" in
      --nodes|--node-spec) UP_NODE_ARG=("$1" "$2"); shift 2 ;;
      --metrics-server) METRICS_SERVER=1; shift ;;
      --real-node) REAL_NODE=1; shift ;;
      --image) [ -f "$2" ] || kd_die "--image: no file $2"; RN_IMAGES+=("$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
      --apiserver-arg) APISERVER_EXTRA+=("$2"); shift 2 ;;
      --kcm-arg) KCM_EXTRA+=("$2"); shift 2 ;;
      --scheduler-arg) SCHED_EXTRA+=("$2"); shift 2 ;;
      --kwok-arg) KWOK_ARGS+=("$2"); shift 2 ;;
      *) kd_die "up: unknown argument $1" ;;
    esac
  done
  [ "${#RN_IMAGES[@]}" -eq 0 ] || rn_enabled || kd_die "--image needs --real-node"
  if [ "${UP_NODE_ARG[0]}" = --node-spec ]; then
    UP_NODE_ARG[1]="$(cd "$(dirname "${UP_NODE_ARG[1]}")" && pwd)/$(basename "${UP_NODE_ARG[1]}")"
  fi
}

# up_already: succeeds when the cluster at DIR is up already (nothing to do); removes a stale
# directory (no process alive) and fails the script on a half-running one.
up_already() {
  [ -e "${DIR}" ] || return 1
  [ -f "${MARKER}" ] || kd_die "${DIR} exists and is not a kdesched cluster directory; choose another KDESCHED_CLUSTER_DIR"
  local c alive=()
  for c in "${COMPONENTS[@]}"; do component_pid "${c}" >/dev/null && alive+=("${c}"); done
  if [ -f "${DIR}/env" ] && [ "${#alive[@]}" -eq "${#COMPONENTS[@]}" ]; then
    echo "cluster.sh: already up at ${DIR} (nothing to do; 'cluster.sh down' to stop it)"
    echo "  export KUBECONFIG=${DIR}/admin.kubeconfig"
    return 0
  fi
  if [ "${#alive[@]}" -gt 0 ]; then
    kd_die "${DIR} holds a half-running cluster (alive: ${alive[*]}); run 'cluster.sh down' first"
  fi
  kd_log "removing stale cluster directory ${DIR} (no process alive)"
  rm -rf "${DIR}"
  return 1
}

# up_binaries: builds what the cache lacks and checks the tools up needs; sets KWOK_STAGES.
up_binaries() {
  local b
  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
    if [ ! -x "${BIN}/${b}" ]; then
      kd_log "binaries missing in ${BIN}; running build.sh (a cold build takes a long time)"
      "${KD_CLUSTER_SCRIPTS}/build.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl
      break
    fi
  done
  KWOK_STAGES="$(dirname "${BIN}")/share/kwok-stages.yaml"
  [ -s "${KWOK_STAGES}" ] || "${KD_CLUSTER_SCRIPTS}/build.sh" kwok
  command -v openssl >/dev/null || kd_die "openssl not found (apt-get install openssl)"
  command -v jq >/dev/null || kd_die "jq not found (apt-get install jq)"
  command -v curl >/dev/null || kd_die "curl not found (apt-get install curl)"
}

# up_ports_and_pki: picks the ports (DIR/state) and writes the certificates and kubeconfigs; sets
# KWOK_EXTRA.
up_ports_and_pki() {
  local t
  pick_port ETCD_PORT; pick_port ETCD_PEER_PORT; pick_port APISERVER_PORT
  pick_port KCM_PORT; pick_port SCHEDULER_PORT
  printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nKCM_PORT=%s\nSCHEDULER_PORT=%s\n' \
    "${ETCD_PORT}" "${ETCD_PEER_PORT}" "${APISERVER_PORT}" "${KCM_PORT}" "${SCHEDULER_PORT}" >"${DIR}/state"
  KWOK_EXTRA=()
  if ms_enabled; then
    ms_pick_ports
    printf 'METRICS_SERVER=1\nKWOK_PORT=%s\nMETRICS_SERVER_PORT=%s\n' "${KWOK_PORT}" "${METRICS_SERVER_PORT}" >>"${DIR}/state"
  fi

  t="$(kd_now_ms)"
  gen_pki
  write_kubeconfig "${DIR}/admin.kubeconfig" kubernetes-admin admin
  write_kubeconfig "${DIR}/kube-controller-manager.kubeconfig" system:kube-controller-manager kube-controller-manager
  write_kubeconfig "${DIR}/kube-scheduler.kubeconfig" system:kube-scheduler kube-scheduler
  if ms_enabled; then ms_gen_pki; mapfile -t KWOK_EXTRA < <(ms_kwok_args); fi
  if rn_enabled; then
    rn_gen_pki
    printf 'REAL_NODE=1\n' >>"${DIR}/state"
    # Before the user's --apiserver-arg flags, which win (the last of a flag counts).
    mapfile -t APISERVER_EXTRA < <(rn_apiserver_args; printf '%s\n' "${APISERVER_EXTRA[@]+"${APISERVER_EXTRA[@]}"}")
  fi
  kd_log "certificates and kubeconfigs: $(kd_elapsed "${t}")"
}

up_etcd() {
  local t
  t="$(kd_now_ms)"
  start_component etcd "${BIN}/etcd" \
    --name=default --data-dir="${DIR}/etcd" \
    --listen-client-urls="http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls="http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster="default=http://127.0.0.1:${ETCD_PEER_PORT}" --initial-cluster-state=new \
    --unsafe-no-fsync=true --quota-backend-bytes=$((2 * 1024 * 1024 * 1024)) --log-level=warn
  wait_component etcd 30 etcd_healthy
  kd_log "etcd ready on 127.0.0.1:${ETCD_PORT}: $(kd_elapsed "${t}")"
}

up_apiserver() {
  local t
  t="$(kd_now_ms)"
  start_component kube-apiserver "${BIN}/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:${ETCD_PORT}" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="${APISERVER_PORT}" \
    --tls-cert-file="${DIR}/pki/apiserver.crt" --tls-private-key-file="${DIR}/pki/apiserver.key" \
    --client-ca-file="${DIR}/pki/ca.crt" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer="${SA_ISSUER}" \
    --service-account-key-file="${DIR}/pki/sa.pub" \
    --service-account-signing-key-file="${DIR}/pki/sa.key" \
    --service-cluster-ip-range="${SERVICE_CIDR}" \
    --allow-privileged=true \
    --requestheader-client-ca-file="${DIR}/pki/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="${DIR}/pki/front-proxy-client.crt" \
    --proxy-client-key-file="${DIR}/pki/front-proxy-client.key" \
    --endpoint-reconciler-type=none \
    --shutdown-watch-termination-grace-period=2s \
    --profiling=false \
    "${APISERVER_EXTRA[@]+"${APISERVER_EXTRA[@]}"}"
  wait_component kube-apiserver 90 apiserver_ready
  kd_log "kube-apiserver ready on https://127.0.0.1:${APISERVER_PORT}: $(kd_elapsed "${t}")"
}

# up_controllers: kube-controller-manager, kube-scheduler, kwok and the nodes of DIR/nodes.spec.
up_controllers() {
  local t
  t="$(kd_now_ms)"
  start_component kube-controller-manager "${BIN}/kube-controller-manager" \
    --kubeconfig="${DIR}/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig="${DIR}/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="${DIR}/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="${KCM_PORT}" \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="${DIR}/pki/sa.key" \
    --root-ca-file="${DIR}/pki/ca.crt" \
    --cluster-signing-cert-file="${DIR}/pki/ca.crt" --cluster-signing-key-file="${DIR}/pki/ca.key" \
    --profiling=false \
    "${KCM_EXTRA[@]+"${KCM_EXTRA[@]}"}"
  start_component kube-scheduler "${BIN}/kube-scheduler" \
    --kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="${SCHEDULER_PORT}" \
    --leader-elect=false --profiling=false \
    "${SCHED_EXTRA[@]+"${SCHED_EXTRA[@]}"}"
  # kwok: default stages of the pinned kwok (see build.sh); nodes are managed
  # only when annotated kwok.x-k8s.io/node=fake, so real nodes would be left alone.
  start_component kwok "${BIN}/kwok" \
    --kubeconfig="${DIR}/admin.kubeconfig" \
    --config="${KWOK_STAGES}" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 \
    --node-ip=127.0.0.1 \
    --cidr=10.244.0.1/16 \
    "${KWOK_EXTRA[@]+"${KWOK_EXTRA[@]}"}" "${KWOK_ARGS[@]+"${KWOK_ARGS[@]}"}"
  create_nodes "${DIR}/nodes.spec"
  wait_component kube-controller-manager 60 secure_healthz "${KCM_PORT}"
  wait_component kube-scheduler 60 secure_healthz "${SCHEDULER_PORT}"
  wait_component kwok 60 all_nodes_ready
  wait_component kube-controller-manager 60 sa_exists
  kd_log "controller-manager, scheduler, kwok and nodes ready: $(kd_elapsed "${t}")"
}

cmd_up() {
  local t0
  t0="$(kd_now_ms)"
  up_parse_args "$@"
  if up_already; then return 0; fi
  up_binaries

  mkdir -p "${DIR}"/{pids,logs,cmd,home,etcd}
  touch "${MARKER}"
  # From here on, a failure stops whatever was started.
  trap 'rc=$?; if [ "${rc}" -ne 0 ]; then exec 1>&7 2>&7; kd_log "up failed; stopping what was started"; cmd_down >&2 || true; fi' EXIT

  parse_node_arg "${UP_NODE_ARG[@]}"
  if rn_enabled; then rn_check_host; fi
  up_ports_and_pki
  if rn_enabled; then rn_network_up; fi
  up_etcd
  up_apiserver
  up_controllers
  if ms_enabled; then ms_up; fi
  if rn_enabled; then rn_up "${RN_IMAGES[@]+"${RN_IMAGES[@]}"}"; fi

  write_env
  trap - EXIT
  echo "cluster.sh: up in $(kd_elapsed "${t0}") at ${DIR}"
  echo "  export KUBECONFIG=${DIR}/admin.kubeconfig    # or: source ${DIR}/env"
  echo "  apiserver https://127.0.0.1:${APISERVER_PORT}  etcd http://127.0.0.1:${ETCD_PORT}"
  kctl get nodes -L topology.kubernetes.io/zone
}

cmd_down() {
  if [ ! -e "${DIR}" ]; then
    echo "cluster.sh: no cluster at ${DIR} (nothing to do)"
    return 0
  fi
  [ -f "${MARKER}" ] || kd_die "${DIR} is not a kdesched cluster directory; not touching it"
  local t0 c pid wave1=() wave2=()
  t0="$(kd_now_ms)"
  # The real node's pods and daemons first, while the API server is still there.
  if [ -d "${DIR}/node" ] || [ "$(cat "${RN_LOCK}" 2>/dev/null)" = "${DIR}" ]; then rn_down; fi
  for c in "${OPTIONAL_COMPONENTS[@]}" kwok kube-scheduler kube-controller-manager kube-apiserver; do
    pid="$(component_pid "${c}")" && wave1+=("${pid}")
  done
  pid="$(component_pid etcd)" && wave2+=("${pid}")
  stop_pids "${wave1[@]+"${wave1[@]}"}"
  stop_pids "${wave2[@]+"${wave2[@]}"}"
  for c in "${COMPONENTS[@]}" "${OPTIONAL_COMPONENTS[@]}"; do
    ! component_pid "${c}" >/dev/null || kd_die "${c} is still running; ${DIR} kept"
  done
  rm -rf "${DIR}"
  echo "cluster.sh: down in $(kd_elapsed "${t0}") (stopped ${#wave1[@]}+${#wave2[@]} processes, removed ${DIR})"
}

cmd_status() {
  [ -d "${DIR}" ] || { echo "no cluster at ${DIR}"; return 1; }
  load_state
  local c pid rc=0
  for c in "${COMPONENTS[@]}"; do
    if pid="$(component_pid "${c}")"; then
      local st; st="$(sed 's/.*) //' "/proc/${pid}/stat" | cut -d' ' -f1)"
      printf '%-24s running  pid %-8s%s\n' "${c}" "${pid}" "$([ "${st}" = T ] && echo ' (stopped/paused)')"
    else
      printf '%-24s NOT running\n' "${c}"; rc=1
    fi
  done
  for c in "${OPTIONAL_COMPONENTS[@]}"; do
    [ -f "${DIR}/pids/${c}.pid" ] || continue
    if pid="$(component_pid "${c}")"; then
      printf '%-24s running  pid %s\n' "${c}" "${pid}"
    else
      printf '%-24s stopped\n' "${c}"
    fi
  done
  if ms_enabled; then echo "kwok server https://127.0.0.1:${KWOK_PORT}  metrics-server https://127.0.0.1:${METRICS_SERVER_PORT}"; fi
  if [ -n "${PROMETHEUS_PORT:-}" ]; then echo "prometheus http://127.0.0.1:${PROMETHEUS_PORT}"; fi
  if [ -n "${PROMETHEUS_AUTH_PORT:-}" ]; then echo "prometheus-auth http://127.0.0.1:${PROMETHEUS_AUTH_PORT}"; fi
  echo "apiserver https://127.0.0.1:${APISERVER_PORT}  etcd http://127.0.0.1:${ETCD_PORT}"
  echo "kubeconfig ${DIR}/admin.kubeconfig  env ${DIR}/env"
  return "${rc}"
}

cmd_wait_ready() {
  load_state
  local timeout="${1:-60}"
  kd_wait_for "kube-apiserver /readyz" "${timeout}" apiserver_ready || return 1
  kd_wait_for "all nodes Ready" "${timeout}" all_nodes_ready || return 1
  echo "cluster.sh: ready"
}

cmd_restart_apiserver() {
  load_state
  local pid t0 how=SIGTERM kill=0 args=()
  t0="$(kd_now_ms)"
  while [ $# -gt 0 ]; do
    case "$1" in
      --apiserver-arg=*) set -- --apiserver-arg "${1#*=}" "${@:2}" ;;
    esac
    case "$1" in
      --kill) kill=1; shift ;;
      --apiserver-arg) [ $# -ge 2 ] || kd_die "$1 needs a value"; args+=("$2"); shift 2 ;;
      *) kd_die "restart-apiserver: unknown argument $1" ;;
    esac
  done
  pid="$(component_pid kube-apiserver)" || kd_die "kube-apiserver is not running"
  local a f="${DIR}/cmd/kube-apiserver.args"
  for a in "${args[@]+"${args[@]}"}"; do
    [[ "${a}" == --?*=* ]] || kd_die "restart-apiserver: --apiserver-arg takes --name=value, not ${a}"
    grep -v -- "^${a%%=*}=" "${f}" >"${f}.new" || true
    printf '%s\n' "${a}" >>"${f}.new"
    mv -f "${f}.new" "${f}"
  done
  [ "${kill}" = 0 ] || how=SIGKILL
  stop_component kube-apiserver "${pid}" "${how}" "${APISERVER_PORT}"
  launch kube-apiserver
  wait_component kube-apiserver 90 apiserver_ready
  write_env
  echo "cluster.sh: kube-apiserver restarted (${how}) on port ${APISERVER_PORT} in $(kd_elapsed "${t0}") (pid $(cat "${DIR}/pids/kube-apiserver.pid"))"
}

cmd_restart_etcd() {
  load_state
  local pid t0 how=SIGTERM down=0
  t0="$(kd_now_ms)"
  while [ $# -gt 0 ]; do
    case "$1" in
      --kill) how=SIGKILL; shift ;;
      --down) [ $# -ge 2 ] && [[ "$2" =~ ^[0-9]+(\.[0-9]+)?$ ]] || kd_die "--down needs seconds"
        down="$2"; shift 2 ;;
      *) kd_die "restart-etcd: unknown argument $1" ;;
    esac
  done
  pid="$(component_pid etcd)" || kd_die "etcd is not running"
  stop_component etcd "${pid}" "${how}" "${ETCD_PORT}"
  sleep "${down}"
  # The data directory holds the member, so etcd ignores --initial-cluster-state=new.
  launch etcd
  wait_component etcd 30 etcd_healthy
  write_env
  echo "cluster.sh: etcd restarted (${how}, down ${down}s) on port ${ETCD_PORT} in $(kd_elapsed "${t0}") (pid $(cat "${DIR}/pids/etcd.pid"))"
}

cmd_compact_etcd() {
  load_state
  local ep="http://127.0.0.1:${ETCD_PORT}" rev
  if [ -x "${BIN}/etcdctl" ]; then
    rev="$("${BIN}/etcdctl" --endpoints="${ep}" endpoint status -w json | jq -r '.[0].Status.header.revision')"
    [[ "${rev}" =~ ^[0-9]+$ ]] || kd_die "could not read the etcd revision"
    "${BIN}/etcdctl" --endpoints="${ep}" compaction --physical "${rev}" >/dev/null
  else
    # etcd's v3 HTTP/JSON gateway (build.sh etcdctl gives the CLI instead).
    rev="$(curl -fsS -X POST "${ep}/v3/kv/range" -d '{"key":"AA=="}' | jq -r '.header.revision')"
    [[ "${rev}" =~ ^[0-9]+$ ]] || kd_die "could not read the etcd revision"
    curl -fsS -X POST "${ep}/v3/kv/compaction" -d "{\"revision\":\"${rev}\",\"physical\":true}" >/dev/null
  fi
  echo "cluster.sh: etcd compacted at revision ${rev}"
  if [ "${1:-}" = --restart-apiserver ]; then cmd_restart_apiserver; fi
}

cmd_signal_apiserver() {
  load_state
  local pid
  pid="$(component_pid kube-apiserver)" || kd_die "kube-apiserver is not running"
  kill "-$1" "${pid}"
  echo "cluster.sh: kube-apiserver (pid ${pid}) ${2}"
}

main() {
  local cmd="${1:-}"
  [ $# -eq 0 ] || shift
  case "${cmd}" in
    up) cmd_up "$@" ;;
    down) cmd_down ;;
    status) cmd_status ;;
    wait-ready) cmd_wait_ready "$@" ;;
    env)
      load_state
      sed -n 's/^\([A-Z_]*=\)/export \1/p' "${DIR}/env"
      # shellcheck disable=SC2016  # ${PATH} is for the eval, not for here
      printf 'export PATH=%q:"${PATH}"\n' "${BIN}" ;;
    kubectl) load_state; kctl "$@" ;;
    add-nodes)
      load_state
      [ $# -eq 2 ] || kd_die "usage: cluster.sh add-nodes (--nodes N | --node-spec FILE)"
      local spec last; spec="$(mktemp)"
      if [ "$1" = --nodes ]; then
        [[ "$2" =~ ^[0-9]+$ ]] || kd_die "--nodes needs a number"
        last="$(kctl get nodes -o name | sed -n 's#^node/node\([0-9]\+\)$#\1#p' | sort -n | tail -n 1)"
        default_spec "$2" $(( ${last:-0} + 1 )) >"${spec}"
      else
        [ -f "$2" ] || kd_die "node spec file '$2' not found"
        cp "$2" "${spec}"
      fi
      create_nodes "${spec}"; rm -f "${spec}"
      cmd_wait_ready 60
      # Prometheus' targets come from the nodes' status, which kwok fills in once they are Ready.
      if component_pid prometheus >/dev/null; then prom_write_targets; fi ;;
    restart-apiserver) cmd_restart_apiserver "$@" ;;
    compact-etcd) cmd_compact_etcd "$@" ;;
    restart-etcd) cmd_restart_etcd "$@" ;;
    pause-apiserver) cmd_signal_apiserver STOP "paused (SIGSTOP)" ;;
    resume-apiserver) cmd_signal_apiserver CONT "resumed (SIGCONT)" ;;
    node-notready) cmd_node_notready "$@" ;;
    node-ready) cmd_node_ready "$@" ;;
    stop-metrics-server) load_state; ms_stop metrics-server "$@" ;;
    start-metrics-server) load_state; ms_start_again ;;
    start-prometheus)
      load_state
      if [ $# -eq 0 ]; then ms_prometheus_start
      elif [ $# -eq 2 ] && [ "$1" = --bearer-token-file ]; then ms_prometheus_auth_start "$2"
      else kd_die "usage: cluster.sh start-prometheus [--bearer-token-file FILE]"; fi ;;
    stop-prometheus) load_state; ms_stop prometheus-auth; ms_stop prometheus ;;
    import-image) load_state; [ $# -eq 1 ] && [ -f "$1" ] || kd_die "usage: cluster.sh import-image OCI_ARCHIVE"
      rn_enabled || kd_die "no real node in this cluster (up --real-node)"; rn_import_image "$1" ;;
    real-node-leftovers) rn_leftovers ;;
    -h|--help|help) usage ;;
    "") usage; exit 2 ;;
    *) kd_die "unknown command '${cmd}' (see --help)" ;;
  esac
}

main "$@"
