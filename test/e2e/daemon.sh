#!/usr/bin/env bash
# End-to-end tests of the live kdesched daemon against the real control plane
# (scripts/cluster/cluster.sh: etcd, kube-apiserver, controller-manager, scheduler, kwok), with
# the order/payment story (examples/order-payment/policy.yaml: RemovePodsViolatingInterPodAntiAffinity
# + DefaultEvictor nodeFit). One cluster, phases in order:
#
#  1. one-shot (--descheduling-interval 0): payment, whose required anti-affinity against
#     app=order is violated, is evicted through the Eviction API; exit 0; an Event on the old pod
#     (reason RemovePodsViolatingInterPodAntiAffinity, message naming the term and the order pod);
#     the ReplicaSet's replacement runs on another node.
#  2. daemon (--descheduling-interval 1h, first cycle at once): /metrics counts the eviction
#     (descheduler_pods_evicted_total{result="success",strategy=...} 1, and under the workload:
#     kdesched_owner_evictions_total{owner_kind="Deployment",owner_name="payment"} 1, its only
#     series), /healthz 200, /readyz 200
#     "ok"; a second kdesched on the same --secure-port fails at start with exit 2 and a clear
#     message; SIGTERM: exit 0 within seconds, port closed, no Lease created.
#  3. PDB minAvailable 1 (disruptionsAllowed 0): nothing evicted, the refusal logged (refused by
#     the PDB) and counted (kdesched_evictions_refused_total{reason="pdb"} 1).
#  4. --dry-run: the decision is logged ("Evicted pod in dry run mode"), the pod is untouched, no Event.
#  5. daemon (--descheduling-interval 2s) across faults: restart-apiserver, then a violation created
#     right after the restart is evicted; kdesched stalled (SIGSTOP) while etcd is compacted, the
#     apiserver restarted and a violation created, then resumed: it relists (410) and evicts it.
#     payment is rolled out (a new ReplicaSet) between the two: its 3 evictions stay one series,
#     kdesched_owner_evictions_total{owner_kind="Deployment",owner_name="payment"} 3.
#  6. one-shot against a paused apiserver (--cache-sync-timeout 5): /readyz 503 "caches not
#     synced", /healthz 200, nothing evicted, exit 1 after about 5 s; a daemon waiting for that
#     first sync exits 0 at once on SIGTERM.
#  7. SIGTERM while an eviction is held in the apiserver (a validating webhook that never answers):
#     the request is abandoned, exit 0 within seconds, the pod is untouched.
#
# Own cluster directory (${KDESCHED_DAEMON_DIR:-/tmp/kdesched-daemon.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. A failed check is reported and the test goes on (a failed setup
# step stops it); prints timings, phase durations and "daemon: N passed, N failed" (test/e2e/lib.sh).
# Every kdesched and the cluster are stopped in every case.
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin daemon --cluster

STRATEGY=RemovePodsViolatingInterPodAntiAffinity
kds_require_tools

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes)"
kds_cluster_up 3

phase "order and payment, then order moved beside payment"
must "Deployments order and payment Running" kds_create_workload
must "order patched onto payment's node (anti-affinity violated)" kds_violate
note "payment ${PAYMENT_POD} (${PAYMENT_UID}) and order ${ORDER_POD} on ${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "1. one-shot: payment evicted, Event, replacement elsewhere"
t_evict0="$(kd_now_ms)"
# Every flag of upstream v0.36 (docs/cli/descheduler.md), in pflag's spellings, as a manifest or
# the chart's cmdOptions would carry them: the run must not notice the ones kdesched ignores.
# pflag's ways too: an underscore spelling (--leader_elect), and a flag given twice whose last
# value wins (--dry-run, then --dry-run=false: the run evicts).
UPSTREAM_FLAGS=(--dry-run --enable-http2 --disable-http2-serving=false --http2-max-streams-per-connection=100
  --permit-address-sharing --permit-port-sharing=true --tls-sni-cert-key x.crt,x.key --tls-curve-preferences 23,29
  --otel-fallback-no-op-on-error --vmodule=descheduler=2 --log-json-info-buffer-size 0 --log-json-split-stream=false
  --log-text-info-buffer-size=0 --log-text-split-stream --cert-dir /nonexistent/certs
  --tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256 --tls-min-version VersionTLS12
  --feature-gates EvictionsInBackground=false --otel-collector-endpoint= --otel-service-name descheduler
  --otel-sample-rate 1 --otel-trace-namespace kdesched --otel-transport-ca-cert= --log-flush-frequency 5s
  -v=2 --logging-format text --leader_elect=false --leader-elect-resource-lock leases --dry-run=false
  --client-connection-qps 50 --client-connection-burst 100 --disable-metrics=false --bind-address 0.0.0.0)
kds_run oneshot 60 --descheduling-interval 0 --secure-port 0 "${UPSTREAM_FLAGS[@]}"
timing "one-shot run (start to exit)" "$(ms_str "${KDS_RUN_MS}")"
check "exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "every upstream flag accepted; the unimplemented ones named in one warning" \
  kds_log_has oneshot 'msg="ignoring upstream flags kdesched does not implement" flags=--enable-http2,.*--tls-sni-cert-key,.*--vmodule,.*--log-text-split-stream,--cert-dir,--feature-gates,.*--log-flush-frequency'
check "a flag given twice: named in one warning, the last value used (not a dry run)" \
  kds_log_has oneshot 'msg="flags given more than once: the last value is used, as upstream" flags=--dry-run$'
check "one cycle, one eviction logged" kds_log_has oneshot "msg=\"cycle finished\" evicted=1 refused=0"
check "log names the evicted pod and the strategy" \
  kds_log_has oneshot "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} node=${PAYMENT_NODE} plugin=${STRATEGY} .*result=success"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
event_ok() {
  kds_events_for "${PAYMENT_UID}" "${STRATEGY}" >"${WORK}/events.json" || return 1
  jq -e --arg order "${KDS_NS}/${ORDER_POD}" '
    .items | length == 1 and (.[0] | .type == "Normal"
      and (.message | contains("required podAntiAffinity term {labelSelector: app=order"))
      and (.message | contains("topologyKey: kubernetes.io/hostname}"))
      and (.message | contains("violated by pod " + $order)))' "${WORK}/events.json" >/dev/null
}
check "one Event on the old pod: reason ${STRATEGY}, message names the term and ${ORDER_POD}" \
  kd_wait_for "Event" 20 event_ok
note "event: $(jq -r '.items[0].message' "${WORK}/events.json")"
check "replacement payment Running and Ready on another node than ${PAYMENT_NODE}" \
  kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
timing "one-shot start to replacement Ready" "$(kd_elapsed "${t_evict0}")"

# ---------------------------------------------------------------------------
phase "2. daemon (1h): metrics, health, port taken, SIGTERM"
must "order patched onto payment's node again" kds_violate
kds_free_port PORT
t0="$(kd_now_ms)"
kds_start metrics --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
METRICS_PID="${KDS_PID}"
check "first cycle at once, one eviction" kds_wait_log metrics 'msg="cycle finished" evicted=1 ' 30
timing "daemon start to first cycle finished" "$(kd_elapsed "${t0}")"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/metrics.txt"
grep -E '^(descheduler_pods_evicted_total|kdesched_evictions_refused_total|descheduler_loop_duration_seconds_count|kdesched_cache_objects)' \
  "${WORK}/metrics.txt" | sed 's/^/       /'
evicted_metric() {
  local line
  line="$(grep -E '^descheduler_pods_evicted_total\{' "${WORK}/metrics.txt" |
    grep -F "result=\"success\"" | grep -F "strategy=\"${STRATEGY}\"" | grep -F "namespace=\"${KDS_NS}\"")"
  [ "$(printf '%s\n' "${line}" | wc -l)" -eq 1 ] && [ "${line##* }" = 1 ] &&
    [[ "${line}" == *"node=\"${PAYMENT_NODE}\""* ]] && [[ "${line}" == *'profile="default"'* ]]
}
check "descheduler_pods_evicted_total{namespace=\"${KDS_NS}\",node=\"${PAYMENT_NODE}\",profile=\"default\",result=\"success\",strategy=\"${STRATEGY}\"} 1" evicted_metric
check "no error result counted" [ "$(kds_metric_sum "${WORK}/metrics.txt" descheduler_pods_evicted_total result=error)" = 0 ]
check "descheduler_loop_duration_seconds_count 1" \
  [ "$(kds_metric_sum "${WORK}/metrics.txt" descheduler_loop_duration_seconds_count)" = 1 ]
check "kdesched_cache_objects{kind=\"Node\"} 3" [ "$(kds_metric_sum "${WORK}/metrics.txt" kdesched_cache_objects kind=Node)" = 3 ]
check "descheduler_build_info present" grep -q '^descheduler_build_info{' "${WORK}/metrics.txt"
OWNER_SERIES="kdesched_owner_evictions_total{namespace=\"${KDS_NS}\",owner_kind=\"Deployment\",owner_name=\"payment\",reason=\"${STRATEGY}\"}"
owner_series() { grep -E '^kdesched_owner_evictions_total\{' "$1" || true; }
check "${OWNER_SERIES} 1, the family's only series" [ "$(owner_series "${WORK}/metrics.txt")" = "${OWNER_SERIES} 1" ]
r="$(kds_http "${PORT}" /healthz)"; check "/healthz: 200 (got ${r})" [ "${r%% *}" = 200 ]
r="$(kds_http "${PORT}" /readyz)"; check "/readyz after sync: 200 ok (got ${r})" [ "${r}" = "200 ok" ]
r="$(kds_http "${PORT}" /nope)"; check "unknown path: 404 (got ${r%% *})" [ "${r%% *}" = 404 ]

kds_run porttaken 30 --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
check "a second kdesched on taken port ${PORT}: exit 2 (got ${KDS_RC}, after $(ms_str "${KDS_RUN_MS}"))" [ "${KDS_RC}" = 2 ]
check "...with a clear error naming the port" \
  kds_log_has porttaken "cannot start the metrics server.*127\\.0\\.0\\.1:${PORT}.*another process using the port"
check "...and it ran no cycle" kds_log_lacks porttaken 'cycle finished'
note "$(grep -m1 'cannot start the metrics server' "$(kds_log porttaken)")"
r="$(kds_http "${PORT}" /healthz)"; check "the first daemon still serves /healthz (got ${r%% *})" [ "${r%% *}" = 200 ]

kds_stop "${METRICS_PID}" TERM 15 || true
timing "SIGTERM to exit (daemon, idle in a 1h wait)" "$(ms_str "${KDS_STOP_MS}")"
check "SIGTERM: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "SIGTERM: exited within 5 s" [ "${KDS_STOP_MS}" -lt 5000 ]
check "logged the signal and a clean stop" kds_log_has metrics 'msg="stopped" exit=0'
check "port ${PORT} closed" bash -c "! curl -ks -m 2 -o /dev/null https://127.0.0.1:${PORT}/healthz"
no_lease() { ! kd_kubectl get leases -A -o name | grep -q descheduler; }
check "no Lease created (no --leader-elect)" no_lease
check "replacement payment Running on another node" \
  kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "3. PDB minAvailable 1: refused, logged, counted"
must "order patched onto payment's node again" kds_violate
kds_apply payment-pdb.yaml
check "disruption controller set disruptionsAllowed 0" kd_wait_for "PDB status" 60 kds_pdb_settled
kds_free_port PORT
kds_start pdb --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
PDB_PID="${KDS_PID}"
check "first cycle: nothing evicted, one refusal" kds_wait_log pdb 'msg="cycle finished" evicted=0 refused=1 ' 30
check "log: refused by the PDB" \
  kds_log_has pdb "msg=\"eviction refused\" pod=${KDS_NS}/${PAYMENT_POD} .*by=\"PodDisruptionBudget ${KDS_NS}/payment\" refusal=pdb"
note "$(grep -m1 'msg="eviction refused"' "$(kds_log pdb)" | cut -c1-300)"
check "no eviction attempted" kds_log_lacks pdb 'msg="Evicted pod"'
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/metrics-pdb.txt"
grep -E '^(kdesched_evictions_refused_total|descheduler_pods_evicted_total)' "${WORK}/metrics-pdb.txt" | sed 's/^/       /'
check "kdesched_evictions_refused_total{reason=\"pdb\",strategy=\"${STRATEGY}\"} 1" \
  [ "$(kds_metric_sum "${WORK}/metrics-pdb.txt" kdesched_evictions_refused_total reason=pdb strategy="${STRATEGY}")" = 1 ]
check "descheduler_pods_evicted_total{result=\"success\"} 0" \
  [ "$(kds_metric_sum "${WORK}/metrics-pdb.txt" descheduler_pods_evicted_total result=success)" = 0 ]
check "payment ${PAYMENT_POD} untouched (same UID, not terminating)" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"
# "Why not": one DeschedulingBlocked Event on the pod (docs/evictor.md), where kubectl describe shows it.
blocked_count() { kds_events_for "${PAYMENT_UID}" DeschedulingBlocked | jq '.items | length'; }
blocked_ok() {
  kds_events_for "${PAYMENT_UID}" DeschedulingBlocked >"${WORK}/blocked.json" || return 1
  jq -e --arg pdb "PodDisruptionBudget ${KDS_NS}/payment" --arg s "${STRATEGY}" '
    .items | length == 1 and (.[0] | .type == "Normal"
      and (.message | contains("kdesched (default/" + $s + ") would evict this pod"))
      and (.message | contains("blocked by " + $pdb + " (pdb): disruptionsAllowed 0")))' "${WORK}/blocked.json" >/dev/null
}
check "one DeschedulingBlocked Event on payment naming the rule and the PDB" kd_wait_for "Event" 20 blocked_ok
note "event: $(jq -r '.items[0].message' "${WORK}/blocked.json" | cut -c1-300)"
describe_shows() { kd_kubectl -n "${KDS_NS}" describe pod "${PAYMENT_POD}" | grep -E 'Normal +DeschedulingBlocked'; }
check "kubectl describe pod ${PAYMENT_POD} shows it" describe_shows
check "log: the refusal says its Event was posted" \
  kds_log_has pdb "msg=\"eviction refused\" pod=${KDS_NS}/${PAYMENT_POD} .*refusal=pdb .*event=posted"
kds_stop "${PDB_PID}" TERM 15 || true
check "SIGTERM: exit 0 (got ${KDS_RC}, $(ms_str "${KDS_STOP_MS}"))" [ "${KDS_RC}" = 0 ]
# A daemon every 2 s meets the same PDB each cycle: still one Event from it, not one a cycle (a new
# process does not know what the last one posted: one more, from it).
kds_free_port PORT
kds_start why --descheduling-interval 2s --secure-port "${PORT}" --bind-address 127.0.0.1
WHY_PID="${KDS_PID}"
check "three cycles of the 2 s daemon, each refusing payment" \
  kds_wait_log why 'msg="cycle finished" evicted=0 refused=1 ' 30 3
check "its first refusal posted an Event, the later ones did not (repeats are debug lines)" \
  [ "$(kds_log_count why 'refusal=pdb .*event=posted')" = 1 ]
two_events() { [ "$(blocked_count)" = 2 ]; }
check "DeschedulingBlocked Events on payment: 2 (one per process; got $(blocked_count))" kd_wait_for "Event" 20 two_events
kds_stop "${WHY_PID}" TERM 15 || true
kd_kubectl -n "${KDS_NS}" delete pdb payment --wait=true >/dev/null
check "payment still untouched" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

# ---------------------------------------------------------------------------
phase "4. --dry-run: decision logged, nothing evicted"
kds_run dryrun 60 --dry-run --descheduling-interval 0 --secure-port 0
timing "dry-run one-shot (start to exit)" "$(ms_str "${KDS_RUN_MS}")"
check "exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "logged: Evicted pod in dry run mode ${PAYMENT_POD}" \
  kds_log_has dryrun "msg=\"Evicted pod in dry run mode\" pod=${KDS_NS}/${PAYMENT_POD} node=${PAYMENT_NODE} plugin=${STRATEGY}"
check "cycle counted it" kds_log_has dryrun 'msg="cycle finished" evicted=1 '
check "payment ${PAYMENT_POD} untouched (same UID, not terminating)" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"
no_event() { [ "$(kds_events_for "${PAYMENT_UID}" "${STRATEGY}" | jq '.items | length')" = 0 ]; }
check "no Event recorded" no_event

# ---------------------------------------------------------------------------
phase "5. daemon (2s) across apiserver restarts and an etcd compaction"
# The same payment ReplicaSet is evicted three times within a minute here: kdesched's anti-flapping
# (on by default, tested by triggers.sh) would rightly refuse that, so it is off for this daemon.
cp "${KDS_POLICY}" "${WORK}/policy-live.yaml"
cat >>"${WORK}/policy-live.yaml" <<'EOF'
kdesched:
  antiFlapping:
    ownerCooldown: 0s
    backoffAfter: 100
EOF
kds_free_port PORT
t0="$(kd_now_ms)"
kds_start live --policy-config-file "${WORK}/policy-live.yaml" --descheduling-interval 2s \
  --secure-port "${PORT}" --bind-address 127.0.0.1
LIVE_PID="${KDS_PID}"
check "evicts the standing violation in its first cycle" kds_wait_log live 'msg="Evicted pod" ' 30 1
timing "daemon start to eviction" "$(kd_elapsed "${t0}")"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "replacement Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m0.txt"
relists0="$(kds_metric_sum "${WORK}/m0.txt" kdesched_relists_total)"
restarts0="$(kds_metric_sum "${WORK}/m0.txt" kdesched_watch_restarts_total)"
cycles0="$(kds_log_count live 'msg="cycle finished"')"

# 5a. restart; the violation is made as soon as the new apiserver answers.
t0="$(kd_now_ms)"
check "restart-apiserver" "${KDS_CLUSTER}" restart-apiserver >/dev/null
timing "restart-apiserver" "$(kd_elapsed "${t0}")"
t_v="$(kd_now_ms)"
must "violation created right after the restart" kds_violate
timing "violation made (patch to order Ready beside payment)" "$(kd_elapsed "${t_v}")"
check "the daemon evicts it" kds_wait_log live 'msg="Evicted pod" ' 60 2
timing "after restart: order patched to eviction logged" "$(kd_elapsed "${t_v}")"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m1.txt"
restarts1="$(kds_metric_sum "${WORK}/m1.txt" kdesched_watch_restarts_total)"
relists1="$(kds_metric_sum "${WORK}/m1.txt" kdesched_relists_total)"
note "watch restarts ${restarts0} -> ${restarts1}, relists ${relists0} -> ${relists1}"
check "kdesched_watch_restarts_total increased (${restarts0} -> ${restarts1})" [ "${restarts1%.*}" -gt "${restarts0%.*}" ]
check "replacement Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# A rollout between two evictions: the next evicted pod belongs to another ReplicaSet of payment.
rs_of_payment() { kd_kubectl -n "${KDS_NS}" get pods -l app=payment -o jsonpath='{.items[0].metadata.ownerReferences[0].name}'; }
rollout_payment() {
  kd_kubectl -n "${KDS_NS}" rollout restart deployment/payment >/dev/null &&
    kd_kubectl -n "${KDS_NS}" rollout status deployment/payment --timeout=90s >/dev/null &&
    kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
}
RS_BEFORE="$(rs_of_payment)"
must "payment rolled out" rollout_payment
RS_AFTER="$(rs_of_payment)"
check "payment's pod is of a new ReplicaSet (${RS_BEFORE} -> ${RS_AFTER})" [ -n "${RS_AFTER}" ] && [ "${RS_AFTER}" != "${RS_BEFORE}" ]

# 5b. kdesched stalls (SIGSTOP) through a compaction + restart and the making of a violation, so
# its watches resume from compacted versions (410 Gone) and the change happened out of its sight.
kill -STOP "${LIVE_PID}"
t0="$(kd_now_ms)"
check "compact-etcd --restart-apiserver (kdesched stopped)" "${KDS_CLUSTER}" compact-etcd --restart-apiserver >/dev/null
timing "compact-etcd --restart-apiserver" "$(kd_elapsed "${t0}")"
must "violation created while kdesched cannot see" kds_violate
evicted_before="$(kds_log_count live 'msg="Evicted pod" ')"
kill -CONT "${LIVE_PID}"
t_ready="$(kd_now_ms)"
check "relist after 410 Gone logged" kds_wait_log live 'msg="reflector relist" resource=[a-z]+ reason=gone' 30
check "the daemon evicts the violation it did not watch happen" kds_wait_log live 'msg="Evicted pod" ' 60 $((evicted_before + 1))
timing "after SIGCONT: eviction of the unseen violation" "$(kd_elapsed "${t_ready}")"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m2.txt"
relists2="$(kds_metric_sum "${WORK}/m2.txt" kdesched_relists_total)"
note "relists ${relists1} -> ${relists2}: $(grep -E '^kdesched_relists_total' "${WORK}/m2.txt" | tr '\n' ' ')"
check "kdesched_relists_total increased (${relists1} -> ${relists2})" [ "${relists2%.*}" -gt "${relists1%.*}" ]
check "3 successful evictions counted" \
  [ "$(kds_metric_sum "${WORK}/m2.txt" descheduler_pods_evicted_total result=success strategy="${STRATEGY}")" = 3 ]
note "owner series: $(owner_series "${WORK}/m2.txt" | tr '\n' ' ')"
check "the 3 evictions, from two ReplicaSets, are one series: ${OWNER_SERIES} 3" \
  [ "$(owner_series "${WORK}/m2.txt")" = "${OWNER_SERIES} 3" ]
check "no failed eviction (no request from a stale cache, none for a pod already evicted)" \
  kds_log_lacks live 'msg="eviction failed"'
note "cycles that waited for a relist first: $(kds_log_count live 'msg="waiting for the cache to relist before the cycle"')"
check "cycles kept running ($(kds_log_count live 'msg="cycle finished"') > ${cycles0})" \
  [ "$(kds_log_count live 'msg="cycle finished"')" -gt "${cycles0}" ]
check "replacement Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
kds_stop "${LIVE_PID}" TERM 15 || true
timing "SIGTERM to exit (daemon, 2s interval)" "$(ms_str "${KDS_STOP_MS}")"
check "SIGTERM: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "exactly 3 evictions over the daemon's life" [ "$(kds_log_count live 'msg="Evicted pod" ')" = 3 ]

# ---------------------------------------------------------------------------
phase "6. one-shot against a paused apiserver: no sync, no eviction, exit 1"
must "order patched onto payment's node again" kds_violate
kds_free_port PORT
check "pause-apiserver" "${KDS_CLUSTER}" pause-apiserver >/dev/null
t0="$(kd_now_ms)"
kds_start paused --descheduling-interval 0 --cache-sync-timeout 5 --secure-port "${PORT}" --bind-address 127.0.0.1
PAUSED_PID="${KDS_PID}"
readyz_503() { r="$(kds_http "${PORT}" /readyz)"; [ "${r}" = "503 caches not synced" ]; }
check "/readyz before sync: 503 caches not synced" kd_wait_for "/readyz 503" 4 readyz_503
r="$(kds_http "${PORT}" /healthz)"; check "/healthz before sync: 200 (got ${r})" [ "${r%% *}" = 200 ]
kds_wait_exit "${PAUSED_PID}" 30 || true
took=$(( $(kd_now_ms) - t0 ))
timing "one-shot with a paused apiserver: start to exit (--cache-sync-timeout 5)" "$(ms_str "${took}")"
check "exit 1 (got ${KDS_RC})" [ "${KDS_RC}" = 1 ]
check "within the sync timeout plus 3 s" [ "${took}" -lt 8000 ]
check "logged that the cache did not sync" kds_log_has paused 'msg="the cache did not sync" timeout_seconds=5'
check "no cycle ran" kds_log_lacks paused 'cycle finished|Evicted pod'
kds_start paused-term --descheduling-interval 2s --secure-port 0
PAUSED_PID="${KDS_PID}"
# It logs nothing until synced: wait until it holds a connection to the (paused) apiserver.
check "it is blocked in its first requests" kd_wait_for "a connection to the apiserver" 10 kds_connected "${PAUSED_PID}" "${APISERVER_PORT}"
kds_stop "${PAUSED_PID}" TERM 10 || true
timing "SIGTERM to exit while waiting for the first sync" "$(ms_str "${KDS_STOP_MS}")"
term_quick() { [ "${KDS_RC}" = 0 ] && [ "${KDS_STOP_MS}" -lt 2000 ]; }
check "SIGTERM while waiting for the first sync: exit 0 (got ${KDS_RC}) within 2 s ($(ms_str "${KDS_STOP_MS}"))" term_quick
check "resume-apiserver" "${KDS_CLUSTER}" resume-apiserver >/dev/null
check "apiserver answers again" "${KDS_CLUSTER}" wait-ready 30
check "payment ${PAYMENT_POD} untouched" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

# ---------------------------------------------------------------------------
phase "7. SIGTERM during an eviction the API server holds"
kds_blackhole_eviction_webhook
kds_free_port PORT
kds_start held --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
HELD_PID="${KDS_PID}"
check "the eviction of ${PAYMENT_POD} reached the webhook (request in flight)" \
  kd_wait_for "AdmissionReview at the webhook" 30 grep -q "POST /hang" "${WORK}/hook.out"
kds_stop "${HELD_PID}" TERM 30 || true
timing "SIGTERM to exit with an eviction in flight (webhook holds 20 s)" "$(ms_str "${KDS_STOP_MS}")"
check "SIGTERM with an eviction in flight: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "...within 3 s, not after the webhook's 20 s ($(ms_str "${KDS_STOP_MS}"))" [ "${KDS_STOP_MS}" -lt 3000 ]
check "...the abandoned eviction is logged as failed" kds_log_has held "msg=\"eviction failed\" pod=${KDS_NS}/${PAYMENT_POD} "
kd_kubectl delete validatingwebhookconfiguration kdesched-e2e-hang >/dev/null
check "payment ${PAYMENT_POD} untouched (the webhook never allowed it)" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"
exec 9>&-

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
