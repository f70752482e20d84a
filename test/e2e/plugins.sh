#!/usr/bin/env bash
# End-to-end stories of the status, taint, lifetime and duplicate plugins against the
# real control plane (scripts/cluster/cluster.sh, 3 kwok nodes). The daemons run with
# --descheduling-interval 1h: after the first cycle only an event trigger or a deadline can act.
#
#  1. taint: a node gains a NoSchedule taint; its pod without a toleration is evicted within 2 s
#     of the taint (RemovePodsViolatingNodeTaints through a trigger), the tolerating pod stays.
#  2. restarts: a pod's restartCount is set to 3 through the status subresource (as kubelet would
#     report it; kwok leaves it); RemovePodsHavingTooManyRestarts (threshold 3) evicts it within
#     2 s of the status update.
#  3. lifetime: PodLifeTime maxPodLifeTimeSeconds 20; a pod created after the daemon's first
#     cycle is evicted by the deadline queue within 2 s after its 20th second.
#  4. duplicates: three pods of one ReplicaSet on one node of three (the other two cordoned while
#     they are placed); one-shot RemoveDuplicates leaves one per node.
#  5. upstream's chart default policy (helm template of upstream v0.36's chart) run one-shot
#     evicts exactly what `kdesched plan` predicted on a snapshot of the same cluster.
#
# Own cluster directory; kdesched is ${KDESCHED_BIN:-build/kdesched}. A failed check is reported
# and the test goes on (a failed setup step stops it); prints "plugins: N passed, N failed".
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin plugins --cluster
kds_require_tools

# policy FILE PLUGIN POINT ARGS_YAML: one profile, one plugin (args indented 6), triggers on.
policy() {
  cat >"$1" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: e2e
  pluginConfig:
  - name: DefaultEvictor
  - name: $2
    args:
$4
  plugins:
    $3:
      enabled: [$2]
kdesched:
  triggers: {enabled: true, debounce: 1s, quiet: 200ms, balanceDebounce: 5s, rolloutGrace: 0s}
YAML
}
start_daemon() {
  kds_free_port PORT
  kds_start "$1" --policy-config-file "$2" --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
  kds_wait_log "$1" 'msg="cycle finished"' 30
}
# deployment NAME REPLICAS [EXTRA_SPEC_JSON]: a Deployment app=NAME in KDS_NS.
deployment() {
  local extra="${3:-{\}}"
  jq -n --arg n "$1" --argjson r "$2" --argjson x "${extra}" '{apiVersion: "apps/v1", kind: "Deployment",
    metadata: {name: $n, labels: {app: $n}},
    spec: {replicas: $r, selector: {matchLabels: {app: $n}},
      template: {metadata: {labels: {app: $n}},
        spec: ({terminationGracePeriodSeconds: 0,
          containers: [{name: "c", image: "nginx:1.25", resources: {requests: {cpu: "10m", memory: "16Mi"}}}]} + $x)}}}' |
    kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
}
evicted_line() { grep -m1 "msg=\"Evicted pod\" pod=${KDS_NS}/$2 " "$(kds_log "$1")"; }
gone() { kd_kubectl -n "${KDS_NS}" delete deployment "$@" --wait=false >/dev/null; }

phase "cluster up (3 kwok nodes)"
kds_cluster_up 3
mapfile -t NODES < <(kd_kubectl get nodes -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}' | sort)

# ---------------------------------------------------------------------------
phase "1. taint: the non-tolerating pod is evicted within 2 s of a NoSchedule taint"
N0="${NODES[0]}"
pin="{\"nodeSelector\": {\"kubernetes.io/hostname\": \"${N0}\"}}"
deployment plain 1 "${pin}"
deployment tolerant 1 "$(jq -cn --arg n "${N0}" '{nodeSelector: {"kubernetes.io/hostname": $n},
  tolerations: [{key: "e2e-dedicated", operator: "Exists", effect: "NoSchedule"}]}')"
must "plain and tolerant Running on ${N0}" kd_wait_pods_ready "${KDS_NS}" 'app in (plain,tolerant)' 2 90
policy "${WORK}/p1.yaml" RemovePodsViolatingNodeTaints deschedule "      includePreferNoSchedule: false"
check "daemon started, first cycle finished" start_daemon t1 "${WORK}/p1.yaml"
PLAIN="$(pod_of plain)"; TOLERANT="$(pod_of tolerant)"
t_taint="$(kd_now_ms)"
check "node ${N0} tainted e2e-dedicated=yes:NoSchedule" kd_kubectl taint node "${N0}" e2e-dedicated=yes:NoSchedule
check "plain ${PLAIN} evicted by a trigger" kds_wait_log t1 "msg=\"Evicted pod\" pod=${KDS_NS}/${PLAIN} node=${N0} plugin=RemovePodsViolatingNodeTaints " 10
ev_ms="$(kds_log_ts_ms "$(evicted_line t1 "${PLAIN}")")"
delay=$((ev_ms - t_taint))
timing "taint to eviction" "${delay} ms"
check "evicted within 2 s of the taint (${delay} ms)" [ "${delay}" -lt 2000 ]
note "$(evicted_line t1 "${PLAIN}" | grep -o 'reason=.*' | cut -c1-200)"
sleep 1
check "tolerant ${TOLERANT} not evicted" kds_log_lacks t1 "pod=${KDS_NS}/${TOLERANT} "
check "exactly one eviction" [ "$(kds_log_count t1 'msg="Evicted pod"')" = 1 ]
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 1: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
kd_kubectl taint node "${N0}" e2e-dedicated- >/dev/null
gone plain tolerant
kd_wait_for "plain/tolerant gone" 60 kds_no_pods 'app in (plain,tolerant)'

# ---------------------------------------------------------------------------
phase "2. restarts: 3 restarts reported, evicted within 2 s"
deployment crashy 1
must "crashy Running" kd_wait_pods_ready "${KDS_NS}" app=crashy 1 90
policy "${WORK}/p2.yaml" RemovePodsHavingTooManyRestarts deschedule "      podRestartThreshold: 3
      labelSelector: {matchLabels: {app: crashy}}"
check "daemon started, first cycle finished" start_daemon t2 "${WORK}/p2.yaml"
CRASHY="$(pod_of crashy)"
# restarts POD N: the status subresource with every container's restartCount set to N.
restarts() {
  kd_kubectl -n "${KDS_NS}" get pod "$1" -o json |
    jq --argjson n "$2" '.status.containerStatuses |= map(.restartCount = $n)' |
    kd_kubectl -n "${KDS_NS}" replace --subresource=status -f - >/dev/null
}
check "restartCount 2 reported (under the threshold)" restarts "${CRASHY}" 2
sleep 1.5
check "not evicted at 2 restarts" kds_log_lacks t2 'msg="Evicted pod"'
t_status="$(kd_now_ms)"
check "restartCount 3 reported" restarts "${CRASHY}" 3
check "crashy ${CRASHY} evicted" kds_wait_log t2 "msg=\"Evicted pod\" pod=${KDS_NS}/${CRASHY} .*plugin=RemovePodsHavingTooManyRestarts " 10
ev_ms="$(kds_log_ts_ms "$(evicted_line t2 "${CRASHY}")")"
delay=$((ev_ms - t_status))
timing "status update to eviction" "${delay} ms"
check "evicted within 2 s of the status update (${delay} ms)" [ "${delay}" -lt 2000 ]
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 2: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
gone crashy
kd_wait_for "crashy gone" 60 kds_no_pods app=crashy

# ---------------------------------------------------------------------------
phase "3. lifetime: evicted within 2 s after its 20th second, with a 1 h interval"
policy "${WORK}/p3.yaml" PodLifeTime deschedule "      maxPodLifeTimeSeconds: 20
      labelSelector: {matchLabels: {app: shortlived}}"
check "daemon started, first cycle finished" start_daemon t3 "${WORK}/p3.yaml"
deployment shortlived 1
must "shortlived Running" kd_wait_pods_ready "${KDS_NS}" app=shortlived 1 60
SHORT="$(pod_of shortlived)"
created="$(kd_kubectl -n "${KDS_NS}" get pod "${SHORT}" -o jsonpath='{.metadata.creationTimestamp}')"
check "shortlived ${SHORT} evicted" kds_wait_log t3 "msg=\"Evicted pod\" pod=${KDS_NS}/${SHORT} .*plugin=PodLifeTime " 40
ev_ms="$(kds_log_ts_ms "$(evicted_line t3 "${SHORT}")")"
age=$((ev_ms - $(kds_ts_ms "${created}")))
timing "creation (1 s resolution) to eviction" "${age} ms"
check "evicted after its 20th second and within 2 s of it (${age} ms after ${created})" [ "${age}" -ge 20000 -a "${age}" -lt 22000 ]
check "the eviction came from a deadline run" kds_log_has t3 'msg="deadline run" pods=1 plugins=PodLifeTime'
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon 3: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
gone shortlived
kd_wait_for "shortlived gone" 60 kds_no_pods app=shortlived

# ---------------------------------------------------------------------------
phase "4. duplicates: three of one ReplicaSet on one node; one-shot leaves one per node"
kd_kubectl cordon "${NODES[1]}" "${NODES[2]}" >/dev/null
deployment dup 3
must "dup 3 Running" kd_wait_pods_ready "${KDS_NS}" app=dup 3 90
kd_kubectl uncordon "${NODES[1]}" "${NODES[2]}" >/dev/null
per_node() { kd_kubectl -n "${KDS_NS}" get pods -l app=dup -o json | jq -r '[.items[] | select(.metadata.deletionTimestamp == null and .status.phase == "Running") | .spec.nodeName] | group_by(.) | map(length) | sort | map(tostring) | join(",")'; }
check "all three on ${NODES[0]} ($(per_node))" [ "$(per_node)" = 3 ]
policy "${WORK}/p4.yaml" RemoveDuplicates balance "      namespaces: {include: [${KDS_NS}]}"
kds_run t4 60 --policy-config-file "${WORK}/p4.yaml" --descheduling-interval 0
check "one-shot exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "two evictions (upperAvg ceil(3/3) = 1 on ${NODES[0]})" [ "$(kds_log_count t4 'msg="Evicted pod" .*plugin=RemoveDuplicates')" = 2 ]
one_each() { [ "$(per_node)" = "1,1,1" ]; }
check "one dup per node after the replacements ($(per_node))" kd_wait_for "one per node" 60 one_each
gone dup
kd_wait_for "dup gone" 60 kds_no_pods app=dup

# ---------------------------------------------------------------------------
phase "5. upstream's chart default policy: one-shot evicts what plan predicted"
CHART_POLICY="${WORK}/chart-default.yaml"
must "upstream chart default policy rendered" python3 -c "
import sys; sys.path.insert(0, '${ROOT}/test/upstream')
import published_policies as p
open('${CHART_POLICY}', 'w').write(p.chart_policy(p.module_dir())[0][2])"
must "order and payment Running" kds_create_workload
must "order moved onto payment's node" kds_violate
SNAP="${WORK}/snapshot.json"
dump() { kd_kubectl get nodes,pods,pdb,namespaces,priorityclasses,pvc -A -o json >"${SNAP}"; }
must "snapshot dumped" dump
must "plan exit 0" bash -c "'${KDESCHED}' plan --policy-config-file '${CHART_POLICY}' --snapshot '${SNAP}' -o json >'${WORK}/plan.json'"
jq -r '.evictions[] | "\(.namespace)/\(.name)"' "${WORK}/plan.json" | sort >"${WORK}/planned.txt"
note "planned: $(tr '\n' ' ' <"${WORK}/planned.txt")"
kds_run t5 60 --policy-config-file "${CHART_POLICY}" --descheduling-interval 0
check "one-shot exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
grep 'msg="Evicted pod"' "$(kds_log t5)" | grep -o ' pod=[^ ]*' | cut -d= -f2 | sort >"${WORK}/evicted.txt"
note "evicted: $(tr '\n' ' ' <"${WORK}/evicted.txt")"
check "plan predicted at least payment (${PAYMENT_POD})" grep -qx "${KDS_NS}/${PAYMENT_POD}" "${WORK}/planned.txt"
check "the one-shot evicted exactly what plan predicted" diff "${WORK}/planned.txt" "${WORK}/evicted.txt"
end_phase
