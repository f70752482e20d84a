# shellcheck shell=bash disable=SC2034  # the results (KDS_RC, KDS_*_MS, PAYMENT_*, ...) are read by the tests
# The one helper library of the end-to-end tests (test/e2e/*.sh and test/helm/run.sh; see
# test/e2e/README.md). A test starts with
#
#   set -euo pipefail
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   e2e_begin NAME [--cluster]
#
# Results, one meaning everywhere:
#   check DESCRIPTION COMMAND...  one counted check; a failure is reported and the test GOES ON
#                                 (check returns 0 either way, so set -e does not stop there)
#   pass / fail MESSAGE           count a result the test worked out itself (fail goes on too)
#   must DESCRIPTION COMMAND...   a check the rest of the test depends on: a failure stops the test
#   die MESSAGE                   a setup error: counted as a failure, stops the test
# Any other command that fails under set -e stops the test as well and is counted ("aborted").
# At exit, always: every process the test started is stopped, its cluster torn down, WORK removed
# (kept with KDS_KEEP_WORK=1), the failure report printed when a check failed (first the log of
# the kdesched run started last before each failed check), then the timings, the phase durations
# and the last line "NAME: N passed, N failed". Exit status 0 only when no check failed.
#
# e2e_begin sets ROOT (the checkout), WORK (a scratch directory) and, with --cluster,
# KDESCHED_CLUSTER_DIR = ${KDESCHED_<NAME>_DIR:-/tmp/kdesched-<name>.PID} (exported): the test's
# own cluster directory, so a developer's cluster in /tmp/kdesched-cluster is left alone and a
# sub-test without --cluster never tears down its parent's cluster.
# kdesched is ${KDESCHED_BIN:-ROOT/build/kdesched}.

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"

KDS_CLUSTER="${ROOT}/scripts/cluster/cluster.sh"
KDESCHED="${KDESCHED_BIN:-${ROOT}/build/kdesched}"
KDS_MANIFESTS="${ROOT}/test/e2e/manifests"
KDS_POLICY="${ROOT}/examples/order-payment/policy.yaml"
KDS_NS=default
KDS_NAME=e2e
KDS_WITH_CLUSTER=0
KDS_PASSED=0
KDS_FAILED=0
KDS_DIED=0
KDS_PHASES=()
KDS_PHASE_NAME=""
KDS_PHASE_T0=0
KDS_T0="$(kd_now_ms)"
KDS_TIMINGS=()       # "what: value" lines printed at the end
KDS_PIDS=()          # every kdesched started (stopped at exit if still running)
KDS_EXTRA_PIDS=()    # other background processes a test started (SIGTERM at exit)
KDS_AT_EXIT=()       # functions run at exit once every process is stopped (e.g. copying logs out)
KDS_LOGS=()          # every kdesched log, in start order
KDS_FAILED_LOGS=()   # the kdesched log last started before a failed check, each once (for the report)
declare -A KDS_FAILED_CHECKS=()  # such a log -> the failed checks' descriptions
# What `kubectl get` shows of the cluster when a check failed.
KDS_STATE_ON_FAILURE=("nodes,pods,pdb,leases" -o wide)
declare -A KDS_LOG_OF=()

# ---------------------------------------------------------------------------
# results

pass() { KDS_PASSED=$((KDS_PASSED + 1)); echo "  ok    $*"; }
fail() {
  KDS_FAILED=$((KDS_FAILED + 1)); echo "  FAIL  $*" >&2
  # The run a failed check is about is, nearly always, the kdesched started last: the report shows
  # its log even when later runs pushed it out of the last four.
  [ "${#KDS_LOGS[@]}" -gt 0 ] || return 0
  local log="${KDS_LOGS[${#KDS_LOGS[@]} - 1]}"
  [ -n "${KDS_FAILED_CHECKS[${log}]+x}" ] || KDS_FAILED_LOGS+=("${log}")
  KDS_FAILED_CHECKS["${log}"]+="${KDS_FAILED_CHECKS[${log}]:+; }$*"
}
check() { local d="$1"; shift; if "$@"; then pass "${d}"; else fail "${d}"; fi; }
must() { local d="$1"; shift; if "$@"; then pass "${d}"; else die "${d}"; fi; }
die() { fail "$*"; echo "  (stopping: the rest of ${KDS_NAME} depends on this)" >&2; KDS_DIED=1; exit 1; }

# quietly COMMAND...: runs COMMAND, shows its output only when it fails.
quietly() {
  "$@" >"${WORK}/quietly.out" 2>&1 || { local rc=$?; sed 's/^/        | /' "${WORK}/quietly.out" >&2; return "${rc}"; }
}

# e2e_sub_test NAME COMMAND...: runs another test that ends with a "name: N passed, N failed" line;
# shows its output indented and adds its counts to ours.
e2e_sub_test() {
  local name="$1"; shift
  local out="${WORK}/${name}.txt" rc=0 p f
  "$@" >"${out}" 2>&1 || rc=$?
  sed 's/^/  /' "${out}" | grep -v -E '^  [a-z-]+: [0-9]+ passed, [0-9]+ failed$' || true
  p="$(tail -n 1 "${out}" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')"
  f="$(tail -n 1 "${out}" | sed -n 's/.*: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')"
  if [ -z "${p}" ]; then fail "${name}: no summary line (exit ${rc})"; return 0; fi
  KDS_PASSED=$((KDS_PASSED + p)); KDS_FAILED=$((KDS_FAILED + f))
  [ "${rc}" -eq 0 ] || echo "   (${name} exited ${rc})"
}

# timing WHAT VALUE: recorded for the summary and printed now.
timing() { KDS_TIMINGS+=("$(printf '%-58s %s' "$1" "$2")"); echo "     timing: $1: $2"; }
note() { echo "     $*"; }
# ms between two kd_now_ms values, as "1.234s"
ms_str() { printf '%d.%03ds' $(($1 / 1000)) $(($1 % 1000)); }

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

# ---------------------------------------------------------------------------
# start and finish

e2e_begin() {
  KDS_NAME="$1"
  if [ "${2:-}" = --cluster ]; then
    KDS_WITH_CLUSTER=1
    local var
    var="KDESCHED_$(tr 'a-z-' 'A-Z_' <<<"${KDS_NAME}")_DIR"
    export KDESCHED_CLUSTER_DIR="${!var:-/tmp/kdesched-${KDS_NAME}.$$}"
  fi
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/kdesched-${KDS_NAME}-work.XXXXXX")"
  # The real stdout/stderr, for the summary even when the test dies inside a redirection.
  exec 7>&1 8>&2
  trap e2e_finish EXIT
  trap 'exit 129' HUP
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

e2e_finish() {
  local rc=$? c p
  trap - EXIT INT TERM HUP
  set +eu
  exec 1>&7 2>&8
  if [ "${rc}" -ne 0 ] && [ "${KDS_DIED}" -eq 0 ]; then
    fail "aborted (exit ${rc})${KDS_PHASE_NAME:+ in \"${KDS_PHASE_NAME}\"}"
  fi
  if [ "${rc}" -eq 0 ]; then
    end_phase >/dev/null
  elif [ -n "${KDS_PHASE_NAME}" ]; then
    KDS_PHASES+=("$(printf '%-58s %s (stopped here)' "${KDS_PHASE_NAME}" "$(kd_elapsed "${KDS_PHASE_T0}")")")
  fi
  local cluster=0
  [ "${KDS_WITH_CLUSTER}" = 1 ] && [ -d "${KDESCHED_CLUSTER_DIR}" ] && cluster=1
  # A paused apiserver would make every clean-up request hang.
  [ "${cluster}" = 0 ] || "${KDS_CLUSTER}" resume-apiserver >/dev/null 2>&1
  kds_stop_all
  for p in "${KDS_EXTRA_PIDS[@]+"${KDS_EXTRA_PIDS[@]}"}"; do
    kill -TERM "${p}" 2>/dev/null; wait "${p}" 2>/dev/null
  done
  for c in "${KDS_AT_EXIT[@]+"${KDS_AT_EXIT[@]}"}"; do "${c}"; done
  kds_sanitizer_scan
  [ "${KDS_FAILED}" -eq 0 ] || e2e_failure_report "${cluster}"
  if [ "${cluster}" = 1 ]; then
    "${KDS_CLUSTER}" down >&2 || echo "WARNING: cluster.sh down failed" >&2
  fi
  if [ "${KDS_KEEP_WORK:-0}" = 1 ]; then echo "work directory kept: ${WORK}"; else rm -rf "${WORK}"; fi
  if [ "${#KDS_TIMINGS[@]}" -gt 0 ]; then
    echo "== timings"
    printf '   %s\n' "${KDS_TIMINGS[@]}"
  fi
  if [ "${#KDS_PHASES[@]}" -gt 0 ]; then
    echo "== phase durations"
    printf '   %s\n' "${KDS_PHASES[@]}"
  fi
  echo "   total: $(kd_elapsed "${KDS_T0}")"
  echo "${KDS_NAME}: ${KDS_PASSED} passed, ${KDS_FAILED} failed"
  [ "${KDS_FAILED}" -eq 0 ] || exit 1
  exit 0
}

# kds_sanitizer_scan: with a sanitizer build as KDESCHED_BIN, a report (ASan, LeakSanitizer at
# exit, UBSan's summary) in any file of the work directory (the runs' logs, captured output) is a
# failed check, even when the run it came from ended as the test wanted; a normal build never
# prints these lines.
KDS_SANITIZER_RE='^(==[0-9]+==(ERROR: (AddressSanitizer|LeakSanitizer)|AddressSanitizer CHECK failed)|SUMMARY: UndefinedBehaviorSanitizer)|LeakSanitizer has encountered a fatal error'
kds_sanitizer_scan() {
  local f
  [ -d "${WORK}" ] || return 0
  while IFS= read -r f; do
    fail "sanitizer report in ${f#"${WORK}"/}: $(grep -m1 -E "${KDS_SANITIZER_RE}" "${f}" | cut -c1-200)"
  done < <(grep -rlE "${KDS_SANITIZER_RE}" "${WORK}" 2>/dev/null || true)
}

# e2e_failure_report CLUSTER_UP: the log of the kdesched run before each failed check (the first
# six such runs), the last four kdesched logs not shown yet, the cluster's objects and component logs.
e2e_failure_report() {
  local f n="${#KDS_LOGS[@]}" i shown=" "
  for f in "${KDS_FAILED_LOGS[@]:0:6}"; do
    echo "--- tail ${f} (the kdesched run before the failed check: ${KDS_FAILED_CHECKS[${f}]})" >&2
    tail -n 25 "${f}" >&2 2>/dev/null
    shown+="${f} "
  done
  [ "${#KDS_FAILED_LOGS[@]}" -le 6 ] || echo "--- (and $((${#KDS_FAILED_LOGS[@]} - 6)) more runs before failed checks)" >&2
  for ((i = n > 4 ? n - 4 : 0; i < n; i++)); do
    case "${shown}" in *" ${KDS_LOGS[i]} "*) continue ;; esac
    echo "--- tail ${KDS_LOGS[i]}" >&2; tail -n 25 "${KDS_LOGS[i]}" >&2 2>/dev/null
  done
  [ "$1" = 1 ] && [ -d "${KDESCHED_CLUSTER_DIR}/logs" ] || return 0
  echo "--- state at failure" >&2
  [ -z "${KUBECONFIG:-}" ] || kd_kubectl --request-timeout=5s get "${KDS_STATE_ON_FAILURE[@]}" >&2 2>/dev/null
  for f in "${KDESCHED_CLUSTER_DIR}"/logs/*.log; do
    echo "--- tail ${f}" >&2; tail -n 10 "${f}" >&2
  done
}

# kds_require_tools: the tools the kdesched tests use beyond scripts/cluster's (ss: iproute2), and
# the kdesched binary.
kds_require_tools() {
  local t missing=()
  for t in ss openssl jq curl base64 mkfifo; do command -v "${t}" >/dev/null 2>&1 || missing+=("${t}"); done
  [ "${#missing[@]}" -eq 0 ] || die "missing tools: ${missing[*]} (ss is in iproute2)"
  [ -x "${KDESCHED}" ] || die "kdesched binary not found at ${KDESCHED} (build it, or set KDESCHED_BIN)"
}

# kds_upstream_bin: builds upstream descheduler v0.36 (bench/build-upstream.sh, cached) and sets
# UPSTREAM to its binary; the build's log is ${WORK}/build-upstream.log.
kds_upstream_bin() {
  phase "upstream v0.36 binary (bench/build-upstream.sh, cached)"
  "${ROOT}/bench/build-upstream.sh" >"${WORK}/build-upstream.log" 2>&1 ||
    { cat "${WORK}/build-upstream.log"; die "bench/build-upstream.sh"; }
  UPSTREAM="$("${ROOT}/bench/build-upstream.sh" --print-bin)"
  must "upstream descheduler built" test -x "${UPSTREAM}"
}

# kds_cluster_up NODES: the test's own cluster with NODES kwok nodes; its env loaded.
kds_cluster_up() {
  must "cluster.sh up --nodes $1" quietly "${KDS_CLUSTER}" up --nodes "$1"
  kd_env_load
}

# kds_alive PID: the process runs or is still exiting: a thread of it is not a zombie yet (a zombie
# thread group leader may wait for its other threads, which may still hold sockets and files).
kds_alive() {
  local f s
  for f in /proc/"$1"/task/*/stat; do
    { read -r s <"${f}"; } 2>/dev/null || continue
    s="${s##*) }"
    case "${s%% *}" in Z | X) ;; *) return 0 ;; esac
  done
  return 1
}
kds_gone() { ! kds_alive "$1"; }

# ---------------------------------------------------------------------------
# kdesched processes

# kds_start NAME ARGS...: starts kdesched in the background with stderr and stdout in WORK/NAME.log
# (NAME may hold a folder: runs/01-x); sets KDS_PID. The kubeconfig, the order/payment policy and
# --secure-port 0 are added unless ARGS name them: the default port (10258) is one for the whole
# machine, and a run started while another test's kdesched holds it exits 2 at once ("cannot start
# the metrics server"; usage.sh's story 1 failed so in CI beside another helper's one-shot).
kds_start() {
  local name="$1"; shift
  local log="${WORK}/${name}.log" extra=()
  case " $* " in *" --kubeconfig "* | *" --kubeconfig="*) ;; *) extra+=(--kubeconfig "${KUBECONFIG}") ;; esac
  case " $* " in *" --policy-config-file "* | *" --policy-config-file="*) ;; *) extra+=(--policy-config-file "${KDS_POLICY}") ;; esac
  case " $* " in *" --secure-port "* | *" --secure-port="*) ;; *) extra+=(--secure-port 0) ;; esac
  mkdir -p "$(dirname "${log}")"
  "${KDESCHED}" "${extra[@]}" "$@" >"${log}" 2>&1 </dev/null 7>&- 8>&- &
  KDS_PID=$!
  KDS_PIDS+=("${KDS_PID}")
  KDS_LOG_OF["${name}"]="${log}"
  KDS_LOGS+=("${log}")
  echo "${KDS_PID}" >"${WORK}/${name}.pid"
}

kds_log() { printf '%s\n' "${KDS_LOG_OF[$1]}"; }

# kds_wait_until PID DEADLINE_MS: waits for PID to end; sets KDS_RC to its exit code (or "timeout",
# after which the process is still running).
kds_wait_until() {
  local pid="$1" deadline="$2"
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
# kds_wait_exit PID TIMEOUT_SECONDS: kds_wait_until, TIMEOUT_SECONDS from now.
kds_wait_exit() { kds_wait_until "$1" $(( $(kd_now_ms) + $2 * 1000 )); }

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

# kds_all_stopped: every kdesched the test started has exited.
kds_all_stopped() { local p; for p in "${KDS_PIDS[@]+"${KDS_PIDS[@]}"}"; do kds_gone "${p}" || return 1; done; }

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
kds_log_lacks() { ! grep -Eq -- "$2" "${KDS_LOG_OF[$1]}"; }
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

# kds_ts_ms TIMESTAMP: an RFC 3339 time (2026-01-02T03:04:05.678Z) in ms since the epoch.
kds_ts_ms() { date -u -d "$1" +%s%3N; }
# kds_log_ts_ms LINE: a text log line's timestamp (its first field, with or without "ts=") in ms.
kds_log_ts_ms() {
  local ts="${1%% *}"
  ts="${ts#ts=}"
  kds_ts_ms "${ts//\"/}"
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
# kds_free_port VAR: sets VAR to a port nothing uses, not handed out before in this test. It is
# below the kernel's ephemeral range (32768-60999 by default), where outgoing connections (ours to
# the API server, every test's) would otherwise take the port between the pick and the bind; and
# apart from cluster.sh's ports (20000-31999), which are bound by the time a test picks.
KDS_PICKED=" "
kds_free_port() {
  local kfp_port  # a name no caller's VAR uses
  for _ in $(seq 1 200); do
    kfp_port=$(( 12000 + (RANDOM * 32768 + RANDOM) % 8000 ))
    case "${KDS_PICKED}" in *" ${kfp_port} "*) continue ;; esac
    kds_port_in_use "${kfp_port}" && continue
    KDS_PICKED+="${kfp_port} "
    printf -v "$1" '%s' "${kfp_port}"
    return 0
  done
  die "no free port found"
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

# kdesched serves HTTPS with a self-signed certificate, as upstream; -k as upstream's probes
# (insecureSkipVerify) do.
# kds_http PORT PATH: prints "CODE BODY" (body on one line); CODE 000 when nothing answers.
kds_http() {
  local out code
  out="$(curl -ksS -m 3 -o - -w '\n%{http_code}' "https://127.0.0.1:$1$2" 2>/dev/null)" || true
  code="${out##*$'\n'}"
  [ -n "${code}" ] || code=000
  printf '%s %s\n' "${code}" "$(printf '%s' "${out%$'\n'*}" | tr '\n' ' ')"
}

# kds_metrics PORT FILE: scrapes /metrics into FILE.
kds_metrics() { curl -kfsS -m 5 "https://127.0.0.1:$1/metrics" -o "$2"; }

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

# kds_api PATH [CURL ARGS...]: a request to the apiserver as the cluster admin (client
# certificate); prints the HTTP status code, keeps the body in WORK/body.
kds_api() {
  local path="$1"; shift
  curl -sS -o "${WORK}/body" -w '%{http_code}' --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" \
    --key "${ADMIN_KEY_FILE}" "$@" "${APISERVER_URL}${path}"
}

# kds_sa_kubeconfig SA NAMESPACE FILE: a kubeconfig holding a TokenRequest token of the
# ServiceAccount, the cluster CA and the server URL: what in-cluster config gives a pod of it.
kds_sa_kubeconfig() {
  local token
  token="$(kd_kubectl -n "$2" create token "$1" --duration=2h)" || return 1
  cat >"$3" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ${APISERVER_URL}
    certificate-authority-data: $(base64 -w0 <"${CA_FILE}")
users:
- name: $1
  user:
    token: ${token}
contexts:
- name: $1
  context: {cluster: test, user: $1, namespace: $2}
current-context: $1
EOF
}

# kds_evict POD: POSTs a policy/v1 Eviction of POD (namespace KDS_NS) as the admin; prints the
# HTTP status code, keeps the body in WORK/body.
kds_evict() {
  kds_api "/api/v1/namespaces/${KDS_NS}/pods/$1/eviction" -H 'Content-Type: application/json' -X POST \
    --data "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"${KDS_NS}\"}}"
}

# ---------------------------------------------------------------------------
# pods

# pod_of APP: name of the single non-terminating pod with app=APP (empty when not exactly one).
pod_of() {
  kd_kubectl -n "${KDS_NS}" get pods -l "app=$1" -o json |
    jq -r '[.items[] | select(.metadata.deletionTimestamp == null)] | if length == 1 then .[0].metadata.name else empty end'
}
node_of() { kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
uid_of() { kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.metadata.uid}'; }
image_of() { kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.spec.containers[0].image}'; }

# kds_pod_intact POD [UID]: the pod exists (with that UID, when given), not terminating.
kds_pod_intact() {
  local out
  out="$(kd_kubectl -n "${KDS_NS}" get pod "$1" -o 'jsonpath={.metadata.uid}|{.metadata.deletionTimestamp}' 2>/dev/null)" || return 1
  [ -n "${out%%|*}" ] && [ -z "${out#*|}" ] && { [ -z "${2:-}" ] || [ "${out%%|*}" = "$2" ]; }
}
# kds_pod_evicted POD [UID]: the pod (with that UID, when given) is gone or terminating.
kds_pod_evicted() {
  local out
  out="$(kd_kubectl -n "${KDS_NS}" get pod "$1" --ignore-not-found -o 'jsonpath={.metadata.uid}|{.metadata.deletionTimestamp}')" || return 1
  [ -z "${out}" ] || { [ -n "${2:-}" ] && [ "${out%%|*}" != "$2" ]; } || [ -n "${out#*|}" ]
}

# kds_no_pods SELECTOR: no pod matches SELECTOR in KDS_NS, terminating ones included.
kds_no_pods() { [ -z "$(kd_kubectl -n "${KDS_NS}" get pods -l "$1" -o name)" ]; }

# kds_events_for UID [REASON]: Events about the pod with that UID (JSON list).
kds_events_for() {
  local sel="involvedObject.uid=$1"
  [ -z "${2:-}" ] || sel+=",reason=$2"
  kd_kubectl -n "${KDS_NS}" get events --field-selector "${sel}" -o json
}

# ---------------------------------------------------------------------------
# the order / payment workload (test/e2e/manifests; see smoke.sh's header for why order needs
# nodeName)

kds_apply() { kd_kubectl -n "${KDS_NS}" apply -f "${KDS_MANIFESTS}/$1" >/dev/null; }
kds_apply_workload() { kds_apply order-payment.yaml; }
# kds_create_workload: order and payment applied, both Running and Ready.
kds_create_workload() {
  kds_apply_workload &&
    kd_wait_pods_ready "${KDS_NS}" app=order 1 90 && kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
}

# kds_blackhole_eviction_webhook: a validating webhook on pods/eviction in ${KDS_NS} whose server
# (openssl s_server with the apiserver's own certificate) reads the AdmissionReview and never
# answers: the apiserver holds each Eviction for the webhook's timeoutSeconds (20), then fails it
# (failurePolicy Fail). Sets HOOK_PORT; the server is stopped with the other KDS_EXTRA_PIDS.
kds_blackhole_eviction_webhook() {
  kds_free_port HOOK_PORT
  mkfifo "${WORK}/hook.stdin"
  exec 9<>"${WORK}/hook.stdin"   # a writer that never writes: s_server's stdin stays open
  openssl s_server -accept "127.0.0.1:${HOOK_PORT}" -cert "${KDESCHED_CLUSTER_DIR}/pki/apiserver.crt" \
    -key "${KDESCHED_CLUSTER_DIR}/pki/apiserver.key" -quiet <"${WORK}/hook.stdin" >"${WORK}/hook.out" 2>&1 7>&- 8>&- 9>&- &
  KDS_EXTRA_PIDS+=("$!")
  check "black-hole webhook server listening on ${HOOK_PORT}" kd_wait_for "s_server" 10 kds_port_in_use "${HOOK_PORT}"
  kd_kubectl apply -f - >/dev/null <<HOOK
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kdesched-e2e-hang
webhooks:
- name: hang.kdesched-e2e.example
  clientConfig:
    url: https://127.0.0.1:${HOOK_PORT}/hang
    caBundle: $(base64 -w0 "${CA_FILE}")
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["pods/eviction"]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 20
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: ${KDS_NS}}
HOOK
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
# kds_patch_order NODE IMAGE: order's template pinned to NODE (the story's nodeSelector, and the
# nodeName that gets it past payment's symmetric anti-affinity), with IMAGE and larger requests.
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

# kds_pdb_settled: the disruption controller filled the status of manifests/payment-pdb.yaml.
kds_pdb_settled() {
  kd_kubectl -n "${KDS_NS}" get pdb payment -o json | jq -e '
    .status.observedGeneration == .metadata.generation and .status.disruptionsAllowed == 0
    and .status.currentHealthy == 1 and .status.desiredHealthy == 1 and .status.expectedPods == 1' >/dev/null
}

# kds_watch_pods APP: one WATCH of the app's pods into WORK/watch-APP.jsonl, each event stamped (ms) as
# it arrives. Python is kubectl's parent, and takes it along when it is stopped (a pipeline would
# leave kubectl waiting). Sets WATCH_PID (stopped with the other KDS_EXTRA_PIDS at exit).
kds_watch_pods() {
  python3 -u -c 'import json, signal, subprocess, sys, time
watch = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
signal.signal(signal.SIGTERM, lambda *_: (watch.kill(), sys.exit(0)))
for line in watch.stdout:
    e = json.loads(line); o = e["object"]; m = o["metadata"]
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in o.get("status", {}).get("conditions", []))
    print(json.dumps({"t": int(time.time() * 1000), "type": e["type"], "name": m["name"], "ready": ready,
                      "deleting": "deletionTimestamp" in m, "node": o["spec"].get("nodeName", "")}), flush=True)' \
    "${KD_BIN_DIR}/kubectl" --kubeconfig "${KUBECONFIG}" get --raw \
    "/api/v1/namespaces/${KDS_NS}/pods?watch=1&labelSelector=app%3D$1" >"${WORK}/watch-$1.jsonl" &
  WATCH_PID=$!
  KDS_EXTRA_PIDS+=("${WATCH_PID}")
}
