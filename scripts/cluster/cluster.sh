#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for kdesched's tests:
# etcd, kube-apiserver (TLS, Node,RBAC, service-account tokens, default
# admission plugins), kube-controller-manager (default controllers),
# kube-scheduler and kwok (fake nodes, pods marked Running/Ready).
# Binaries come from the cache that build.sh fills.
#
# Usage: cluster.sh COMMAND [ARGS]
#   up [--nodes N | --node-spec FILE] [--apiserver-arg ARG]... [--kcm-arg ARG]...
#                       [--scheduler-arg ARG]... [--metrics-server]
#                       start everything (default 3 nodes: node1..node3); a
#                       second up on a running cluster is a no-op.
#                       --metrics-server: kwok also serves the nodes' kubelet
#                       resource metrics and metrics-server answers
#                       metrics.k8s.io through the aggregation layer (metrics.sh)
#   down                stop exactly the processes up started (by recorded PID),
#                       then remove the data directory; safe to repeat
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
OPTIONAL_COMPONENTS=(prometheus-auth prometheus metrics-server)
STOP_TIMEOUT="${KDESCHED_STOP_TIMEOUT:-15}"
SA_ISSUER="https://kubernetes.default.svc.cluster.local"
SERVICE_CIDR="10.96.0.0/16"
SERVICE_IP="10.96.0.1"

# The whole comment block at the top of this file.
usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }

# ---------------------------------------------------------------------------
# processes

# component_pid NAME: prints the PID of the component if it is alive and really
# ours (the PID may have been recycled: our processes carry DIR in their args).
component_pid() {
  local f="${DIR}/pids/$1.pid" pid state
  [ -f "${f}" ] || return 1
  pid="$(cat "${f}")"
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  pid_is_ours "${pid}" || return 1
  echo "${pid}"
}

pid_is_ours() {
  local pid="$1" state
  [ -r "/proc/${pid}/cmdline" ] || return 1
  state="$(sed 's/.*) //' "/proc/${pid}/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "${state}" ] && [ "${state}" != Z ] && [ "${state}" != X ] || return 1
  tr '\0' '\n' <"/proc/${pid}/cmdline" 2>/dev/null | grep -qF -- "${DIR}/"
}

# pid_exiting PID: on its way out but not done: its command line is gone (the memory goes early in
# the exit, so pid_is_ours says no) while a thread of it is not a zombie yet and may still hold its
# listening sockets and its files. Binding its port or removing DIR then races with it.
pid_exiting() {
  local f s state flags
  [ -r "/proc/$1/cmdline" ] && [ -z "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ] || return 1
  for f in /proc/"$1"/task/*/stat; do
    { read -r s <"${f}"; } 2>/dev/null || continue
    read -r state _ _ _ _ _ flags _ <<<"${s##*) }"
    (( (flags & 0x200000) == 0 )) || return 1  # PF_KTHREAD: a kernel thread took the PID over
    case "${state}" in Z | X) ;; *) return 0 ;; esac
  done
  return 1
}

# stop_pids PID...: SIGTERM (and SIGCONT, in case one is paused), wait up to
# STOP_TIMEOUT seconds, then SIGKILL whatever is left and wait until each is a zombie or gone
# (an exiting process counts as running: see pid_exiting).
stop_pids() {
  local pid left deadline
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill -TERM "${pid}" 2>/dev/null || true; kill -CONT "${pid}" 2>/dev/null || true; done
  deadline=$(( $(date +%s) + STOP_TIMEOUT ))
  while true; do
    left=()
    for pid in "$@"; do pid_is_ours "${pid}" || pid_exiting "${pid}" && left+=("${pid}"); done
    [ "${#left[@]}" -gt 0 ] || return 0
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      kd_log "SIGKILL ${left[*]} (still running after ${STOP_TIMEOUT}s)"
      for pid in "${left[@]}"; do kill -KILL "${pid}" 2>/dev/null || true; done
      deadline=$(( $(date +%s) + 10 ))
      while true; do
        left=()
        for pid in "$@"; do pid_is_ours "${pid}" || pid_exiting "${pid}" && left+=("${pid}"); done
        [ "${#left[@]}" -gt 0 ] || return 0
        [ "$(date +%s)" -lt "${deadline}" ] || { kd_log "could not stop ${left[*]}"; return 1; }
        sleep 0.2
      done
    fi
    sleep 0.2
  done
}

# start_component NAME BINARY ARGS...: starts it in its own session (so a ^C on
# the terminal that ran up does not reach it), logs to logs/NAME.log, records
# its PID and its command line (for restarts).
start_component() {
  local name="$1"; shift
  printf '%s\n' "$@" >"${DIR}/cmd/${name}.args"
  launch "${name}"
}

launch() {
  local name="$1" args
  mapfile -t args <"${DIR}/cmd/${name}.args"
  # HOME is set for kwok, which otherwise also loads ~/.kwok/kwok.yaml.
  ( cd "${DIR}" && HOME="${DIR}/home" exec setsid "${args[@]}" >>"${DIR}/logs/${name}.log" 2>&1 </dev/null 7>&- ) &
  local pid=$! i
  echo "${pid}" >"${DIR}/pids/${name}.pid"
  # Until the subshell has exec'd, /proc/PID is still a copy of this script.
  for i in $(seq 1 100); do
    pid_is_ours "${pid}" && return 0
    [ -e "/proc/${pid}" ] || break
    sleep 0.05
  done
  tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
  kd_die "${name} did not start (log: ${DIR}/logs/${name}.log)"
}

# wait_component NAME TIMEOUT CHECK...: waits for CHECK to succeed; fails early
# with the component's log tail when the process dies.
wait_component() {
  local name="$1" timeout="$2"; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  while true; do
    if ! component_pid "${name}" >/dev/null; then
      tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
      kd_die "${name} exited during start (log: ${DIR}/logs/${name}.log)"
    fi
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
      kd_die "${name} not ready after ${timeout}s (log: ${DIR}/logs/${name}.log)"
    fi
    sleep 0.25
  done
}

# ---------------------------------------------------------------------------
# ports, certificates, kubeconfigs

port_in_use() {
  local hex
  hex="$(printf ':%04X' "$1")"
  awk -v h="${hex}" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# port_listening PORT: a socket LISTENs on PORT (state 0A); TIME_WAIT leftovers of
# accepted connections do not count (they do not stop a new listener binding).
port_listening() {
  local hex
  hex="$(printf ':%04X' "$1")"
  awk -v h="${hex}" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port_released() { ! port_listening "$1"; }

# pick_port VAR: sets VAR to a free port below the ephemeral range (so outgoing
# connections do not take it between now and the bind), not yet handed out by this
# run (a VAR, not $(pick_port): PICKED must grow in this shell, not in a subshell).
PICKED=" "
pick_port() {
  local pp_port
  for _ in $(seq 1 200); do
    pp_port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    case "${PICKED}" in *" ${pp_port} "*) continue ;; esac
    port_in_use "${pp_port}" && continue
    PICKED+="${pp_port} "
    printf -v "$1" '%s' "${pp_port}"
    return 0
  done
  kd_die "no free port found"
}

ossl() { openssl "$@" >>"${DIR}/logs/openssl.log" 2>&1 || kd_die "openssl $1 failed (see ${DIR}/logs/openssl.log)"; }

# sign_cert NAME SUBJECT EXT_LINES: key + certificate signed by the cluster CA.
# TLS keys are ECDSA P-256 (fast to generate, fine for Go and OpenSSL clients);
# the service-account signing key is RSA (RS256 tokens, the common case).
sign_cert() {
  local name="$1" subj="$2" ext="$3" p="${DIR}/pki"
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/${name}.key" -out "${p}/${name}.csr" -subj "${subj}"
  printf '%b\n' "${ext}" >"${p}/${name}.ext"
  ossl x509 -req -in "${p}/${name}.csr" -CA "${p}/ca.crt" -CAkey "${p}/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "${p}/${name}.ext" -out "${p}/${name}.crt"
  rm -f "${p}/${name}.csr" "${p}/${name}.ext"
}

gen_pki() {
  local p="${DIR}/pki"
  mkdir -p "${p}"
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/ca.key" -out "${p}/ca.crt" -days 3650 \
    -sha256 -subj "/CN=kdesched-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  local client='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
  sign_cert apiserver "/CN=kube-apiserver" \
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:${SERVICE_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign_cert admin "/O=system:masters/CN=kubernetes-admin" "${client}"
  sign_cert kube-controller-manager "/CN=system:kube-controller-manager" "${client}"
  sign_cert kube-scheduler "/CN=system:kube-scheduler" "${client}"
  # Front proxy (aggregation layer / requestheader authentication), as kubeadm
  # sets it up; without it the delegating authenticators of the controller
  # manager and scheduler log errors about a missing requestheader CA.
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/front-proxy-ca.key" \
    -out "${p}/front-proxy-ca.crt" -days 3650 -sha256 -subj "/CN=kdesched-front-proxy-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  local p2="${p}/front-proxy-client"
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p2}.key" -out "${p2}.csr" \
    -subj "/CN=front-proxy-client"
  printf '%b\n' "${client}" >"${p2}.ext"
  ossl x509 -req -in "${p2}.csr" -CA "${p}/front-proxy-ca.crt" -CAkey "${p}/front-proxy-ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "${p2}.ext" -out "${p2}.crt"
  rm -f "${p2}.csr" "${p2}.ext"
  # Service-account token signing keypair.
  ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "${p}/sa.key"
  ossl pkey -in "${p}/sa.key" -pubout -out "${p}/sa.pub"
  chmod 600 "${p}"/*.key
}

# write_kubeconfig FILE USER CERT_NAME: a kubeconfig with embedded credentials: the client
# certificate pki/CERT_NAME.{crt,key}, or with CERT_NAME "--token TOKEN" a bearer token.
write_kubeconfig() {
  local file="$1" user="$2" p="${DIR}/pki" creds
  if [ "$3" = --token ]; then
    creds="    token: $4"
  else
    creds="    client-certificate-data: $(base64 -w0 <"${p}/$3.crt")
    client-key-data: $(base64 -w0 <"${p}/$3.key")"
  fi
  cat >"${file}" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kdesched
  cluster:
    server: https://127.0.0.1:${APISERVER_PORT}
    certificate-authority-data: $(base64 -w0 <"${p}/ca.crt")
users:
- name: ${user}
  user:
${creds}
contexts:
- name: kdesched
  context:
    cluster: kdesched
    user: ${user}
current-context: kdesched
EOF
  chmod 600 "${file}"
}

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
# nodes

# default_spec N [FIRST]: nodeFIRST..node(FIRST+N-1) (FIRST defaults to 1),
# zones a/b/c round robin.
default_spec() {
  local i first="${2:-1}" zones=(zone-a zone-b zone-c)
  for ((i = first; i < first + $1; i++)); do
    printf 'node%d topology.kubernetes.io/zone=%s cpu=4,memory=8Gi,pods=110 -\n' "${i}" "${zones[$(((i - 1) % 3))]}"
  done
}

# node_json NAME LABELS CAPACITY TAINTS: a kwok-managed Node object.
node_json() {
  jq -cn --arg name "$1" --arg labels "${2:--}" --arg cap "${3:--}" --arg taints "${4:--}" \
    --arg metrics "${METRICS_SERVER:-0}" '
    def kv: if . == "-" or . == "" then {} else
      [split(",")[] | select(length > 0) | (index("=")) as $i
        | if $i == null then {key: ., value: ""} else {key: .[:$i], value: .[$i + 1:]} end]
      | from_entries end;
    def taint: (index(":")) as $c
      | if $c == null then error("taint \(.) needs :Effect") else . end
      | .[:$c] as $kv | .[$c + 1:] as $effect | ($kv | index("=")) as $e
      | if $e == null then {key: $kv, effect: $effect}
        else {key: $kv[:$e], value: $kv[$e + 1:], effect: $effect} end;
    ({cpu: "4", memory: "8Gi", pods: "110"} + ($cap | kv)) as $capacity
    | {apiVersion: "v1", kind: "Node",
       metadata: {name: $name,
         annotations: ({"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
           + if $metrics == "1" then {"metrics.k8s.io/resource-metrics-path":
               "/metrics/nodes/\($name)/metrics/resource"} else {} end),
         labels: ({"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "type": "kwok"}
                  + ($labels | kv) + {"kubernetes.io/hostname": $name})},
       spec: (if $taints == "-" or $taints == "" then {}
              else {taints: [$taints | split(",")[] | select(length > 0) | taint]} end),
       status: {allocatable: $capacity, capacity: $capacity}}'
}

# create_nodes SPEC_FILE: creates every node of the spec.
create_nodes() {
  local spec="$1" name labels cap taints extra count=0
  local all=""
  while read -r name labels cap taints extra; do
    case "${name}" in ''|'#'*) continue ;; esac
    [ -z "${extra}" ] || kd_die "node spec line for ${name}: too many columns"
    all+="$(node_json "${name}" "${labels}" "${cap}" "${taints}")"$'\n'
    count=$((count + 1))
  done <"${spec}"
  [ "${count}" -gt 0 ] || return 0
  jq -s '{apiVersion: "v1", kind: "List", items: .}' <<<"${all}" | kctl create -f - >/dev/null
  kd_log "created ${count} kwok node(s)"
}

# parse_nodes_args ARGS...: sets NODE_SPEC (a file) from --nodes/--node-spec.
parse_node_arg() {
  case "$1" in
    --nodes)
      [[ "$2" =~ ^[0-9]+$ ]] || kd_die "--nodes needs a number"
      default_spec "$2" >"${DIR}/nodes.spec" ;;
    --node-spec)
      [ -f "$2" ] || kd_die "node spec file '$2' not found"
      cp "$2" "${DIR}/nodes.spec" ;;
  esac
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
    if [ -n "${PROMETHEUS_AUTH_PORT:-}" ]; then
      printf 'PROMETHEUS_AUTH_URL=%q\n' "http://127.0.0.1:${PROMETHEUS_AUTH_PORT}"
      printf 'PROMETHEUS_AUTH_PID=%q\n' "$(cat "${DIR}/pids/prometheus-auth.pid" 2>/dev/null || true)"
    fi
  } >"${tmp}"
  mv -f "${tmp}" "${DIR}/env"
}

# ---------------------------------------------------------------------------
# commands

cmd_up() {
  local t0 t apiserver_extra=() kcm_extra=() sched_extra=() node_arg=(--nodes 3)
  t0="$(kd_now_ms)"
  while [ $# -gt 0 ]; do
    case "$1" in
      --*=*) set -- "${1%%=*}" "${1#*=}" "${@:2}" ;;  # --opt=value -> --opt value
    esac
    case "$1" in
      --nodes|--node-spec|--apiserver-arg|--kcm-arg|--scheduler-arg) [ $# -ge 2 ] || kd_die "$1 needs a value" ;;
    esac
    case "$1" in
      --nodes|--node-spec) node_arg=("$1" "$2"); shift 2 ;;
      --metrics-server) METRICS_SERVER=1; shift ;;
      --apiserver-arg) apiserver_extra+=("$2"); shift 2 ;;
      --kcm-arg) kcm_extra+=("$2"); shift 2 ;;
      --scheduler-arg) sched_extra+=("$2"); shift 2 ;;
      *) kd_die "up: unknown argument $1" ;;
    esac
  done
  if [ "${node_arg[0]}" = --node-spec ]; then
    node_arg[1]="$(cd "$(dirname "${node_arg[1]}")" && pwd)/$(basename "${node_arg[1]}")"
  fi

  if [ -e "${DIR}" ]; then
    [ -f "${MARKER}" ] || kd_die "${DIR} exists and is not a kdesched cluster directory; choose another KDESCHED_CLUSTER_DIR"
    local alive=()
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
  fi

  for b in etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl; do
    if [ ! -x "${BIN}/${b}" ]; then
      kd_log "binaries missing in ${BIN}; running build.sh (a cold build takes a long time)"
      "${KD_CLUSTER_SCRIPTS}/build.sh" etcd kube-apiserver kube-controller-manager kube-scheduler kwok kubectl
      break
    fi
  done
  local stages; stages="$(dirname "${BIN}")/share/kwok-stages.yaml"
  [ -s "${stages}" ] || "${KD_CLUSTER_SCRIPTS}/build.sh" kwok
  command -v openssl >/dev/null || kd_die "openssl not found (apt-get install openssl)"
  command -v jq >/dev/null || kd_die "jq not found (apt-get install jq)"
  command -v curl >/dev/null || kd_die "curl not found (apt-get install curl)"

  mkdir -p "${DIR}"/{pids,logs,cmd,home,etcd}
  touch "${MARKER}"
  # From here on, a failure stops whatever was started.
  trap 'rc=$?; if [ "${rc}" -ne 0 ]; then exec 1>&7 2>&7; kd_log "up failed; stopping what was started"; cmd_down >&2 || true; fi' EXIT

  parse_node_arg "${node_arg[@]}"

  pick_port ETCD_PORT; pick_port ETCD_PEER_PORT; pick_port APISERVER_PORT
  pick_port KCM_PORT; pick_port SCHEDULER_PORT
  printf 'ETCD_PORT=%s\nETCD_PEER_PORT=%s\nAPISERVER_PORT=%s\nKCM_PORT=%s\nSCHEDULER_PORT=%s\n' \
    "${ETCD_PORT}" "${ETCD_PEER_PORT}" "${APISERVER_PORT}" "${KCM_PORT}" "${SCHEDULER_PORT}" >"${DIR}/state"
  local kwok_extra=()
  if ms_enabled; then
    ms_pick_ports
    printf 'METRICS_SERVER=1\nKWOK_PORT=%s\nMETRICS_SERVER_PORT=%s\n' "${KWOK_PORT}" "${METRICS_SERVER_PORT}" >>"${DIR}/state"
  fi

  t="$(kd_now_ms)"
  gen_pki
  write_kubeconfig "${DIR}/admin.kubeconfig" kubernetes-admin admin
  write_kubeconfig "${DIR}/kube-controller-manager.kubeconfig" system:kube-controller-manager kube-controller-manager
  write_kubeconfig "${DIR}/kube-scheduler.kubeconfig" system:kube-scheduler kube-scheduler
  if ms_enabled; then ms_gen_pki; mapfile -t kwok_extra < <(ms_kwok_args); fi
  kd_log "certificates and kubeconfigs: $(kd_elapsed "${t}")"

  t="$(kd_now_ms)"
  start_component etcd "${BIN}/etcd" \
    --name=default --data-dir="${DIR}/etcd" \
    --listen-client-urls="http://127.0.0.1:${ETCD_PORT}" --advertise-client-urls="http://127.0.0.1:${ETCD_PORT}" \
    --listen-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" --initial-advertise-peer-urls="http://127.0.0.1:${ETCD_PEER_PORT}" \
    --initial-cluster="default=http://127.0.0.1:${ETCD_PEER_PORT}" --initial-cluster-state=new \
    --unsafe-no-fsync=true --quota-backend-bytes=$((2 * 1024 * 1024 * 1024)) --log-level=warn
  wait_component etcd 30 etcd_healthy
  kd_log "etcd ready on 127.0.0.1:${ETCD_PORT}: $(kd_elapsed "${t}")"

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
    "${apiserver_extra[@]+"${apiserver_extra[@]}"}"
  wait_component kube-apiserver 90 apiserver_ready
  kd_log "kube-apiserver ready on https://127.0.0.1:${APISERVER_PORT}: $(kd_elapsed "${t}")"

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
    "${kcm_extra[@]+"${kcm_extra[@]}"}"
  start_component kube-scheduler "${BIN}/kube-scheduler" \
    --kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="${DIR}/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="${SCHEDULER_PORT}" \
    --leader-elect=false --profiling=false \
    "${sched_extra[@]+"${sched_extra[@]}"}"
  # kwok: default stages of the pinned kwok (see build.sh); nodes are managed
  # only when annotated kwok.x-k8s.io/node=fake, so real nodes would be left alone.
  start_component kwok "${BIN}/kwok" \
    --kubeconfig="${DIR}/admin.kubeconfig" \
    --config="${stages}" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --node-lease-duration-seconds=40 \
    --node-ip=127.0.0.1 \
    --cidr=10.244.0.1/16 \
    "${kwok_extra[@]+"${kwok_extra[@]}"}"
  create_nodes "${DIR}/nodes.spec"
  wait_component kube-controller-manager 60 secure_healthz "${KCM_PORT}"
  wait_component kube-scheduler 60 secure_healthz "${SCHEDULER_PORT}"
  wait_component kwok 60 all_nodes_ready
  wait_component kube-controller-manager 60 sa_exists
  kd_log "controller-manager, scheduler, kwok and nodes ready: $(kd_elapsed "${t}")"
  if ms_enabled; then ms_up; fi

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

# stop_component NAME PID SIGTERM|SIGKILL PORT: stops one component (SIGKILL: a crash) and waits
# until its port is free. stop_pids waits for an exiting process too (pid_exiting); the listener is
# checked as well, as binding the same port at once once failed with "address already in use".
stop_component() {
  if [ "$3" = SIGKILL ]; then
    kill -KILL "$2"
    STOP_TIMEOUT=0 stop_pids "$2" 2>/dev/null
  else
    stop_pids "$2"
  fi
  kd_wait_for "port $4 released" 15 port_released "$4" || kd_die "$1's port $4 is still bound after it stopped"
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

cmd_node_notready() {
  load_state
  [ -n "${1:-}" ] || kd_die "usage: cluster.sh node-notready NAME"
  # kwok's node-not-ready stage (loaded from the pinned kwok module) sets
  # Ready=False on nodes with this label and then heartbeats stop (the
  # heartbeat stage only runs for Ready nodes); the node lifecycle
  # controller then adds the node.kubernetes.io/not-ready taints.
  kctl label node "$1" node-not-ready.stage.kwok.x-k8s.io=true --overwrite >/dev/null
  kd_wait_for "node $1 Ready=False" 30 node_ready_is "$1" False || kd_die "node $1 did not become NotReady"
  echo "cluster.sh: node $1 is NotReady"
}

cmd_node_ready() {
  load_state
  [ -n "${1:-}" ] || kd_die "usage: cluster.sh node-ready NAME"
  kctl label node "$1" node-not-ready.stage.kwok.x-k8s.io- >/dev/null
  kd_wait_for "node $1 Ready=True" 30 node_ready_is "$1" True || kd_die "node $1 did not become Ready"
  echo "cluster.sh: node $1 is Ready"
}

node_ready_is() {
  [ "$(kctl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = "$2" ]
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
    -h|--help|help) usage ;;
    "") usage; exit 2 ;;
    *) kd_die "unknown command '${cmd}' (see --help)" ;;
  esac
}

main "$@"
