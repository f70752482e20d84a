#!/usr/bin/env bash
# End-to-end tests of event-triggered descheduling and anti-flapping (docs/triggers.md "Event triggers and
# anti-flapping") against the real control plane (scripts/cluster/cluster.sh, 10 kwok nodes).
# Every daemon runs with --descheduling-interval 1h: after the first cycle (right after the cache
# syncs) only an event trigger can act.
#
#  1. order/payment: order is patched onto payment's node (template nodeName + nodeSelector); the
#     trigger evicts payment within 2 s of the new order pod's binding (PodScheduled
#     lastTransitionTime, 1 s resolution, vs the "Evicted pod" log line, ms); the replacement runs
#     on another node; the delay is printed.
#  2. rollout of a 50-replica Deployment web (required anti-affinity against app=db, one db pod, so
#     the rollout itself creates no violation) across 10 nodes, image changed: 0 evictions, a
#     handful of scoped runs (printed; at most one per two of the 50 binds), no terminating pod evicted.
#  3. flapping: flap-b (required anti-affinity against app=flap-a) and flap-a both pinned to one
#     node by template nodeName, so every replacement lands back and recreates the violation.
#     antiFlapping ownerCooldown 1s (a candidate the cooldown refused is looked at again when the
#     cooldown ends),
#     backoffAfter 3: evictions stop, "descheduling gave up" is
#     logged, a DeschedulingGaveUp Warning Event is recorded, kdesched_evictions_suppressed_total
#     counts gave-up/backoff, and a final 10 s observation sees no eviction.
#
# Own cluster directory (${KDESCHED_TRIGGERS_DIR:-/tmp/kdesched-triggers.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. A failed check is reported and the test goes on (a failed setup
# step stops it); prints timings, phase durations and "triggers: N passed, N failed"
# (test/e2e/lib.sh). Every kdesched and the cluster are stopped in every case.
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin triggers --cluster

STRATEGY=RemovePodsViolatingInterPodAntiAffinity
kds_require_tools

# policy FILE COOLDOWN BACKOFF_AFTER ROLLOUT_GRACE: the order/payment policy plus the kdesched block.
policy() {
  { cat "${KDS_POLICY}"; cat <<EOF
kdesched:
  triggers: {enabled: true, debounce: 1s, quiet: 200ms, balanceDebounce: 30s, rolloutGrace: $4}
  antiFlapping: {ownerCooldown: $2, maxEvictionsPerMinute: 30, backoffAfter: $3, backoffInitial: 10m, backoffMax: 6h}
EOF
  } >"$1"
}
# start_daemon NAME POLICY: a daemon (1h), waits for its first cycle; sets PORT.
start_daemon() {
  kds_free_port PORT
  kds_start "$1" --policy-config-file "$2" --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
  kds_wait_log "$1" 'msg="cycle finished"' 30
}
evictions() { kds_log_count "$1" 'msg="Evicted pod"'; }

# ---------------------------------------------------------------------------
phase "cluster up (10 kwok nodes)"
kds_cluster_up 10

# ---------------------------------------------------------------------------
phase "1. order/payment: a trigger evicts payment within 2 s of order's binding"
policy "${WORK}/p1.yaml" 5m 3 15s
must "Deployments order and payment Running" kds_create_workload
check "daemon started, first cycle finished (nothing to do)" start_daemon t1 "${WORK}/p1.yaml"
check "first cycle evicted nothing" kds_log_has t1 'msg="cycle finished" evicted=0 '
PAYMENT_POD="$(pod_of payment)"; PAYMENT_NODE="$(node_of "${PAYMENT_POD}")"; PAYMENT_UID="$(uid_of "${PAYMENT_POD}")"
t_patch="$(kd_now_ms)"
check "order patched onto payment's node ${PAYMENT_NODE}" kds_patch_order "${PAYMENT_NODE}" nginx:1.25.1
check "payment ${PAYMENT_POD} evicted by a trigger" kds_wait_log t1 "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} node=${PAYMENT_NODE} plugin=${STRATEGY} " 30
timing "patch to eviction (wall)" "$(kd_elapsed "${t_patch}")"
check "payment ${PAYMENT_POD} gone or terminating" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
# the new order pod: on payment's node, created after the patch
NEW_ORDER="$(kd_kubectl -n "${KDS_NS}" get pods -l app=order -o json | jq -r --arg n "${PAYMENT_NODE}" \
  '[.items[] | select(.spec.nodeName == $n)] | sort_by(.metadata.creationTimestamp) | last | .metadata.name')"
bound="$(kd_kubectl -n "${KDS_NS}" get pod "${NEW_ORDER}" -o json | jq -r \
  '(.status.conditions // [] | map(select(.type == "PodScheduled")) | .[0].lastTransitionTime) // .metadata.creationTimestamp')"
bound_ms="$(kds_ts_ms "${bound}")"
ev_line="$(grep -m1 "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " "$(kds_log t1)")"
ev_ms="$(kds_log_ts_ms "${ev_line}")"
delay=$((ev_ms - bound_ms))
note "new order pod ${NEW_ORDER} bound at ${bound} (1 s resolution); evicted at $(date -u -d "@$((ev_ms / 1000)).$(printf '%03d' $((ev_ms % 1000)))" +%H:%M:%S.%3N)"
timing "order bound to payment evicted (log ms - PodScheduled s)" "${delay} ms (true delay in [$(( delay > 1000 ? delay - 1000 : 0 )), ${delay}] ms)"
check "payment evicted within 2 s of order's binding (${delay} ms; binding time truncated to the second)" \
  [ "${delay}" -lt 2000 -a "${delay}" -gt -1000 ]
check "the eviction came from a triggered run" kds_log_has t1 'msg="triggered run finished" evicted=1 '
note "$(grep -m1 'msg="triggered run finished" evicted=1 ' "$(kds_log t1)" | cut -c1-300)"
check "replacement payment Running on another node than ${PAYMENT_NODE}" \
  kd_wait_for "replacement" 60 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
check "exactly one eviction" [ "$(evictions t1)" = 1 ]
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m1.txt"
grep -E '^(kdesched_trigger_|kdesched_event_to_eviction_seconds_(sum|count))' "${WORK}/m1.txt" | sed 's/^/       /' | head -20
check "kdesched_trigger_runs_total >= 1" [ "$(kds_metric_sum "${WORK}/m1.txt" kdesched_trigger_runs_total)" != 0 ]
check "kdesched_event_to_eviction_seconds_count 1" [ "$(kds_metric_sum "${WORK}/m1.txt" kdesched_event_to_eviction_seconds_count)" = 1 ]
note "kdesched_event_to_eviction_seconds_sum $(kds_metric_sum "${WORK}/m1.txt" kdesched_event_to_eviction_seconds_sum)"
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 1: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
kd_kubectl -n "${KDS_NS}" delete deployment order payment --wait=false >/dev/null
kd_wait_for "order/payment gone" 60 kds_no_pods 'app in (order,payment)'

# ---------------------------------------------------------------------------
phase "2. rollout of 50 replicas: no eviction storm, a handful of scoped runs"
kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: db, labels: {app: db}}
spec:
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: db, image: postgres:16, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 50
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: db}}
            topologyKey: kubernetes.io/hostname
      containers: [{name: web, image: nginx:1.24, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
EOF
check "db Running" kd_wait_pods_ready "${KDS_NS}" app=db 1 90
check "web 50 Running" kd_wait_pods_ready "${KDS_NS}" app=web 50 120
DB_NODE="$(node_of "$(pod_of db)")"
note "web spread: $(kd_kubectl -n "${KDS_NS}" get pods -l app=web -o json | jq -r '[.items[].spec.nodeName] | group_by(.) | map("\(.[0]|sub("^.*-";""))=\(length)") | join(" ")'); db on ${DB_NODE}"
policy "${WORK}/p2.yaml" 5m 3 15s
check "daemon started, first cycle evicted nothing" start_daemon t2 "${WORK}/p2.yaml"
check "first cycle evicted nothing" kds_log_has t2 'msg="cycle finished" evicted=0 '
runs0="$(kds_log_count t2 'msg="triggered run"( |$)')"
t_roll="$(kd_now_ms)"
kd_kubectl -n "${KDS_NS}" set image deployment/web web=nginx:1.25 >/dev/null
check "rollout complete" kd_kubectl -n "${KDS_NS}" rollout status deployment/web --timeout=180s >/dev/null
check "web 50 Running after the rollout" kd_wait_pods_ready "${KDS_NS}" app=web 50 60
timing "rollout of 50 replicas" "$(kd_elapsed "${t_roll}")"
sleep 17   # past rolloutGrace (15 s): deferred candidates are looked at again
binds="$(kd_kubectl -n "${KDS_NS}" get pods -l app=web -o json | jq '[.items[] | select(.spec.containers[0].image == "nginx:1.25")] | length')"
runs=$(( $(kds_log_count t2 'msg="triggered run"( |$)') - runs0 ))
graced="$(kds_log_count t2 'msg="triggered run after rollout grace"')"
timing "scoped runs during the rollout (${binds} new pods bound)" "${runs} (+${graced} after rollout grace)"
grep -E 'msg="triggered run' "$(kds_log t2)" | cut -c1-200 | sed 's/^/       /'
check "evictions during the rollout: 0 (got $(evictions t2))" [ "$(evictions t2)" = 0 ]
# Batched, not a run per event: a batch runs 100 ms after its first event and the CPU budget spaces
# runs, so a 50-replica rollout of ~7 s makes 10-20 scoped runs (16 in one CI run; a fixed "< 15"
# from the 1 s debounce failed there). At most one run per two binds.
check "scoped runs ${runs} >= 1 and at most one per two of ${binds} binds" [ "${runs}" -ge 1 -a $(( runs * 2 )) -le "${binds}" ]
check "no eviction attempted on any pod (no terminating pod evicted): no refusal logged either" \
  kds_log_lacks t2 'msg="(Evicted pod|eviction refused)"'
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m2.txt"
grep -E '^(kdesched_trigger_|descheduler_pods_evicted_total)' "${WORK}/m2.txt" | sed 's/^/       /' | head -20
check "descheduler_pods_evicted_total 0" [ "$(kds_metric_sum "${WORK}/m2.txt" descheduler_pods_evicted_total)" = 0 ]
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 2: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
kd_kubectl -n "${KDS_NS}" delete deployment web db --wait=false >/dev/null
kd_wait_for "web/db gone" 90 kds_no_pods 'app in (web,db)'

# ---------------------------------------------------------------------------
phase "3. flapping: backoff after 3, DeschedulingGaveUp, then stable"
policy "${WORK}/p3.yaml" 1s 3 1s
check "daemon started, first cycle finished" start_daemon t3 "${WORK}/p3.yaml"
FLAP_NODE="$(kd_kubectl get nodes -o jsonpath='{.items[0].metadata.name}')"
t_flap="$(kd_now_ms)"
kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: flap-a, labels: {app: flap-a}}
spec:
  replicas: 1
  selector: {matchLabels: {app: flap-a}}
  template:
    metadata: {labels: {app: flap-a}}
    spec:
      terminationGracePeriodSeconds: 0
      nodeName: ${FLAP_NODE}
      containers: [{name: a, image: nginx:1.24, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: flap-b, labels: {app: flap-b}}
spec:
  replicas: 1
  selector: {matchLabels: {app: flap-b}}
  template:
    metadata: {labels: {app: flap-b}}
    spec:
      terminationGracePeriodSeconds: 0
      nodeName: ${FLAP_NODE}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: flap-a}}
            topologyKey: kubernetes.io/hostname
      containers: [{name: b, image: nginx:1.24, resources: {requests: {cpu: 10m, memory: 16Mi}}}]
EOF
check "gave up logged" kds_wait_log t3 'msg="descheduling gave up for a while" pod='"${KDS_NS}"'/flap-b-' 90
timing "flapping start to gave up" "$(kd_elapsed "${t_flap}")"
note "$(grep -m1 'descheduling gave up' "$(kds_log t3)" | cut -c1-250)"
n_before="$(evictions t3)"
timing "evictions of flap-b before giving up" "${n_before}"
check "evictions of flap-b happened (${n_before}), at most backoffAfter+1" [ "${n_before}" -ge 2 -a "${n_before}" -le 4 ]
check "only flap-b pods evicted" bash -c "! grep 'msg=\"Evicted pod\"' '$(kds_log t3)' | grep -vq 'pod=${KDS_NS}/flap-b-'"
gaveup_event() {
  kd_kubectl -n "${KDS_NS}" get events --field-selector reason=DeschedulingGaveUp -o json >"${WORK}/ev3.json" || return 1
  jq -e '[.items[] | select(.type == "Warning" and (.involvedObject.name | startswith("flap-b-")))] | length >= 1' "${WORK}/ev3.json" >/dev/null
}
check "DeschedulingGaveUp Warning Event on a flap-b pod" kd_wait_for "gave-up Event" 20 gaveup_event
note "event: $(jq -r '.items[0] | "\(.involvedObject.name): \(.message)"' "${WORK}/ev3.json")"
sleep 10
check "no eviction during a final 10 s observation ($(evictions t3) vs ${n_before})" [ "$(evictions t3)" = "${n_before}" ]
check "flap-b still Running beside flap-a (left alone)" kd_wait_pods_ready "${KDS_NS}" app=flap-b 1 10
check "GET /metrics" kds_metrics "${PORT}" "${WORK}/m3.txt"
grep -E '^(kdesched_evictions_suppressed_total|descheduler_pods_evicted_total|kdesched_trigger_runs_total)' "${WORK}/m3.txt" | sed 's/^/       /'
gu="$(kds_metric_sum "${WORK}/m3.txt" kdesched_evictions_suppressed_total reason=gave-up)"
bo="$(kds_metric_sum "${WORK}/m3.txt" kdesched_evictions_suppressed_total reason=backoff)"
timing "suppressed: gave-up / backoff / cooldown" "${gu} / ${bo} / $(kds_metric_sum "${WORK}/m3.txt" kdesched_evictions_suppressed_total reason=cooldown)"
check "kdesched_evictions_suppressed_total{reason=\"gave-up\"} >= 1 (${gu})" [ "${gu}" != 0 ]
refusals="$(kds_log_count t3 'by="anti-flapping: ')"
note "anti-flapping refusals logged: ${refusals}"
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 3: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
end_phase
