# shellcheck shell=bash
# Helpers for the end-to-end tests of the live daemon (test/e2e/daemon.sh, leader.sh): a test
# harness in smoke.sh's style (counted checks, timed phases, a final "NAME: N passed, N failed"
# line, clean-up on every exit), kdesched processes that are always stopped, Prometheus scraping,
# log queries and the order/payment workload.
#
# Source it after scripts/cluster/lib.sh, with these set:
#   ROOT        the checkout
#   KDS_NAME    the test's name (for the summary line)
#   KDESCHED_CLUSTER_DIR  the test's own cluster directory
#   WORK        a scratch directory (removed at the end unless KDS_KEEP_WORK=1)
# then call kds_install_traps. Every kdesched started with kds_start is stopped by PID at exit.
#
# kdesched is ${KDESCHED_BIN:-ROOT/build/kdesched} (scripts/test.sh passes the -Werror build).

# shellcheck disable=SC2034  # results (KDS_RC, KDS_*_MS, PAYMENT_*) are read by the tests
KDS_CLUSTER="${ROOT}/scripts/cluster/cluster.sh"
KDESCHED="${KDESCHED_BIN:-${ROOT}/build/kdesched}"
KDS_POLICY="${ROOT}/examples/order-payment/policy.yaml"
KDS_NS=default
KDS_PASSED=0
KDS_FAILED=0
KDS_PHASES=()
KDS_PHASE_NAME=""
KDS_PHASE_T0=0
KDS_T0="$(kd_now_ms)"
KDS_TIMINGS=()    # "what: value" lines printed at the end
KDS_PIDS=()       # every kdesched started (stopped at exit if still running)
KDS_EXTRA_PIDS=() # helper processes a test started (killed at exit)
declare -A KDS_LOG_OF=()

pass() { KDS_PASSED=$((KDS_PASSED + 1)); echo "  ok    $*"; }
fail() { KDS_FAILED=$((KDS_FAILED + 1)); echo "  FAIL  $*" >&2; exit 1; }
# check DESCRIPTION COMMAND...: one counted check.
check() { local d="$1"; shift; if "$@"; then pass "${d}"; else fail "${d}"; fi; }
# timing WHAT VALUE: recorded for the summary and printed now.
timing() { KDS_TIMINGS+=("$(printf '%-58s %s' "$1" "$2")"); echo "     timing: $1: $2"; }
note() { echo "     $*"; }

phase() {
  end_phase
  KDS_PHASE_NAME="$1"; KDS_PHASE_T0="$(kd_now_ms)"
  echo "== ${KDS_PHASE_NAME}"
}
end_phase() {
  [ -n "${KDS_PHASE_NAME}" ] || return 0
  local took; took="$(kd_elapsed "${KDS_PHASE_T0}")"
  KDS_PHASES+=("$(printf '%-58s %s' "${KDS_PHASE_NAME}" "${took}")")
  echo "   (${KDS_PHASE_NAME}: ${took})"
  KDS_PHASE_NAME=""
}

# ms between two kd_now_ms values, as "1.234s"
ms_str() { printf '%d.%03ds' $(($1 / 1000)) $(($1 % 1000)); }

kds_finish() {
  local rc=$?
  trap - EXIT INT TERM HUP
  set +eu
  exec 1>&7 2>&8
  [ "${rc}" -eq 0 ] || [ "${KDS_FAILED}" -gt 0 ] || { KDS_FAILED=$((KDS_FAILED + 1)); echo "  FAIL  aborted (exit ${rc})" >&2; }
  if [ "${rc}" -ne 0 ] && [ -n "${KDS_PHASE_NAME}" ]; then
    KDS_PHASES+=("$(printf '%-58s %s (failed)' "${KDS_PHASE_NAME}" "$(kd_elapsed "${KDS_PHASE_T0}")")")
  fi
  # A paused apiserver would make every clean-up request hang.
  if [ -d "${KDESCHED_CLUSTER_DIR}" ]; then "${KDS_CLUSTER}" resume-apiserver >/dev/null 2>&1; fi
  kds_stop_all
  local p
  for p in "${KDS_EXTRA_PIDS[@]+"${KDS_EXTRA_PIDS[@]}"}"; do
    kill -TERM "${p}" 2>/dev/null; wait "${p}" 2>/dev/null
  done
  if [ "${rc}" -ne 0 ]; then
    local f
    for f in "${!KDS_LOG_OF[@]}"; do
      echo "--- tail ${KDS_LOG_OF[${f}]}" >&2; tail -n 25 "${KDS_LOG_OF[${f}]}" >&2 2>/dev/null
    done
    if [ -d "${KDESCHED_CLUSTER_DIR}/logs" ]; then
      echo "--- state at failure" >&2
      [ -z "${KUBECONFIG:-}" ] || kd_kubectl --request-timeout=5s get nodes,pods,pdb,leases -o wide >&2 2>/dev/null
      for f in "${KDESCHED_CLUSTER_DIR}"/logs/*.log; do
        echo "--- tail ${f}" >&2; tail -n 10 "${f}" >&2 || true
      done
    fi
  fi
  if [ -d "${KDESCHED_CLUSTER_DIR}" ]; then
    "${KDS_CLUSTER}" down >&2 || echo "WARNING: cluster.sh down failed" >&2
  fi
  if [ "${KDS_KEEP_WORK:-0}" = 1 ]; then echo "work directory kept: ${WORK}"; else rm -rf "${WORK}"; fi
  echo "== timings"
  printf '   %s\n' "${KDS_TIMINGS[@]+"${KDS_TIMINGS[@]}"}"
  echo "== phase durations"
  printf '   %s\n' "${KDS_PHASES[@]+"${KDS_PHASES[@]}"}"
  echo "   total: $(kd_elapsed "${KDS_T0}")"
  echo "${KDS_NAME}: ${KDS_PASSED} passed, ${KDS_FAILED} failed"
  [ "${rc}" -eq 0 ] && [ "${KDS_FAILED}" -eq 0 ] || exit 1
}

# kds_require_tools: the tools these tests use beyond scripts/cluster's (ss: iproute2).
kds_require_tools() {
  local t missing=()
  for t in ss openssl jq curl base64 mkfifo; do command -v "${t}" >/dev/null 2>&1 || missing+=("${t}"); done
  [ "${#missing[@]}" -eq 0 ] || fail "missing tools: ${missing[*]} (ss is in iproute2)"
  [ -x "${KDESCHED}" ] || fail "kdesched binary not found at ${KDESCHED} (build it, or set KDESCHED_BIN)"
}

kds_install_traps() {
  exec 7>&1 8>&2
  trap kds_finish EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

# ---------------------------------------------------------------------------
# kdesched processes

# kds_alive PID: running (a zombie, not yet reaped by us, does not count).
kds_alive() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# kds_start NAME ARGS...: starts kdesched in the background with stderr and stdout in
# WORK/NAME.log; sets KDS_PID. The kubeconfig and policy are added unless ARGS name them.
kds_start() {
  local name="$1"; shift
  local log="${WORK}/${name}.log" extra=()
  case " $* " in *" --kubeconfig "*) ;; *) extra+=(--kubeconfig "${KUBECONFIG}") ;; esac
  case " $* " in *" --policy-config-file "*) ;; *) extra+=(--policy-config-file "${KDS_POLICY}") ;; esac
  "${KDESCHED}" "${extra[@]}" "$@" >"${log}" 2>&1 </dev/null 7>&- 8>&- &
  KDS_PID=$!
  KDS_PIDS+=("${KDS_PID}")
  KDS_LOG_OF["${name}"]="${log}"
  echo "${KDS_PID}" >"${WORK}/${name}.pid"
}

kds_log() { printf '%s\n' "${KDS_LOG_OF[$1]}"; }

# kds_wait_exit PID TIMEOUT_SECONDS: waits for PID to end; sets KDS_RC to its exit code (or
# "timeout", after which the process is still running).
kds_wait_exit() {
  local pid="$1" timeout="$2" deadline
  deadline=$(( $(kd_now_ms) + timeout * 1000 ))
  # stderr off: bash reports a child killed by a signal ("Killed") when it reaps it, which may
  # happen at any command of this loop.
  {
    while kds_alive "${pid}"; do
      if [ "$(kd_now_ms)" -ge "${deadline}" ]; then KDS_RC=timeout; return 1; fi
      sleep 0.05
    done
    KDS_RC=0
    wait "${pid}" || KDS_RC=$?
  } 2>/dev/null
  return 0
}

# kds_stop PID [SIGNAL] [TIMEOUT]: sends SIGNAL (TERM), waits; SIGKILL after TIMEOUT (10 s).
# Sets KDS_RC (the exit code, 128+9 after a SIGKILL) and KDS_STOP_MS (signal to exit).
kds_stop() {
  local pid="$1" sig="${2:-TERM}" timeout="${3:-10}" t0
  t0="$(kd_now_ms)"
  kill "-${sig}" "${pid}" 2>/dev/null || true
  kill -CONT "${pid}" 2>/dev/null || true
  if ! kds_wait_exit "${pid}" "${timeout}"; then
    kd_log "kdesched ${pid} still running ${timeout}s after SIG${sig}; SIGKILL"
    kill -KILL "${pid}" 2>/dev/null || true
    kds_wait_exit "${pid}" 10 || true
    KDS_STOP_MS=$(( $(kd_now_ms) - t0 ))
    return 1
  fi
  KDS_STOP_MS=$(( $(kd_now_ms) - t0 ))
  return 0
}

kds_stop_all() {
  local pid
  for pid in "${KDS_PIDS[@]+"${KDS_PIDS[@]}"}"; do
    if kds_alive "${pid}"; then
      kds_stop "${pid}" TERM 5 >/dev/null 2>&1 || true
    else
      wait "${pid}" 2>/dev/null || true
    fi
  done
}

# kds_run NAME TIMEOUT ARGS...: a run to completion (one-shot mode); sets KDS_RC and KDS_RUN_MS.
kds_run() {
  local name="$1" timeout="$2" t0; shift 2
  t0="$(kd_now_ms)"
  kds_start "${name}" "$@"
  if ! kds_wait_exit "${KDS_PID}" "${timeout}"; then
    kds_stop "${KDS_PID}" KILL 5 || true
    KDS_RC=timeout
  fi
  KDS_RUN_MS=$(( $(kd_now_ms) - t0 ))
}

# kds_log_has NAME EXTENDED_REGEX
kds_log_has() { grep -Eq -- "$2" "${KDS_LOG_OF[$1]}"; }
kds_log_count() { grep -Ec -- "$2" "${KDS_LOG_OF[$1]}" || true; }
# kds_wait_log NAME EXTENDED_REGEX TIMEOUT [COUNT]: until the log has COUNT (1) matching lines;
# fails early when the process died.
kds_wait_log() {
  local name="$1" re="$2" timeout="$3" want="${4:-1}" pid deadline
  pid="$(cat "${WORK}/${name}.pid")"
  deadline=$(( $(kd_now_ms) + timeout * 1000 ))
  while true; do
    [ "$(kds_log_count "${name}" "${re}")" -ge "${want}" ] && return 0
    if ! kds_alive "${pid}"; then
      [ "$(kds_log_count "${name}" "${re}")" -ge "${want}" ] && return 0
      kd_log "kdesched ${name} (pid ${pid}) exited while waiting for /${re}/"
      return 1
    fi
    if [ "$(kd_now_ms)" -ge "${deadline}" ]; then
      kd_log "timed out after ${timeout}s waiting for /${re}/ x${want} in ${name}'s log"
      return 1
    fi
    sleep 0.1
  done
}

# ---------------------------------------------------------------------------
# ports and HTTP

kds_port_in_use() {
  local hex
  hex="$(printf ':%04X' "$1")"
  # Any socket on the port counts, not only listeners: a connection's local port blocks bind too.
  awk -v h="${hex}" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
KDS_PICKED=" "
kds_free_port() {
  local p i
  for i in $(seq 1 200); do
    # Below the kernel's ephemeral range (32768-60999 by default), where outgoing connections
    # (ours to the API server, every test's) would otherwise take the port between pick and bind.
    p=$(( 20000 + (RANDOM * 32768 + RANDOM) % 10000 ))
    case "${KDS_PICKED}" in *" ${p} "*) continue ;; esac
    kds_port_in_use "${p}" && continue
    KDS_PICKED+="${p} "
    echo "${p}"
    return 0
  done
  kd_die "no free port found"
}

# kds_connected PID PORT: PID has an established TCP connection to 127.0.0.1:PORT.
kds_connected() { ss -tnpH state established "( dport = :$2 )" 2>/dev/null | grep -q "pid=$1,"; }

# kds_request_pending PID PORT: PID sent bytes that the server on 127.0.0.1:PORT has not read yet
# (a request held by a paused apiserver: its socket's receive queue is not empty).
kds_request_pending() {
  local lp
  for lp in $(ss -tnpH state established "( dport = :$2 )" 2>/dev/null | grep "pid=$1," | awk '{ sub(/.*:/, "", $3); print $3 }'); do
    ss -tnH state established "( sport = :$2 and dport = :${lp} )" 2>/dev/null | awk '$1 > 0 { f = 1 } END { exit !f }' && return 0
  done
  return 1
}

# kds_http PORT PATH: prints "CODE BODY" (body on one line); CODE 000 when nothing answers.
kds_http() {
  local out code
  out="$(curl -sS -m 3 -o - -w '\n%{http_code}' "http://127.0.0.1:$1$2" 2>/dev/null)" || true
  code="${out##*$'\n'}"
  [ -n "${code}" ] || code=000
  printf '%s %s\n' "${code}" "$(printf '%s' "${out%$'\n'*}" | tr '\n' ' ')"
}

# kds_metrics PORT FILE: scrapes /metrics into FILE.
kds_metrics() { curl -fsS -m 5 "http://127.0.0.1:$1/metrics" -o "$2"; }

# kds_metric_sum FILE NAME [LABEL=VALUE]...: sum of the samples of NAME whose labels include every
# LABEL="VALUE" given (0 when none).
kds_metric_sum() {
  local file="$1" name="$2"; shift 2
  awk -v name="${name}" -v want="$*" '
    BEGIN { n = split(want, w, " ") }
    $0 ~ /^#/ { next }
    {
      split($0, parts, /[{ ]/); if (parts[1] != name) next
      ok = 1
      for (i = 1; i <= n; i++) {
        split(w[i], kv, "="); pat = kv[1] "=\"" kv[2] "\""
        if (index($0, pat) == 0) ok = 0
      }
      if (ok) s += $NF
    }
    END { printf "%g\n", s + 0 }' "${file}"
}

# ---------------------------------------------------------------------------
# the order / payment workload (see smoke.sh's header for why order needs nodeName)

pod_of() {
  kd_kubectl -n "${KDS_NS}" get pods -l "app=$1" -o json |
    jq -r '[.items[] | select(.metadata.deletionTimestamp == null)] | if length == 1 then .[0].metadata.name else empty end'
}
node_of() { kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
uid_of() { kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.metadata.uid}'; }

# The pod still exists, with that UID, not terminating.
kds_pod_intact() {
  local out
  out="$(kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.metadata.uid}|{.metadata.deletionTimestamp}')" || return 1
  [ "${out}" = "$2|" ]
}
# The pod with that name and UID is gone or terminating.
kds_pod_evicted() {
  local out
  out="$(kd_kubectl -n "${KDS_NS}" get pod "$1" --ignore-not-found -o 'jsonpath={.metadata.uid}|{.metadata.deletionTimestamp}')" || return 1
  [ -z "${out}" ] || [ "${out%%|*}" != "$2" ] || [ -n "${out#*|}" ]
}

kds_create_workload() {
  kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: order
  labels: {app: order}
spec:
  replicas: 1
  selector:
    matchLabels: {app: order}
  template:
    metadata:
      labels: {app: order}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: order
        image: nginx:1.24
        resources:
          requests: {cpu: 100m, memory: 256Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payment
  labels: {app: payment}
spec:
  replicas: 1
  selector:
    matchLabels: {app: payment}
  template:
    metadata:
      labels: {app: payment}
    spec:
      terminationGracePeriodSeconds: 0
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {app: order}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: payment
        image: nginx:1.24
        resources:
          requests: {cpu: 100m, memory: 256Mi}
EOF
  kd_wait_pods_ready "${KDS_NS}" app=order 1 90 && kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
}

# kds_violate: moves order onto payment's current node (template nodeName + nodeSelector, a new
# image each time so the template changes) and waits for the rollout. Sets ORDER_POD,
# PAYMENT_POD, PAYMENT_UID, PAYMENT_NODE.
KDS_ROLL=0
kds_violate() {
  kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 || return 1
  PAYMENT_POD="$(pod_of payment)"; PAYMENT_NODE="$(node_of "${PAYMENT_POD}")"; PAYMENT_UID="$(uid_of "${PAYMENT_POD}")"
  [ -n "${PAYMENT_NODE}" ] || return 1
  KDS_ROLL=$((KDS_ROLL + 1))
  kds_patch_order "${PAYMENT_NODE}" "nginx:1.25.${KDS_ROLL}" || return 1
  kds_wait_order_on "${PAYMENT_NODE}"
}
kds_patch_order() {
  kd_kubectl -n "${KDS_NS}" patch deployment order --type=strategic -p "$(jq -cn --arg n "$1" --arg img "$2" '
    {spec: {template: {spec: {nodeSelector: {"kubernetes.io/hostname": $n}, nodeName: $n,
      containers: [{name: "order", image: $img, resources: {requests: {cpu: "200m", memory: "512Mi"}}}]}}}}')" >/dev/null
}
# Waits until the single ready order pod runs on NODE; sets ORDER_POD.
kds_order_on() {
  kd_pods_ready_count "${KDS_NS}" app=order 1 || return 1
  ORDER_POD="$(pod_of order)" && [ -n "${ORDER_POD}" ] && [ "$(node_of "${ORDER_POD}")" = "$1" ]
}
kds_wait_order_on() { kd_wait_for "order on $1" 90 kds_order_on "$1" && ORDER_POD="$(pod_of order)"; }

# kds_replacement_elsewhere OLD_POD OLD_NODE: one ready payment pod, not OLD_POD, not on OLD_NODE.
kds_replacement_elsewhere() {
  kd_pods_ready_count "${KDS_NS}" app=payment 1 || return 1
  local p n
  p="$(pod_of payment)" && [ -n "${p}" ] && [ "${p}" != "$1" ] || return 1
  n="$(node_of "${p}")" && [ -n "${n}" ] && [ "${n}" != "$2" ]
}

# kds_events_for UID [REASON]: Events about the pod with that UID (JSON list).
kds_events_for() {
  local sel="involvedObject.uid=$1"
  [ -z "${2:-}" ] || sel+=",reason=$2"
  kd_kubectl -n "${KDS_NS}" get events --field-selector "${sel}" -o json
}

kds_pdb_settled() {
  kd_kubectl -n "${KDS_NS}" get pdb payment -o json | jq -e '
    .status.observedGeneration == .metadata.generation and .status.disruptionsAllowed == 0
    and .status.currentHealthy == 1 and .status.expectedPods == 1' >/dev/null
}
