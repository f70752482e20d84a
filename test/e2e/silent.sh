#!/usr/bin/env bash
# A silent watch, end to end on the real control plane (scripts/cluster/cluster.sh), with the
# order/payment story (examples/order-payment/policy.yaml):
#
#  A daemon (--descheduling-interval 10s, event triggers on, --watch-silence-timeout BOUND) is
#  synced. Its pods watch is found by its traffic (a 64 KiB annotation on payment arrives on one
#  connection only) and black-holed: an iptables DROP on that one TCP 4-tuple, both ways, so the
#  connection dies without a word while new connections work, as when an API server replica dies
#  or a conntrack entry is dropped. The order/payment violation is made at once. Then:
#   - while the watch is silent the cache misses the change: no eviction (and the cycles go on);
#   - within BOUND of the watch's last word the reflector cuts it ("reflector watch restart"
#     reason=silent, level warn), opens a new one from the last resourceVersion and the violation
#     arrives with it: payment, and only payment, is evicted;
#   - kdesched_watch_restarts_total{resource="Pod",reason="silent"} counts it; /readyz stays 200
#     (the new watch is accepted at once, far inside --cache-stale-after).
# BOUND is ${KDESCHED_SILENT_BOUND:-20s} (the default, 75s, is one bookmark a minute plus a
# margin: bench/run.sh chaos runs this with the default).
#
# Needs root (iptables). Own cluster directory (${KDESCHED_SILENT_DIR:-/tmp/kdesched-silent.PID}).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin silent --cluster
kds_require_tools
command -v iptables >/dev/null 2>&1 || die "iptables not found (scripts/install-deps.sh installs it)"

BOUND="${KDESCHED_SILENT_BOUND:-20s}"
BOUND_S="${BOUND%s}"
TAG="kdesched-e2e-silent-$$"

# The DROP rules of this run, removed at exit whatever happened.
drop_rules_off() {
  local spec
  while spec="$(iptables -S INPUT 2>/dev/null | grep -m1 -- "--comment ${TAG}")"; do
    # shellcheck disable=SC2086  # the rule's own words
    iptables ${spec/-A INPUT/-D INPUT} || break
  done
}
KDS_AT_EXIT+=(drop_rules_off)

# connections PID: "local_port bytes_received" of PID's established connections to the apiserver.
connections() {
  ss -tinpH state established "( dport = :${APISERVER_PORT} )" 2>/dev/null |
    awk -v pid="pid=$1," '
      /users:/ { mine = index($0, pid) > 0; split($3, a, ":"); port = a[length(a)]; next }
      mine && /bytes_received:/ { match($0, /bytes_received:[0-9]+/); print port, substr($0, RSTART + 15, RLENGTH - 15); mine = 0 }'
}
# The local port of PID's connection whose bytes received grew by at least 64 KiB since BEFORE
# (a file of connections' output); exactly one, or nothing.
grown_by_annotation() {
  connections "$1" >"${WORK}/after.txt"
  awk 'NR == FNR { before[$1] = $2; next } ($1 in before) && $2 - before[$1] >= 65536 { print $1 }' \
    "$2" "${WORK}/after.txt" >"${WORK}/grown.txt"
  [ "$(wc -l <"${WORK}/grown.txt")" -eq 1 ] && cat "${WORK}/grown.txt"
}
pods_watch_port() {
  connections "${KDS_PID}" >"${WORK}/before.txt"
  kd_kubectl -n "${KDS_NS}" annotate --overwrite pod "$(pod_of payment)" \
    "kdesched.io/e2e-filler=$(head -c 49152 /dev/zero | base64 -w0)" >/dev/null
  local port
  kd_wait_for "the pods watch's traffic" 10 grown_by_annotation "${KDS_PID}" "${WORK}/before.txt" || return 1
  port="$(cat "${WORK}/grown.txt")"
  [ -n "${port}" ]
}
blackhole() {
  iptables -I INPUT -p tcp -s 127.0.0.1 --sport "$1" -d 127.0.0.1 --dport "${APISERVER_PORT}" \
    -m comment --comment "${TAG}" -j DROP &&
    iptables -I INPUT -p tcp -s 127.0.0.1 --sport "${APISERVER_PORT}" -d 127.0.0.1 --dport "$1" \
      -m comment --comment "${TAG}" -j DROP
}
readyz_ok() { [[ "$(kds_http "${PORT}" /readyz)" == 200* ]]; }
# first_ts NAME REGEX: the time (ms) of the first line of NAME's log matching REGEX.
first_ts() { kds_log_ts_ms "$(grep -Em1 -- "$2" "$(kds_log "$1")")"; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes); order and payment"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload

phase "daemon; its pods watch found and black-holed; the violation made"
cp "${KDS_POLICY}" "${WORK}/policy.yaml"
kds_free_port PORT
kds_start daemon --policy-config-file "${WORK}/policy.yaml" --descheduling-interval 10s \
  --watch-silence-timeout "${BOUND}" --secure-port "${PORT}" --bind-address 127.0.0.1
must "daemon synced (/readyz 200)" kd_wait_for "readyz" 30 readyz_ok
must "a first cycle ran" kds_wait_log daemon 'msg="cycle finished"' 30 1
must "the pods watch's connection found by its traffic" pods_watch_port
WATCH_PORT="$(cat "${WORK}/grown.txt")"
note "pods watch: 127.0.0.1:${WATCH_PORT} -> :${APISERVER_PORT}"
# The watch's last word is the annotation's event, just read: the bound counts from about now.
t_last="$(kd_now_ms)"
must "iptables DROP on that 4-tuple, both ways" blackhole "${WATCH_PORT}"
cycles0="$(kds_log_count daemon 'msg="cycle finished"')"
must "order patched onto payment's node (violation made)" kds_violate
t_violation="$(kd_now_ms)"
timing "violation made after the black-hole" "$(ms_str $((t_violation - t_last)))"

phase "the silence noticed within ${BOUND}; a new watch; payment evicted"
check "the pods watch is cut for its silence" \
  kds_wait_log daemon 'level=warn msg="reflector watch restart" resource=pods reason=silent' $((BOUND_S + 30)) 1
t_cut="$(first_ts daemon 'msg="reflector watch restart" resource=pods reason=silent')"
noticed=$((t_cut - t_last))
timing "black-hole to the silent watch cut (bound ${BOUND})" "$(ms_str "${noticed}")"
check "noticed within the bound plus 5 s (${noticed} ms)" [ "${noticed}" -le $((BOUND_S * 1000 + 5000)) ]
check "not before the bound (${noticed} ms)" [ "${noticed}" -ge $((BOUND_S * 1000 - 1000)) ]
cycles_silent="$(( $(kds_log_count daemon 'msg="cycle finished"') - cycles0 ))"
check "cycles went on while the watch was silent (${cycles_silent})" [ "${cycles_silent}" -ge 1 ]
check "payment evicted after the cut" kds_wait_log daemon 'msg="Evicted pod" ' 30 1
t_evicted="$(first_ts daemon 'msg="Evicted pod" ')"
check "no eviction from the silent cache: the first came after the cut" [ "${t_evicted}" -ge "${t_cut}" ]
timing "silent watch cut to eviction" "$(ms_str $((t_evicted - t_cut)))"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "only payment evicted" [ "$(kds_log_count daemon 'msg="Evicted pod" ')" -eq 1 ]
check "the evicted pod is payment" kds_log_has daemon "msg=\"Evicted pod\" .*pod=\"?${KDS_NS}/${PAYMENT_POD}"
check "resumed from the last resourceVersion: no relist of pods" kds_log_lacks daemon 'msg="reflector relist" resource=pods'
check "/readyz 200 after the cut" readyz_ok
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m.txt"
check "kdesched_watch_restarts_total{resource=Pod,reason=silent} >= 1" \
  grep -Eq '^kdesched_watch_restarts_total\{(reason="silent",resource="Pod"|resource="Pod",reason="silent")\} [1-9]' "${WORK}/m.txt"
check "kdesched_cache_stale{resource=pods} 0" grep -qx 'kdesched_cache_stale{resource="pods"} 0' "${WORK}/m.txt"

phase "SIGTERM; no kdesched left"
check "the daemon exits on SIGTERM" kds_stop "${KDS_PID}" TERM 15
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
