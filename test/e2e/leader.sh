#!/usr/bin/env bash
# End-to-end test of kdesched's leader election (coordination.k8s.io/v1 Lease "descheduler") on the
# real control plane, with short timings: --leader-elect-lease-duration 4s, renew deadline 3s,
# retry period 1s, --descheduling-interval 2s, JSON logs (their "ts" fields order the events).
#
#  1. Two replicas A and B start together: exactly one becomes leader; the Lease names it; the
#     other reports /readyz 200 "standby" and runs no cycle. A third one's SIGTERM while standing
#     by: exit 0, the Lease untouched.
#  2. SIGKILL of the leader: the standby takes over after leaseDuration (not before, and within
#     leaseDuration + retryPeriod + slack); the Lease shows it, leaseTransitions +1; the killed
#     one ran no cycle after the takeover and the cycles of the two never interleave.
#  3. A violation made after the takeover is evicted exactly once (one log line, one Event).
#  4. SIGTERM of the leader (with a standby C waiting): it releases the Lease, exits 0, and C takes
#     over in less than leaseDuration.
#  5. A stalled leader (SIGSTOP) is replaced by D; a violation made meanwhile is evicted by D; on
#     SIGCONT the stale leader runs no cycle, evicts nothing and exits 1 ("leadership lost").
#  6. SIGTERM of the last leader, no successor: the Lease's holderIdentity is emptied.
#  7. With the apiserver paused (every request hangs), a standby exits 0 at once on SIGTERM and the
#     leader, unable to renew, exits 1 within renewDeadline + retryPeriod (+ slack), not after the
#     HTTP client's request timeout.
#
# Own cluster directory (${KDESCHED_LEADER_DIR:-/tmp/kdesched-leader.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. A failed check is reported and the test goes on (a failed setup
# step stops it); prints timings and "leader: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin leader --cluster

STRATEGY=RemovePodsViolatingInterPodAntiAffinity
LEASE_MS=4000
RETRY_MS=1000
SLACK_MS=2000
kds_require_tools

declare -A PORT_OF=() PID_OF=()
# replica NAME: starts a leader-electing daemon.
replica() {
  local port; kds_free_port port
  kds_start "$1" --descheduling-interval 2s --leader-elect \
    --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s --leader-elect-retry-period 1s \
    --leader-elect-resource-namespace "${KDS_NS}" \
    --secure-port "${port}" --bind-address 127.0.0.1 --logging-format json
  PORT_OF["$1"]="${port}"; PID_OF["$1"]="${KDS_PID}"
}
# jlog NAME JQ_FILTER: the JSON log lines of NAME through a jq filter (non-JSON lines skipped).
jlog() { jq -R -r "fromjson? | $2" "$(kds_log "$1")"; }
# became_ts NAME: ts of NAME's "became leader" line.
became_ts() { jlog "$1" 'select(.msg == "became leader") | .ts' | head -n 1; }
identity_of() { jlog "$1" 'select(.msg == "became leader" or .msg == "waiting for leadership") | .identity' | head -n 1; }
# Periodic cycles and event-triggered runs alike.
cycles_of() { jlog "$1" 'select(.msg == "cycle finished" or .msg == "triggered run finished") | .ts'; }
lease_json() { kd_kubectl -n "${KDS_NS}" get lease descheduler -o json; }
lease_holder() { lease_json | jq -r '.spec.holderIdentity // ""'; }
lease_holder_is() { [ "$(lease_holder)" = "$1" ]; }
readyz_is() { [ "$(kds_http "${PORT_OF[$1]}" /readyz)" = "$2" ]; }
leader_count() {
  local n=0 r
  for r in "$@"; do [ -z "$(became_ts "${r}")" ] || n=$((n + 1)); done
  echo "${n}"
}
# handover_clean OLD NEW: every cycle of OLD finished before NEW became leader, and NEW ran cycles
# only after it became leader.
handover_clean() {
  local b last first
  b="$(became_ts "$2")"; [ -n "${b}" ] || return 1
  last="$(cycles_of "$1" | tail -n 1)"; first="$(cycles_of "$2" | head -n 1)"
  note "$1: last cycle ${last:-none}; $2: became leader ${b}, first cycle ${first:-none}"
  [ -z "${last}" ] || [[ "${last}" < "${b}" ]] || return 1
  [ -z "${first}" ] || [[ "${first}" > "${b}" ]] || [ "${first}" = "${b}" ]
}
# wait_cycles NAME N: NAME's log has N "cycle finished" lines.
wait_cycles() { kds_wait_log "$1" '"msg":"(cycle finished|triggered run finished)"' "${3:-20}" "$2"; }
evictions_of_pod() { grep -h '"msg":"Evicted pod"' "$@" | grep -c "\"pod\":\"${KDS_NS}/${PAYMENT_POD}\"" || true; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes), order and payment"
kds_cluster_up 3
must "Deployments order and payment Running on different nodes" kds_create_workload

# ---------------------------------------------------------------------------
phase "1. two replicas: exactly one leader"
t0="$(kd_now_ms)"
replica A
replica B
check "one of them becomes leader" kd_wait_for "a leader" 30 bash -c "grep -q '\"msg\":\"became leader\"' '$(kds_log A)' '$(kds_log B)'"
timing "start to first leader" "$(kd_elapsed "${t0}")"
if [ -n "$(became_ts A)" ]; then LEADER=A; STANDBY=B; else LEADER=B; STANDBY=A; fi
check "the standby ${STANDBY} is synced and waiting: /readyz 200 standby" kd_wait_for "standby ready" 20 readyz_is "${STANDBY}" "200 standby"
check "the leader ${LEADER}: /readyz 200 leader" readyz_is "${LEADER}" "200 leader"
check "the leader runs cycles" wait_cycles "${LEADER}" 2
# A bounded observation window: a second leader would have shown up within a few retry periods.
sleep 3
check "exactly one 'became leader' ($(leader_count A B))" [ "$(leader_count A B)" = 1 ]
check "the standby ran no cycle" [ -z "$(cycles_of "${STANDBY}")" ]
LEADER_ID="$(identity_of "${LEADER}")"; STANDBY_ID="$(identity_of "${STANDBY}")"
note "leader ${LEADER} = ${LEADER_ID}; standby ${STANDBY} = ${STANDBY_ID}"
ids_differ() { [ -n "${LEADER_ID}" ] && [ -n "${STANDBY_ID}" ] && [ "${LEADER_ID}" != "${STANDBY_ID}" ]; }
check "identities differ" ids_differ
check "Lease ${KDS_NS}/descheduler held by ${LEADER_ID}" lease_holder_is "${LEADER_ID}"
lease_json >"${WORK}/lease1.json"
transitions1="$(jq '.spec.leaseTransitions // 0' "${WORK}/lease1.json")"
check "leaseDurationSeconds 4" [ "$(jq '.spec.leaseDurationSeconds' "${WORK}/lease1.json")" = 4 ]
replica S
check "a third replica S stands by" kd_wait_for "S standby" 20 readyz_is S "200 standby"
kds_stop "${PID_OF[S]}" TERM 10 || true
check "SIGTERM of the standby S: exit 0 (got ${KDS_RC}) within 2 s ($(ms_str "${KDS_STOP_MS}"))" \
  [ "${KDS_RC}" = 0 -a "${KDS_STOP_MS}" -lt 2000 ]
lease_unchanged() {
  lease_json | jq -e --arg h "${LEADER_ID}" --argjson t "${transitions1}" \
    '.spec.holderIdentity == $h and (.spec.leaseTransitions // 0) == $t' >/dev/null
}
check "...it released nothing: the Lease still names ${LEADER}, same transitions" lease_unchanged
check "...and it never led" [ -z "$(became_ts S)" ]

# ---------------------------------------------------------------------------
phase "2. SIGKILL of the leader: takeover"
# Right after a cycle, so the kill does not cut one in half (that would be fine, only harder to read).
wait_cycles "${LEADER}" "$(( $(cycles_of "${LEADER}" | wc -l) + 1 ))" >/dev/null
t_kill="$(kd_now_ms)"
kds_stop "${PID_OF[${LEADER}]}" KILL 5 || true
check "the leader is gone (SIGKILL, rc ${KDS_RC})" [ "${KDS_RC}" = 137 ]
# The dead leader's last renewal (the standby needs >= 3 s to take over, so this read comes first).
lease_json >"${WORK}/lease-dead.json"
names_dead() { [ "$(jq -r .spec.holderIdentity "${WORK}/lease-dead.json")" = "${LEADER_ID}" ]; }
check "the Lease still names the dead leader" names_dead
check "the standby ${STANDBY} takes over" kds_wait_log "${STANDBY}" '"msg":"became leader"' 20
b="$(became_ts "${STANDBY}")"
takeover=$(( $(kds_ts_ms "${b}") - t_kill ))
timing "takeover after SIGKILL (leaseDuration 4s, retry 1s)" "$(ms_str "${takeover}")"
check "within leaseDuration + retryPeriod + 2s slack ($(ms_str "${takeover}") <= 7s)" \
  [ "${takeover}" -le $((LEASE_MS + RETRY_MS + SLACK_MS)) ]
check "Lease held by ${STANDBY_ID}" lease_holder_is "${STANDBY_ID}"
lease_json >"${WORK}/lease2.json"
# client-go's rule: take over only after leaseDuration without a change (times from one clock here;
# 250 ms for the standby's read that saw the last renewal, which its takeover clock starts before).
gap=$(( $(kds_ts_ms "$(jq -r .spec.acquireTime "${WORK}/lease2.json")") - $(kds_ts_ms "$(jq -r .spec.renewTime "${WORK}/lease-dead.json")") ))
timing "dead leader's last renewTime to the new acquireTime" "$(ms_str "${gap}")"
check "not before leaseDuration after the dead leader's last renewal ($(ms_str "${gap}") >= 3.75s)" \
  [ "${gap}" -ge $((LEASE_MS - 250)) ]
check "leaseTransitions ${transitions1} -> $((transitions1 + 1))" \
  [ "$(jq '.spec.leaseTransitions // 0' "${WORK}/lease2.json")" = $((transitions1 + 1)) ]
check "${STANDBY}: /readyz 200 leader" kd_wait_for "readyz leader" 5 readyz_is "${STANDBY}" "200 leader"
check "${STANDBY} runs cycles" wait_cycles "${STANDBY}" 2
check "no interleaving: ${LEADER}'s cycles all before ${STANDBY} became leader, ${STANDBY}'s all after" \
  handover_clean "${LEADER}" "${STANDBY}"
last_line_ts="$(jlog "${LEADER}" '.ts' | tail -n 1)"
check "the killed leader logged nothing after the kill" [ "$(kds_ts_ms "${last_line_ts}")" -le "${t_kill}" ]
NEW="${STANDBY}"

# ---------------------------------------------------------------------------
phase "3. a violation made after the takeover is evicted once"
must "order patched onto payment's node" kds_violate
t_ready="$(kd_now_ms)"
check "${NEW} evicts payment ${PAYMENT_POD}" kd_wait_for "eviction" 30 bash -c \
  "grep '\"msg\":\"Evicted pod\"' '$(kds_log "${NEW}")' | grep -q '\"pod\":\"${KDS_NS}/${PAYMENT_POD}\"'"
timing "violation Ready to eviction by the new leader" "$(kd_elapsed "${t_ready}")"
check "payment evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
# Two more cycles of the leader: a second eviction would have happened in them.
wait_cycles "${NEW}" "$(( $(cycles_of "${NEW}" | wc -l) + 2 ))" >/dev/null
check "exactly one eviction of ${PAYMENT_POD} in all logs" [ "$(evictions_of_pod "${WORK}"/*.log)" = 1 ]
one_event() { [ "$(kds_events_for "${PAYMENT_UID}" "${STRATEGY}" | jq '.items | length')" = 1 ]; }
check "exactly one Event" one_event
check "replacement Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "4. SIGTERM of the leader releases the Lease"
replica C
check "C synced and standing by" kd_wait_for "C standby" 20 readyz_is C "200 standby"
C_ID="$(identity_of C)"
wait_cycles "${NEW}" "$(( $(cycles_of "${NEW}" | wc -l) + 1 ))" >/dev/null
t_term="$(kd_now_ms)"
kds_stop "${PID_OF[${NEW}]}" TERM 10 || true
timing "SIGTERM to exit (leader)" "$(ms_str "${KDS_STOP_MS}")"
check "${NEW} exits 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "${NEW} logged the release" kds_log_has "${NEW}" '"msg":"released leadership"'
check "C takes over" kds_wait_log C '"msg":"became leader"' 10
fast=$(( $(kds_ts_ms "$(became_ts C)") - t_term ))
timing "takeover after SIGTERM (released Lease)" "$(ms_str "${fast}")"
check "faster than leaseDuration ($(ms_str "${fast}") < 4s)" [ "${fast}" -lt "${LEASE_MS}" ]
check "Lease held by C (${C_ID})" lease_holder_is "${C_ID}"
check "C runs cycles" wait_cycles C 1
check "no interleaving: ${NEW} -> C" handover_clean "${NEW}" C

# ---------------------------------------------------------------------------
phase "5. a stalled leader (SIGSTOP) is replaced and steps down on SIGCONT"
replica D
check "D synced and standing by" kd_wait_for "D standby" 20 readyz_is D "200 standby"
D_ID="$(identity_of D)"
wait_cycles C "$(( $(cycles_of C | wc -l) + 1 ))" >/dev/null
c_cycles_before="$(cycles_of C | wc -l)"
t_stop="$(kd_now_ms)"
kill -STOP "${PID_OF[C]}"
must "order patched onto payment's node while C is stalled" kds_violate
check "D takes over" kds_wait_log D '"msg":"became leader"' 20
timing "takeover from a stalled leader" "$(ms_str $(( $(kds_ts_ms "$(became_ts D)") - t_stop )))"
check "Lease held by D (${D_ID})" lease_holder_is "${D_ID}"
check "D evicts payment ${PAYMENT_POD}" kd_wait_for "eviction" 30 bash -c \
  "grep '\"msg\":\"Evicted pod\"' '$(kds_log D)' | grep -q '\"pod\":\"${KDS_NS}/${PAYMENT_POD}\"'"
t_cont="$(kd_now_ms)"
kill -CONT "${PID_OF[C]}"
kds_wait_exit "${PID_OF[C]}" 10 || true
timing "SIGCONT to exit of the stale leader" "$(kd_elapsed "${t_cont}")"
check "the stale leader exits 1 (got ${KDS_RC})" [ "${KDS_RC}" = 1 ]
check "...logging that leadership was lost" kds_log_has C 'leadership lost'
check "...after no further cycle ($(cycles_of C | wc -l) = ${c_cycles_before})" [ "$(cycles_of C | wc -l)" = "${c_cycles_before}" ]
check "...and no eviction" [ "$(grep -c '"msg":"Evicted pod"' "$(kds_log C)" || true)" = 0 ]
check "...and it did not release D's Lease" lease_holder_is "${D_ID}"
check "no interleaving: C -> D" handover_clean C D
check "exactly one eviction of ${PAYMENT_POD} in all logs" [ "$(evictions_of_pod "${WORK}"/*.log)" = 1 ]
check "replacement Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "6. SIGTERM of the last leader empties holderIdentity"
kds_stop "${PID_OF[D]}" TERM 10 || true
check "D exits 0 (got ${KDS_RC}, $(ms_str "${KDS_STOP_MS}"))" [ "${KDS_RC}" = 0 ]
check "Lease holderIdentity empty" lease_holder_is ""
note "lease: $(lease_json | jq -c .spec)"

# ---------------------------------------------------------------------------
phase "7. apiserver paused: the leader steps down within the renew deadline, a standby stops at once"
replica F
check "F becomes leader at once (the Lease was released)" kds_wait_log F '"msg":"became leader"' 10
replica G
check "G synced and standing by" kd_wait_for "G standby" 20 readyz_is G "200 standby"
wait_cycles F 1 >/dev/null
check "pause-apiserver" "${KDS_CLUSTER}" pause-apiserver >/dev/null
t_pause="$(kd_now_ms)"
check "a Lease request of the standby G hangs" \
  kd_wait_for "G's request held by the apiserver" 10 kds_request_pending "${PID_OF[G]}" "${APISERVER_PORT}"
kds_stop "${PID_OF[G]}" TERM 10 || true
timing "SIGTERM to exit of a standby, apiserver paused" "$(ms_str "${KDS_STOP_MS}")"
check "standby G: exit 0 (got ${KDS_RC}) within 2 s ($(ms_str "${KDS_STOP_MS}")), not after a request timeout" \
  [ "${KDS_RC}" = 0 -a "${KDS_STOP_MS}" -lt 2000 ]
kds_wait_exit "${PID_OF[F]}" 90 || true
stepdown=$(( $(kd_now_ms) - t_pause ))
timing "apiserver paused to exit of the leader (renew deadline 3s)" "$(ms_str "${stepdown}")"
check "leader F: exit 1 (got ${KDS_RC})" [ "${KDS_RC}" = 1 ]
check "...having logged that leadership was lost" kds_log_has F 'leadership lost'
check "...within renewDeadline + retryPeriod + 3 s ($(ms_str "${stepdown}") <= 7s), not after a request timeout" \
  [ "${stepdown}" -le 7000 ]
check "resume-apiserver" "${KDS_CLUSTER}" resume-apiserver >/dev/null
check "apiserver answers again" "${KDS_CLUSTER}" wait-ready 30

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
