#!/usr/bin/env bash
# End-to-end test of the metrics port's defences (pkg/metrics/server.h) against the real kdesched
# binary, over HTTPS as the daemon serves it by default.
#
#  1. A daemon whose API server does not answer (a kubeconfig naming a closed port, a long
#     --cache-sync-timeout): it keeps trying, and serves /healthz (200) and /readyz (503).
#  2. 40 slowloris connections (test/e2e/slowloris.py; fewer than the 64-connection limit), each
#     dribbling a header byte every 500 ms: each is closed at the head deadline (10 s), not after.
#  3. For ATTACK_SECONDS (30): 300 slowloris connections reconnecting when closed, and one
#     connection sending a header as fast as it can (up to 2 GiB, again on a new connection each
#     time the server closes one). Throughout, and in phase 2, /healthz is asked every 250 ms on a
#     new TLS connection (as the kubelet's probe does): every answer is 200 within 1 s; the
#     process's peak RSS (VmHWM) stays within 64 MiB of its RSS before; the big head gets 431 after
#     at most a few MiB (socket buffers). SIGTERM 5 s before the attack ends: exit 0 within 1 s.
#  4. With --cluster (ci.sh passes it): phase 3 on a leader-electing daemon against the real
#     control plane (scripts/cluster/cluster.sh, 1 kwok node; retry period 1 s, -v 6): its Lease
#     renewals (the PUTs of its request log) keep their pace, no gap over 2 s, every one answered
#     200, the lease never lost; SIGTERM under attack: exit 0 within 1 s.
#
# No cluster without --cluster. kdesched is ${KDESCHED_BIN:-build/kdesched}. Prints the figures
# (max /healthz latency, RSS before and peak, time to exit, the attack's counts) and "serving: N
# passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
WITH_CLUSTER=0
[ "${1:-}" = --cluster ] && WITH_CLUSTER=1
if [ "${WITH_CLUSTER}" = 1 ]; then e2e_begin serving --cluster; else e2e_begin serving; fi

ATTACK_SECONDS="${ATTACK_SECONDS:-30}"
ATTACKER="${ROOT}/test/e2e/slowloris.py"
kds_require_tools
command -v python3 >/dev/null || die "python3 is needed for ${ATTACKER}"

# rss_kib PID FIELD: VmRSS or VmHWM of PID, in KiB.
rss_kib() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }

# attack PID PORT NAME SECONDS TERM [SLOWLORIS ARGS...]: runs slowloris.py against PORT for SECONDS
# while /healthz is asked every 250 ms on a new connection; with TERM=term, SIGTERM to PID 5 s
# before the attack ends (sets KDS_RC, KDS_STOP_MS). Sets HEALTHZ_MAX and HEALTHZ_MEDIAN (seconds),
# HEALTHZ_POLLS, HEALTHZ_BAD (answers not 200 within 1 s), RSS_PEAK_KIB (sampled VmRSS), HWM_KIB;
# the attacker's report is WORK/NAME.json, the last /metrics before the end WORK/NAME-metrics.txt.
attack() {
  local pid="$1" port="$2" name="$3" seconds="$4" term="$5" out code t rss deadline
  shift 5
  python3 "${ATTACKER}" --port "${port}" --tls --duration "${seconds}" "$@" >"${WORK}/${name}.json" \
    2>"${WORK}/${name}.err" 7>&- 8>&- &
  ATTACKER_PID=$!
  KDS_EXTRA_PIDS+=("${ATTACKER_PID}")
  HEALTHZ_MAX=0 HEALTHZ_POLLS=0 HEALTHZ_BAD=0 RSS_PEAK_KIB=0 HWM_KIB=0
  deadline=$(( $(kd_now_ms) + (seconds - 5) * 1000 ))
  : >"${WORK}/${name}-polls.txt"
  while [ "$(kd_now_ms)" -lt "${deadline}" ]; do
    out="$(curl -ksS -o /dev/null -m 2 -w '%{http_code} %{time_total}' "https://127.0.0.1:${port}/healthz" 2>&1)" || true
    code="${out%% *}" t="${out##* }"
    [[ "${t}" =~ ^[0-9.]+$ ]] || t=2
    echo "${code} ${t}" >>"${WORK}/${name}-polls.txt"
    HEALTHZ_POLLS=$((HEALTHZ_POLLS + 1))
    if [ "${code}" != 200 ] || awk -v t="${t}" 'BEGIN { exit !(t >= 1.0) }'; then HEALTHZ_BAD=$((HEALTHZ_BAD + 1)); fi
    HEALTHZ_MAX="$(awk -v a="${HEALTHZ_MAX}" -v b="${t}" 'BEGIN { print (b > a ? b : a) }')"
    rss="$(rss_kib "${pid}" VmRSS 2>/dev/null || true)"
    [ -z "${rss}" ] || [ "${rss}" -le "${RSS_PEAK_KIB}" ] || RSS_PEAK_KIB="${rss}"
    sleep 0.25
  done
  HEALTHZ_MEDIAN="$(sort -n -k2 "${WORK}/${name}-polls.txt" | awk '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] }')"
  HWM_KIB="$(rss_kib "${pid}" VmHWM 2>/dev/null || echo 0)"
  curl -ksS -m 2 "https://127.0.0.1:${port}/metrics" -o "${WORK}/${name}-metrics.txt" || true
  [ "${term}" != term ] || kds_stop "${pid}" TERM 5 || true
  wait "${ATTACKER_PID}" || true
}

# report NAME RSS_BEFORE_KIB: the figures of an attack, and the /healthz and memory checks.
report() {
  local name="$1" before="$2" growth
  growth=$(( HWM_KIB - before ))
  timing "${name}: /healthz polls under attack" "${HEALTHZ_POLLS}"
  timing "${name}: /healthz latency, median / max (new TLS connection each)" "${HEALTHZ_MEDIAN}s / ${HEALTHZ_MAX}s"
  timing "${name}: RSS before / peak sampled / VmHWM" "$((before / 1024)) / $((RSS_PEAK_KIB / 1024)) / $((HWM_KIB / 1024)) MiB"
  note "attacker: $(cat "${WORK}/${name}.json" 2>/dev/null)"
  note "server: $(grep -E '^kdesched_http_' "${WORK}/${name}-metrics.txt" 2>/dev/null | sed 's/kdesched_http_//' | tr '\n' ' ')"
  check "${name}: every /healthz (${HEALTHZ_POLLS}) answered 200 within 1 s (${HEALTHZ_BAD} not; max ${HEALTHZ_MAX}s)" healthz_ok
  check "${name}: peak RSS (VmHWM) within 64 MiB of the RSS before the attack (+$((growth / 1024)) MiB)" \
    [ "${growth}" -lt $((64 * 1024)) ]
}
healthz_ok() { [ "${HEALTHZ_POLLS}" -gt 0 ] && [ "${HEALTHZ_BAD}" = 0 ]; }
quick_exit() { [ "${KDS_RC}" = 0 ] && [ "${KDS_STOP_MS}" -lt 1000 ]; }
# report_jq NAME DESCRIPTION JQ: a check on slowloris.py's report.
report_jq() { check "$1: $2" jq_true "$3" "${WORK}/$1.json"; }
jq_true() { jq -e "$1" "$2" >/dev/null; }
# metric_positive NAME SERIES: the series (exact, labels included) is above 0 in NAME's last scrape.
metric_positive() { grep -Fq "$2 " "${WORK}/$1-metrics.txt" && [ "$(grep -F "$2 " "${WORK}/$1-metrics.txt" | awk '{ print $NF }')" != 0 ]; }

# ---------------------------------------------------------------------------
phase "1. a daemon whose API server does not answer"
PORT=""
kds_free_port PORT
kds_free_port DEAD_API_PORT
cat >"${WORK}/dead.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "https://127.0.0.1:${DEAD_API_PORT}", insecure-skip-tls-verify: true}
users:
- name: nobody
  user: {token: none}
contexts:
- name: dead
  context: {cluster: dead, user: nobody}
current-context: dead
EOF
kds_start lonely --kubeconfig "${WORK}/dead.kubeconfig" --descheduling-interval 1h --cache-sync-timeout 600 \
  --secure-port "${PORT}" --bind-address 127.0.0.1
LONELY_PID="${KDS_PID}"
healthz_200() { r="$(kds_http "${PORT}" /healthz)"; [ "${r%% *}" = 200 ]; }
must "/healthz 200 while the API server does not answer" kd_wait_for "/healthz" 10 healthz_200
r="$(kds_http "${PORT}" /readyz)"; check "/readyz: 503 caches not synced (got ${r})" [ "${r}" = "503 caches not synced" ]
RSS_BEFORE="$(rss_kib "${LONELY_PID}" VmRSS)"

phase "2. 40 slowloris connections (below the limit): closed at the head deadline"
attack "${LONELY_PID}" "${PORT}" loris40 20 keep --loris 40 --big 0
report loris40 "${RSS_BEFORE}"
report_jq loris40 "each connection held until the head deadline (10 s), not past it" \
  '.loris_connects >= 40 and .loris_closed_by_server >= 40 and .loris_longest_open_s >= 9.5 and .loris_longest_open_s < 11.5'
check "loris40: counted as head timeouts" metric_positive loris40 'kdesched_http_rejections_total{reason="head-timeout"}'

phase "3. 300 slowloris connections and an endless header for ${ATTACK_SECONDS}s, then SIGTERM"
attack "${LONELY_PID}" "${PORT}" lonely "${ATTACK_SECONDS}" term --loris 300 --big 1
report lonely "${RSS_BEFORE}"
timing "lonely: SIGTERM to exit, under attack" "$(ms_str "${KDS_STOP_MS}")"
check "lonely: SIGTERM under attack: exit 0 (got ${KDS_RC}) within 1 s ($(ms_str "${KDS_STOP_MS}"))" quick_exit
report_jq lonely "the attack ran: >= 300 slowloris connections, all closed by the server within the head deadline" \
  '.loris_connects >= 300 and .loris_closed_by_server > 0 and .loris_longest_open_s < 11.5'
report_jq lonely "the endless header cut off (at most a few MiB sent on one connection; 431 seen)" \
  '.big_connections > 0 and .big_max_bytes_per_connection < 64 * 1048576 and (.big_statuses | index("HTTP/1.1 431 Request Header Fields Too Large"))'
check "lonely: slowloris connections shed at the limit" metric_positive lonely 'kdesched_http_connections_shed_total{victim="waiting"}'
check "lonely: the endless headers refused as too large" metric_positive lonely 'kdesched_http_rejections_total{reason="header-too-large"}'

# ---------------------------------------------------------------------------
if [ "${WITH_CLUSTER}" = 1 ]; then
  phase "4. a leader on the real control plane under the same attack: renewals on time"
  kds_cluster_up 1
  kds_free_port PORT
  kds_start leader --descheduling-interval 1h --leader-elect --leader-elect-lease-duration 4s \
    --leader-elect-renew-deadline 3s --leader-elect-retry-period 1s --leader-elect-resource-namespace "${KDS_NS}" \
    --secure-port "${PORT}" --bind-address 127.0.0.1 --logging-format json -v 6
  LEADER_PID="${KDS_PID}"
  must "became leader" kds_wait_log leader '"msg":"became leader"' 60
  RSS_BEFORE="$(rss_kib "${LEADER_PID}" VmRSS)"
  t_attack="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
  attack "${LEADER_PID}" "${PORT}" leader "${ATTACK_SECONDS}" term --loris 300 --big 1
  report leader "${RSS_BEFORE}"
  timing "leader: SIGTERM to exit, under attack" "$(ms_str "${KDS_STOP_MS}")"
  check "leader: SIGTERM under attack: exit 0 (got ${KDS_RC}) within 1 s ($(ms_str "${KDS_STOP_MS}"))" quick_exit
  # The renewals: PUTs of the Lease from the attack's start to the SIGTERM.
  jq -R -r --arg from "${t_attack}" 'fromjson? | select(.msg == "kube request" and .method == "PUT"
      and (.target | test("/leases/descheduler$")) and .ts >= $from) | "\(.ts) \(.code // .error) \(.ms)"' \
    "$(kds_log leader)" >"${WORK}/renewals.txt"
  renewals="$(wc -l <"${WORK}/renewals.txt")"
  max_gap=0 prev=""
  while read -r ts _; do
    now="$(kds_ts_ms "${ts}")"
    [ -z "${prev}" ] || [ $((now - prev)) -le "${max_gap}" ] || max_gap=$((now - prev))
    prev="${now}"
  done <"${WORK}/renewals.txt"
  slowest="$(awk '{ if ($3 > m) m = $3 } END { print m + 0 }' "${WORK}/renewals.txt")"
  timing "leader: Lease renewals under attack / largest gap / slowest PUT" "${renewals} / $(ms_str "${max_gap}") / ${slowest} ms"
  check "leader: renewed about every second under attack (${renewals} renewals)" [ "${renewals}" -ge $((ATTACK_SECONDS - 10)) ]
  check "leader: no gap between renewals over 2 s ($(ms_str "${max_gap}"))" [ "${max_gap}" -le 2000 ]
  all_200() { awk '$2 != 200 { bad = 1 } END { exit bad }' "${WORK}/renewals.txt"; }
  check "leader: every renewal answered 200" all_200
  check "leader: never lost the lease" kds_log_lacks leader '"msg":"leadership lost"'
fi

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
