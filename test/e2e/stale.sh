#!/usr/bin/env bash
# A stale cache and the per-request time limit, end to end on the real control plane
# (scripts/cluster/cluster.sh), with the order/payment story (examples/order-payment/policy.yaml)
# and kdesched running as the chart's ServiceAccount (deploy/rbac.yaml, a TokenRequest token):
#
#  1. daemon (--descheduling-interval 5s): synced, /readyz 200, kdesched_cache_stale 0 for every
#     cached resource. The pods rule is removed from the ClusterRole and the apiserver restarted:
#     RBAC is checked when a request is made, so the pods watch that re-opens gets 403. Then: one
#     warning naming the resource, the verb and the API's answer; /readyz 503 with that reason;
#     kdesched_cache_stale{resource="pods"} 1; a violation made now is not evicted and no cycle
#     runs; the 403s do not flood the log. The rule is restored: without a restart the cache
#     resyncs (/readyz 200, the gauge 0) and the cycle that was due evicts payment.
#  2. one-shot with the pods rule missing: exit 1 at once (not after --cache-sync-timeout), the
#     message names pods and list; no cycle.
#  3. --api-request-timeout 3s: an eviction that a validating webhook holds (its server never
#     answers; the apiserver would wait 20 s) fails after 3 s, and the cycle finishes.
#
# Own cluster directory (${KDESCHED_STALE_DIR:-/tmp/kdesched-stale.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. A failed check is reported and the test goes on (a failed setup
# step stops it); prints timings, phase durations and "stale: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin stale --cluster
kds_require_tools

SA=system:serviceaccount:kube-system:kdesched
SA_KC="${WORK}/sa.kubeconfig"
# A quote inside the API's message, as the log carries it: logfmt escapes it inside a quoted value.
Q='\\"'
RESOURCES=(pods nodes namespaces poddisruptionbudgets persistentvolumeclaims)

# The pods rule of ClusterRole kdesched, cut and restored (kept in WORK/role.json).
can() { kd_kubectl auth can-i "$1" pods --all-namespaces --as="${SA}" >/dev/null 2>&1; }
cannot() { ! can "$1"; }
cut_pods_rule() {
  jq '.rules |= map(select(.resources != ["pods"]))' "${WORK}/role.json" >"${WORK}/role-cut.json" &&
    kd_kubectl replace -f "${WORK}/role-cut.json" >/dev/null && kd_wait_for "RBAC cut visible" 15 cannot watch
}
restore_pods_rule() {
  kd_kubectl replace -f "${WORK}/role.json" >/dev/null && kd_wait_for "RBAC restored" 15 can watch
}
# stale_is FILE RESOURCE VALUE: the scraped kdesched_cache_stale{resource=RESOURCE} is VALUE.
stale_is() { grep -qx "kdesched_cache_stale{resource=\"$2\"} $3" "$1"; }
readyz_is() { [ "$(kds_http "${PORT}" /readyz)" = "$1" ]; }
readyz_starts() { local r; r="$(kds_http "${PORT}" /readyz)"; [[ "${r}" == "$1"* ]]; }
# line_of NAME REGEX: the number of the first line of NAME's log matching REGEX (0: none).
line_of() { grep -En -m1 -- "$2" "$(kds_log "$1")" | cut -d: -f1 || echo 0; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes)"
kds_cluster_up 3

phase "order and payment; kdesched's ServiceAccount and ClusterRole (deploy/rbac.yaml)"
must "Deployments order and payment Running" kds_create_workload
must "deploy/rbac.yaml applied" quietly kd_kubectl apply -f "${ROOT}/deploy/rbac.yaml"
must "TokenRequest for kube-system/kdesched -> kubeconfig" kds_sa_kubeconfig kdesched kube-system "${SA_KC}"
kd_kubectl get clusterrole kdesched -o json |
  jq 'del(.metadata.resourceVersion, .metadata.managedFields, .metadata.uid, .metadata.creationTimestamp)' \
    >"${WORK}/role.json"
must "the ServiceAccount may watch pods" kd_wait_for "RBAC visible" 15 can watch

# ---------------------------------------------------------------------------
phase "1. daemon: pods rule removed, watch re-opened -> stale; rule restored -> resync, eviction"
kds_free_port PORT
kds_start daemon --kubeconfig "${SA_KC}" --descheduling-interval 5s --secure-port "${PORT}" --bind-address 127.0.0.1
DAEMON_PID="${KDS_PID}"
check "first cycle as the chart's ServiceAccount" kds_wait_log daemon 'msg="cycle finished" ' 30
check "/readyz 200 ok" kd_wait_for "/readyz 200" 5 readyz_is "200 ok"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m0.txt"
for r in "${RESOURCES[@]}"; do
  check "kdesched_cache_stale{resource=\"${r}\"} 0 from the start" stale_is "${WORK}/m0.txt" "${r}" 0
done

must "pods rule removed from ClusterRole kdesched (can-i watch pods: no)" cut_pods_rule
t_restart="$(kd_now_ms)"
check "restart-apiserver (every watch re-opens)" "${KDS_CLUSTER}" restart-apiserver >/dev/null
check "one warning: cache stale, resource pods, verb watch, the API's 403" kds_wait_log daemon \
  "level=warn msg=\"cache stale\" resource=pods verb=watch reason=\"403 Forbidden: pods is forbidden: User ${Q}${SA}${Q} cannot watch resource ${Q}pods${Q}" 40
timing "apiserver restart to the stale warning" "$(kd_elapsed "${t_restart}")"
note "$(grep -m1 'msg="cache stale" resource=pods' "$(kds_log daemon)" | cut -c1-400)"
check "/readyz 503 with the reason" kd_wait_for "/readyz 503" 10 readyz_starts "503 cache stale: pods (watch: 403 Forbidden: pods is forbidden"
note "/readyz: $(kds_http "${PORT}" /readyz | cut -c1-200)"
# A restarted apiserver refuses every request for its first seconds, until its RBAC informers have
# synced ("RBAC: clusterrole ... not found"): the other resources are stale that long too.
only_pods_stale() {
  kds_metrics "${PORT}" "${WORK}/m1.txt" && stale_is "${WORK}/m1.txt" pods 1 && stale_is "${WORK}/m1.txt" nodes 0 &&
    stale_is "${WORK}/m1.txt" namespaces 0 && stale_is "${WORK}/m1.txt" persistentvolumeclaims 0
}
check "kdesched_cache_stale{resource=\"pods\"} 1, the other resources 0" kd_wait_for "only pods stale" 20 only_pods_stale
note "$(grep '^kdesched_cache_stale' "${WORK}/m1.txt" | tr '\n' ' ')"
cycles="$(kds_log_count daemon 'msg="cycle finished"')"

must "violation made while the cache is stale (order beside payment)" kds_violate
check "the cycle due is skipped, with resource, verb and reason" kds_wait_log daemon \
  'level=warn msg="cache stale, skipping the cycle" resource=pods verb=watch reason="403 Forbidden' 15
# Two more intervals: a cycle on the stale cache would be one that cannot see the violation anyway;
# what matters is that none runs and nothing is evicted.
sleep 12
check "no cycle while stale (${cycles} before, $(kds_log_count daemon 'msg="cycle finished"') now)" \
  [ "$(kds_log_count daemon 'msg="cycle finished"')" = "${cycles}" ]
check "payment ${PAYMENT_POD} not evicted while stale" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"
check "no eviction attempted" kds_log_lacks daemon 'msg="(Evicted pod|eviction failed)"'
noisy="$(grep -Ec 'level=(info|warn) msg="[^"]*" resource=pods .*403 Forbidden' "$(kds_log daemon)" || true)"
note "info/warn lines about pods' 403 after $(kd_elapsed "${t_restart}") stale: ${noisy}"
check "pods' 403s are not logged on every retry (${noisy} info/warn lines <= 5)" [ "${noisy}" -le 5 ]
check "one 'cache stale' warning for pods in the episode" [ "$(kds_log_count daemon 'msg="cache stale" resource=pods')" = 1 ]

must "pods rule restored (can-i watch pods: yes)" restore_pods_rule
t_restore="$(kd_now_ms)"
check "cache fresh again, same process" kds_wait_log daemon 'level=info msg="cache fresh again" resource=pods' 60
timing "rule restored to cache fresh again (the reflector's backoff)" "$(kd_elapsed "${t_restore}")"
t_fresh="$(kd_now_ms)"
check "the cycle that was due runs at once" kds_wait_log daemon 'msg="cache resynced, running the cycle"' 10
check "/readyz 200 ok again" kd_wait_for "/readyz 200" 10 readyz_is "200 ok"
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m2.txt"
check "kdesched_cache_stale{resource=\"pods\"} 0 again" stale_is "${WORK}/m2.txt" pods 0
check "payment ${PAYMENT_POD} evicted by the next cycle" \
  kds_wait_log daemon "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " 20
timing "cache fresh to payment evicted" "$(kd_elapsed "${t_fresh}")"
evicted_after_fresh() {
  local fresh evicted
  fresh="$(line_of daemon 'msg="cache fresh again" resource=pods')"
  evicted="$(line_of daemon 'msg="Evicted pod"')"
  [ "${fresh}" -gt 0 ] && [ "${evicted}" -gt "${fresh}" ]
}
check "...after the resync, not before" evicted_after_fresh
check "payment ${PAYMENT_POD} gone or terminating" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "the daemon never restarted" kds_alive "${DAEMON_PID}"
kds_stop "${DAEMON_PID}" TERM 15 || true
check "SIGTERM: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]

# ---------------------------------------------------------------------------
phase "2. one-shot with the pods rule missing: exit 1 at once, naming pods and list"
must "pods rule removed again" cut_pods_rule
kds_run oneshot 60 --kubeconfig "${SA_KC}" --descheduling-interval 0 --secure-port 0
timing "one-shot refused: start to exit" "$(ms_str "${KDS_RUN_MS}")"
check "exit 1 (got ${KDS_RC})" [ "${KDS_RC}" = 1 ]
check "within 10 s, not after --cache-sync-timeout (120 s)" [ "${KDS_RUN_MS}" -lt 10000 ]
check "the message names pods, list and the API's answer" kds_log_has oneshot \
  "level=error msg=\"access to the cluster refused; no cycle runs\" resource=pods verb=list reason=\"403 Forbidden: pods is forbidden: User ${Q}${SA}${Q} cannot list resource ${Q}pods${Q}"
note "$(grep -m1 'access to the cluster refused' "$(kds_log oneshot)" | cut -c1-400)"
check "no cycle ran" kds_log_lacks oneshot 'cycle finished|Evicted pod'
must "pods rule restored" restore_pods_rule

# ---------------------------------------------------------------------------
phase "3. --api-request-timeout 3s: an eviction the API server holds does not hold the cycle"
must "replacement payment Running elsewhere" \
  kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
must "order patched onto payment's node again" kds_violate
kds_blackhole_eviction_webhook
kds_start held --descheduling-interval 1h --api-request-timeout 3s --secure-port 0
HELD_PID="${KDS_PID}"
check "the eviction of ${PAYMENT_POD} reached the webhook (request in flight)" \
  kd_wait_for "AdmissionReview at the webhook" 30 grep -q "POST /hang" "${WORK}/hook.out"
t_held="$(kd_now_ms)"
check "the cycle finishes, the eviction failed" kds_wait_log held 'msg="cycle finished" evicted=0 refused=1 ' 15
held_ms=$(( $(kd_now_ms) - t_held ))
timing "eviction at the webhook to cycle finished (--api-request-timeout 3s)" "$(ms_str "${held_ms}")"
check "...within 8 s, not after the webhook's 20 s" [ "${held_ms}" -lt 8000 ]
check "the failure names the time limit" \
  kds_log_has held "msg=\"eviction failed\" pod=${KDS_NS}/${PAYMENT_POD} .*no answer within 3s"
note "$(grep -m1 'msg="eviction failed"' "$(kds_log held)" | cut -c1-300)"
kds_stop "${HELD_PID}" TERM 15 || true
check "SIGTERM: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
kd_kubectl delete validatingwebhookconfiguration kdesched-e2e-hang >/dev/null
exec 9>&-
check "payment ${PAYMENT_POD} untouched (the webhook never allowed it)" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
