#!/usr/bin/env bash
# MakeRoomForPendingPods (docs/strategies/make-room-for-pending-pods.md) on the real control plane:
# three kwok nodes (4 CPU, 8Gi each) whose free CPU is fragmented, 1.5 CPU on every node, and a
# pod asking for 2 CPU that fits nowhere.
#
#  1. Set-up: bare filler pods pinned by nodeName (fill-1 2 CPU on node1, fill-2 and fill-3
#     2.5 CPU on node2 and node3; fill-3 of a higher PriorityClass), the Deployment mover
#     (1 replica, 0.5 CPU) placed on node1 (node2 and node3 cordoned meanwhile), then the bare pod
#     big (2 CPU): Pending, PodScheduled=False reason Unschedulable. kube-scheduler places both
#     big and mover's replacement itself. kwok deletes an evicted pod at once, so big is retried
#     (on the deletion) before the ReplicaSet's replacement exists; node1's memory (7Gi of 8Gi)
#     also tilts the score away from node1 should the replacement come first. With a kubelet's
#     grace period the replacement does come first and may take the room back: the plugin does
#     not reserve it (not tested here).
#  2. Upstream v0.36 (bench/build-upstream.sh), one-shot, with every plugin it has that could act
#     on these pods (LowNodeUtilization, HighNodeUtilization, RemoveDuplicates, the affinity,
#     taint, spread, restart, lifetime and failed-pod plugins): nothing evicted, big stays Pending.
#  3. `kdesched plan` (live, read-only) with MakeRoomForPendingPods (minPendingSeconds 5): mover is
#     planned "to make room for pending pod default/big on node node1"; `--explain default/big`
#     says helped; nothing written.
#  4. kdesched one-shot: exactly one eviction (mover), "made room for pending pod", mover's
#     replacement Running on node2 or node3, big bound to node1 and Running. A WATCH of big,
#     stamped as events arrive, gives decision -> bound and decision -> Ready (printed).
#  5. No move can help: huge (5 CPU, more than any node has) and blocked (2 CPU, nodeSelector
#     node3, where only the higher-priority fill-3 could make room): the plan's --explain gives
#     the reason of each, a one-shot evicts nothing and both stay Pending.
#
# Own cluster directory (${KDESCHED_PENDING_DIR:-/tmp/kdesched-pending.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints timings and "pending: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin pending --cluster
kds_require_tools
PLUGIN=MakeRoomForPendingPods

kds_upstream_bin

# Upstream's plugins, each with args under which it could act on running pods here. Two profiles:
# LowNodeUtilization and HighNodeUtilization pull in opposite directions.
cat >"${WORK}/upstream.yaml" <<'EOF'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: all
  pluginConfig:
  - name: DefaultEvictor
  - name: RemoveDuplicates
  - name: RemovePodsHavingTooManyRestarts
    args: {podRestartThreshold: 1}
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 86400}
  - name: RemoveFailedPods
  - name: RemovePodsViolatingInterPodAntiAffinity
  - name: RemovePodsViolatingNodeAffinity
    args:
      nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution, preferredDuringSchedulingIgnoredDuringExecution]
  - name: RemovePodsViolatingNodeTaints
  - name: RemovePodsViolatingTopologySpreadConstraint
    args: {constraints: [DoNotSchedule, ScheduleAnyway]}
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20, pods: 20}
      targetThresholds: {cpu: 50, memory: 50, pods: 50}
  plugins:
    deschedule:
      enabled: [RemovePodsHavingTooManyRestarts, PodLifeTime, RemoveFailedPods, RemovePodsViolatingInterPodAntiAffinity,
                RemovePodsViolatingNodeAffinity, RemovePodsViolatingNodeTaints]
    balance:
      enabled: [RemoveDuplicates, RemovePodsViolatingTopologySpreadConstraint, LowNodeUtilization]
- name: high
  pluginConfig:
  - name: DefaultEvictor
  - name: HighNodeUtilization
    args: {thresholds: {cpu: 20, memory: 20, pods: 20}}
  plugins:
    balance:
      enabled: [HighNodeUtilization]
EOF
cat >"${WORK}/pending.yaml" <<EOF
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: pending
  pluginConfig:
  - name: DefaultEvictor
  - name: ${PLUGIN}
    args: {minPendingSeconds: 5, maxMovesPerPod: 2}
  plugins:
    deschedule:
      enabled: [${PLUGIN}]
EOF

# ---------------------------------------------------------------------------
phase "1. set-up: 1.5 CPU free on each of 3 nodes, mover (0.5 CPU) on node1, big (2 CPU) Pending"
kds_cluster_up 3
# bare NAME NODE CPU MEMORY [PRIORITY_CLASS]: a pod without owner (DefaultEvictor keeps it), on NODE
# by nodeName (past the scheduler), or through the scheduler when NODE is "-".
bare() {
  jq -n --arg n "$1" --arg node "$2" --arg cpu "$3" --arg mem "$4" --arg pc "${5:-}" '
    {apiVersion: "v1", kind: "Pod", metadata: {name: $n, labels: {app: $n}},
     spec: ({terminationGracePeriodSeconds: 0,
             containers: [{name: "main", image: "nginx:1.25", resources: {requests: {cpu: $cpu, memory: $mem}}}]}
            + (if $node == "-" then {} else {nodeName: $node} end)
            + (if $pc == "" then {} else {priorityClassName: $pc} end))}'
}
kd_kubectl apply -f - >/dev/null <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: e2e-high}
value: 1000
preemptionPolicy: Never
EOF
{
  bare fill-1 node1 2 7Gi
  bare fill-2 node2 2500m 5Gi
  bare fill-3 node3 2500m 5Gi e2e-high
} | kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
must "fillers Running" kd_wait_pods_ready "${KDS_NS}" 'app in (fill-1,fill-2,fill-3)' 3 60
kd_kubectl cordon node2 node3 >/dev/null
kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: mover, labels: {app: mover}}
spec:
  replicas: 1
  selector: {matchLabels: {app: mover}}
  template:
    metadata: {labels: {app: mover}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - {name: main, image: nginx:1.25, resources: {requests: {cpu: 500m, memory: 256Mi}}}
EOF
must "mover Running" kd_wait_pods_ready "${KDS_NS}" app=mover 1 60
kd_kubectl uncordon node2 node3 >/dev/null
MOVER_POD="$(pod_of mover)"; MOVER_UID="$(uid_of "${MOVER_POD}")"
must "mover ${MOVER_POD} on node1" test "$(node_of "${MOVER_POD}")" = node1
fill_uids() { for p in fill-1 fill-2 fill-3; do uid_of "${p}"; done | tr '\n' ' '; }
FILL_UIDS="$(fill_uids)"
fillers_intact() { [ "$(fill_uids)" = "${FILL_UIDS}" ]; }
bare big - 2 512Mi | kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
# unschedulable POD: Pending, unbound, PodScheduled=False reason Unschedulable.
unschedulable() {
  kd_kubectl -n "${KDS_NS}" get pod "$1" -o json | jq -e '.status.phase == "Pending" and (.spec.nodeName // "") == ""
    and any(.status.conditions[]?; .type == "PodScheduled" and .status == "False" and .reason == "Unschedulable")' >/dev/null
}
must "big is Pending, PodScheduled=False reason Unschedulable" kd_wait_for "big unschedulable" 30 unschedulable big
note "scheduler: $(kd_kubectl -n "${KDS_NS}" get pod big -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].message}')"
BIG_UID="$(uid_of big)"

# ---------------------------------------------------------------------------
phase "2. upstream v0.36, every plugin: nothing evicted, big stays Pending"
KDESCHED="${UPSTREAM}" kds_run upstream 60 --policy-config-file "${WORK}/upstream.yaml" --v=3
check "upstream exited 0 (rc ${KDS_RC})" [ "${KDS_RC}" = 0 ]
UPSTREAM_PLUGINS=(RemovePodsHavingTooManyRestarts PodLifeTime RemoveFailedPods RemovePodsViolatingInterPodAntiAffinity
  RemovePodsViolatingNodeAffinity RemovePodsViolatingNodeTaints RemoveDuplicates RemovePodsViolatingTopologySpreadConstraint
  LowNodeUtilization HighNodeUtilization)
upstream_ran_all() { local p; for p in "${UPSTREAM_PLUGINS[@]}"; do kds_log_has upstream "plugin=\"${p}\"" || return 1; done; }
check "upstream ran all ${#UPSTREAM_PLUGINS[@]} plugins (each logged at --v=3)" upstream_ran_all
check "upstream evicted nothing (no \"Evicted pod\")" kds_log_lacks upstream 'Evicted pod'
check "upstream: mover intact on node1" kds_pod_intact "${MOVER_POD}" "${MOVER_UID}"
check "upstream: big still Pending, Unschedulable" unschedulable big

# ---------------------------------------------------------------------------
phase "3. plan (live) with ${PLUGIN}: mover planned to make room for big on node1"
# Unschedulable for minPendingSeconds (5 s) from the condition's lastTransitionTime.
pending_since_s() {
  kd_kubectl -n "${KDS_NS}" get pod "$1" -o json |
    jq -r '.status.conditions[] | select(.type == "PodScheduled") | .lastTransitionTime | fromdateiso8601'
}
old_enough() { [ $(( $(date +%s) - $(pending_since_s "$1") )) -ge 7 ]; }
must "big Unschedulable for 7 s (minPendingSeconds 5)" kd_wait_for "big pending 7 s" 30 old_enough big
# live_plan NAME POLICY ARGS...: stdout and stderr in WORK/NAME.txt, shown indented; sets PLAN_RC.
live_plan() {
  local name="$1" policy="$2"; shift 2
  PLAN_RC=0
  timeout 60 "${KDESCHED}" plan --kubeconfig "${KUBECONFIG}" --policy-config-file "${policy}" "$@" \
    >"${WORK}/${name}.txt" 2>&1 || PLAN_RC=$?
  sed 's/^/     | /' "${WORK}/${name}.txt"
}
plan_has() { grep -Eq -- "$2" "${WORK}/$1.txt"; }
live_plan plan "${WORK}/pending.yaml" --explain default/big --explain "default/${MOVER_POD}"
check "plan exit 0 (got ${PLAN_RC})" [ "${PLAN_RC}" = 0 ]
check "plan: mover evicted by ${PLUGIN} \"to make room for pending pod default/big on node node1\"" \
  plan_has plan "^default +${MOVER_POD} +node1 +${PLUGIN} .*to make room for pending pod default/big on node node1 \(expected to land on node[23]\)"
check "plan: one eviction" plan_has plan '^Summary: 1 eviction, 0 refused'
check "explain big: helped, room made on node1 by evicting mover" \
  plan_has plan "^pending +${PLUGIN} +helped +- +made room on node node1 by evicting default/${MOVER_POD}\$"
mover_and_big_as_before() { kds_pod_intact "${MOVER_POD}" "${MOVER_UID}" && unschedulable big; }
check "plan wrote nothing: mover intact, big Pending" mover_and_big_as_before

# ---------------------------------------------------------------------------
phase "4. kdesched one-shot: mover evicted, its replacement elsewhere, big Running on node1"
kds_watch_pods big
kd_wait_for "watcher saw big" 10 grep -q '"name": "big"' "${WORK}/watch-big.jsonl" || die "big watcher"
kds_run oneshot 60 --policy-config-file "${WORK}/pending.yaml" --descheduling-interval 0
check "one-shot exit 0 (rc ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "exactly one eviction" [ "$(kds_log_count oneshot 'msg="Evicted pod"')" = 1 ]
check "the eviction is mover's, by ${PLUGIN}" kds_log_has oneshot "msg=\"Evicted pod\" pod=default/${MOVER_POD} .*plugin=${PLUGIN}"
check "log: made room for pending pod default/big on node1 by evicting mover" \
  kds_log_has oneshot "msg=\"made room for pending pod\" .*pod=default/big node=node1 evicted=default/${MOVER_POD}"
check "mover's pod is gone" kd_wait_for "mover evicted" 30 kds_pod_evicted "${MOVER_POD}" "${MOVER_UID}"
# mover_elsewhere: one Ready mover pod, a new one, on node2 or node3.
mover_elsewhere() {
  kd_pods_ready_count "${KDS_NS}" app=mover 1 || return 1
  local p; p="$(pod_of mover)" && [ -n "${p}" ] && [ "${p}" != "${MOVER_POD}" ] || return 1
  NEW_MOVER_NODE="$(node_of "${p}")"
  [ "${NEW_MOVER_NODE}" = node2 ] || [ "${NEW_MOVER_NODE}" = node3 ]
}
check "mover's replacement Ready on node2 or node3" kd_wait_for "mover elsewhere" 60 mover_elsewhere
note "mover's replacement on ${NEW_MOVER_NODE:-?}"
big_running() {
  [ "$(kd_kubectl -n "${KDS_NS}" get pod big -o 'jsonpath={.spec.nodeName}|{.status.phase}|{.metadata.uid}')" = "node1|Running|${BIG_UID}" ]
}
check "big scheduled: bound to node1 and Running" kd_wait_for "big Running" 60 big_running
check "the fillers were not touched" fillers_intact
sleep 1
# From the decision (the "made room" line, logged as the evictions are submitted: the pipelined
# POST's own "Evicted pod" line comes when its answer does, and the scheduler may bind big before).
# log_ms NAME REGEX: the time of NAME's first log line matching REGEX (empty when none does).
log_ms() { local line; line="$(grep -m1 -- "$2" "$(kds_log "$1")")" && kds_log_ts_ms "${line}"; }
DECIDED_MS="$(log_ms oneshot 'msg="made room for pending pod"' || true)"
EVICTED_MS="$(log_ms oneshot 'msg="Evicted pod"' || true)"
first_ms() { jq -s -r "[.[] | select(.name == \"big\" and $1)][0].t // empty" "${WORK}/watch-big.jsonl"; }
BOUND_MS="$(first_ms '.node != ""')"
READY_MS="$(first_ms '.ready')"
jq -c "{t: (.t - ${DECIDED_MS:-0}), type, node, ready}" "${WORK}/watch-big.jsonl" | sed 's/^/     big (ms after the decision): /'
watched_after_decision() {
  [ -n "${DECIDED_MS}" ] && [ -n "${EVICTED_MS}" ] && [ -n "${BOUND_MS}" ] && [ -n "${READY_MS}" ] &&
    [ "${BOUND_MS}" -ge "${DECIDED_MS}" ]
}
check "the watch saw big bound, then Ready, after the decision" watched_after_decision
if watched_after_decision; then
  timing "pending: kdesched start -> decision (made room)" "$(ms_str $((DECIDED_MS - $(log_ms oneshot '^ts='))))"
  timing "pending: decision -> Eviction POST answered (Evicted pod)" "$(ms_str $((EVICTED_MS - DECIDED_MS)))"
  timing "pending: decision -> big bound (Pending -> scheduled)" "$(ms_str $((BOUND_MS - DECIDED_MS)))"
  timing "pending: decision -> big Ready (Pending -> Running)" "$(ms_str $((READY_MS - DECIDED_MS)))"
fi
kill -TERM "${WATCH_PID}" 2>/dev/null || true

# ---------------------------------------------------------------------------
phase "5. no move can help: huge (5 CPU) and blocked (node3, behind higher-priority fill-3)"
MOVER_POD="$(pod_of mover)"; MOVER_UID="$(uid_of "${MOVER_POD}")"
{
  bare huge - 5 256Mi
  bare blocked - 2 256Mi | jq '.spec.nodeSelector = {"kubernetes.io/hostname": "node3"}'
} | kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
must "huge and blocked Pending, Unschedulable" kd_wait_for "unschedulable" 30 eval 'unschedulable huge && unschedulable blocked'
must "both Unschedulable for 7 s" kd_wait_for "pending 7 s" 30 eval 'old_enough huge && old_enough blocked'
live_plan plan2 "${WORK}/pending.yaml" --explain default/huge --explain default/blocked
check "plan exit 0 (got ${PLAN_RC})" [ "${PLAN_RC}" = 0 ]
check "plan: no evictions" plan_has plan2 '^No evictions\.$'
check "explain huge: no room even after moves, larger than every node's allocatable (3 nodes)" \
  plan_has plan2 "^pending +${PLUGIN} +skipped +- +not helped: no node has room for it even after moving up to 2 pods \(3 nodes: larger than the node's allocatable\)\$"
check "explain blocked: node3 needs higher-priority pods moved, the other 2 nodes fail its node selector" \
  plan_has plan2 "^pending +${PLUGIN} +skipped +- +not helped: no node has room for it even after moving up to 2 pods \((2 nodes: node selector/affinity, 1 node: higher-priority pods in the way|1 node: higher-priority pods in the way, 2 nodes: node selector/affinity)\)\$"
kds_run oneshot2 60 --policy-config-file "${WORK}/pending.yaml" --descheduling-interval 0
check "one-shot exit 0 (rc ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "nothing evicted" kds_log_lacks oneshot2 'msg="Evicted pod"'
check "nothing made room" kds_log_lacks oneshot2 'made room for pending pod'
check "huge and blocked still Pending, Unschedulable" eval 'unschedulable huge && unschedulable blocked'
all_intact() { kds_pod_intact "${MOVER_POD}" "${MOVER_UID}" && big_running && fillers_intact; }
check "mover, big and the fillers intact" all_intact
end_phase
