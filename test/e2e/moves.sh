#!/usr/bin/env bash
# Make-before-break moves (docs/moves.md) on the real control plane (3 kwok nodes): the seed story
# with payment at ONE replica behind a PodDisruptionBudget minAvailable 1.
#
#  1. Set-up: order and payment on different nodes; beside payment, two more single-replica
#     workloads with the same anti-affinity against order, pinned there by template nodeName, each
#     behind its own minAvailable 1 PDB: Deployment ledger (maxSurge 0, maxUnavailable 1) and
#     StatefulSet vault. Then order is moved onto that node: all three break their rule.
#  2. Upstream v0.36 (bench/build-upstream.sh), one-shot with the moves policy (it ignores the
#     kdesched block): the eviction is refused (429, the PDB); payment is still there.
#  3. kdesched without moves (the same policy minus the block), one-shot: refused by the PDB too.
#  4. `kdesched plan` (live) with moves: payment is planned as a move ("moved by rollout restart"),
#     ledger and vault are refused with why no move was possible (maxSurge 0; a StatefulSet).
#  5. kdesched with moves, as a daemon: payment's replacement comes up on a node without order and
#     the old pod goes. A watcher of payment's pods (a WATCH on the API server, each event stamped
#     as it arrives) shows at least one Ready payment pod at every instant from before the restart
#     to the end; the minimum and the timeline are printed, and the time from the decision (the
#     "Moving pod" log line) to the old pod's deletion. order, ledger and vault were not restarted;
#     the Deployment has MoveStarted and MoveSucceeded Events; kdesched_moves_total counts it.
#  6. As root, the same with real readiness: the cluster has a real node too (cluster.sh up
#     --real-node, tainted so stories 1-5 never go there); payment-real (the node's pause image)
#     may run on node1 or the real node, is placed on node1 and broken there; its replacement is
#     started by the real kubelet on the real node, the watcher again sees >= 1 Ready pod at every
#     instant, and kdesched's time to Ready is printed.
#
# Own cluster directory (${KDESCHED_MOVES_DIR:-/tmp/kdesched-moves.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints timings and "moves: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin moves --cluster
kds_require_tools

kds_upstream_bin

{ cat "${KDS_POLICY}"; printf 'kdesched:\n  moves: {enabled: true, deadline: 60s}\n'; } >"${WORK}/moves.yaml"

# ---------------------------------------------------------------------------
phase "1. set-up: payment, ledger (maxSurge 0), vault (StatefulSet) beside order, each behind a PDB"
# As root, with one real node too (tainted: nothing of stories 1-5 goes there) for story 6.
if [ "$(id -u)" -eq 0 ]; then
  must "cluster.sh up --nodes 3 --real-node" quietly "${KDS_CLUSTER}" up --nodes 3 --real-node
  kd_env_load
else
  kds_cluster_up 3
fi
must "order and payment Running" kds_create_workload
PAYMENT_NODE="$(node_of "$(pod_of payment)")"
# single NAME KIND EXTRA_SPEC: a one-replica workload with payment's anti-affinity, on PAYMENT_NODE.
single() {
  cat <<EOF
apiVersion: apps/v1
kind: $2
metadata: {name: $1, labels: {app: $1}}
spec:
  replicas: 1
  selector: {matchLabels: {app: $1}}
$3
  template:
    metadata: {labels: {app: $1}}
    spec:
      nodeName: ${PAYMENT_NODE}
      terminationGracePeriodSeconds: 0
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: order}}, topologyKey: kubernetes.io/hostname}
      containers:
      - {name: main, image: nginx:1.24, resources: {requests: {cpu: 50m, memory: 64Mi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $1}
spec: {minAvailable: 1, selector: {matchLabels: {app: $1}}}
---
EOF
}
{
  single ledger Deployment '  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}'
  single vault StatefulSet '  serviceName: vault'
} | kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
kds_apply payment-pdb.yaml
must "ledger and vault Running" kd_wait_pods_ready "${KDS_NS}" 'app in (ledger,vault)' 2 90
pdbs_settled() {
  kds_pdb_settled && kd_kubectl -n "${KDS_NS}" get pdb ledger vault -o json |
    jq -e '[.items[] | .status.observedGeneration == .metadata.generation and .status.disruptionsAllowed == 0 and .status.currentHealthy == 1] | all' >/dev/null
}
must "the three PDBs settled (disruptionsAllowed 0)" kd_wait_for "PDB status" 60 pdbs_settled
must "order moved beside payment (the violation)" kds_violate
LEDGER_POD="$(pod_of ledger)"; VAULT_POD=vault-0; ORDER_POD="$(pod_of order)"
LEDGER_UID="$(uid_of "${LEDGER_POD}")"; VAULT_UID="$(uid_of "${VAULT_POD}")"; ORDER_UID="$(uid_of "${ORDER_POD}")"
note "order, payment ${PAYMENT_POD}, ledger ${LEDGER_POD}, vault ${VAULT_POD} on ${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "2. upstream v0.36: the PDB refuses the eviction (429); payment stays"
KDESCHED="${UPSTREAM}" kds_run upstream 60 --policy-config-file "${WORK}/moves.yaml" --v=3
check "upstream exited 0 (rc ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "upstream: payment's eviction refused by its disruption budget" kds_log_has upstream "payment.*disruption budget|disruption budget.*payment"
check "upstream: payment still running on order's node" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

phase "3. kdesched without moves: refused by the PDB too"
kds_run nomoves 60
check "kdesched (no moves) exited 0 (rc ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "kdesched (no moves): payment refused by PodDisruptionBudget default/payment" \
  kds_log_has nomoves "pod=default/${PAYMENT_POD} .*PodDisruptionBudget default/payment"
check "kdesched (no moves): payment intact" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

# ---------------------------------------------------------------------------
phase "4. plan (live) with moves: payment moves; ledger and vault say why not"
"${KDESCHED}" plan --kubeconfig "${KUBECONFIG}" --policy-config-file "${WORK}/moves.yaml" \
  --explain "default/${LEDGER_POD}" --explain default/vault-0 --explain "default/${PAYMENT_POD}" \
  >"${WORK}/plan.txt" 2>&1 || true
sed 's/^/     | /' "${WORK}/plan.txt"
plan_has() { grep -Eq -- "$1" "${WORK}/plan.txt"; }
check "plan: payment is a move (rollout restart of Deployment default/payment, maxSurge 1, maxUnavailable 0)" \
  plan_has "${PAYMENT_POD} .*moved by rollout restart of Deployment default/payment \(1 replica, maxSurge 1, maxUnavailable 0\)"
check "explain: ledger refused, no move: maxSurge 0 and maxUnavailable 1" plan_has "no move: Deployment default/ledger rolls out with maxSurge 0 and maxUnavailable 1"
check "explain: vault refused, no move: a StatefulSet cannot surge" plan_has "no move: its controller is a StatefulSet"
check "plan wrote nothing: payment intact" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

# ---------------------------------------------------------------------------

# timeline WATCH OLD_POD DECISION_MS: the watched events relative to the decision, the Ready count
# after each; then MIN_READY=, DECISION_TO_GONE_MS= (the old pod's DELETED event) and GONE_SEEN=.
# The decision's time is the "Moving pod" line, written once the restart was answered: on a loaded
# machine the rollout can finish before that line is written, so the time may be negative.
timeline() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
old, moving = sys.argv[2], int(sys.argv[3])
pods, low, gone = {}, None, None
t0 = events[0]["t"]
for e in events:
    if e["type"] == "DELETED":
        pods.pop(e["name"], None)
        if e["name"] == old:
            gone = e["t"]
    else:
        pods[e["name"]] = e["ready"] and not e["deleting"]
    ready = sum(pods.values())
    low = ready if low is None else min(low, ready)
    print(f"  +{(e['t'] - moving) / 1000:7.3f}s {e['type']:8} {e['name']:28} node={e['node'] or '-':8} ready={e['ready']} deleting={e['deleting']}  -> {ready} Ready")
print(f"MIN_READY={low}")
print(f"DECISION_TO_GONE_MS={gone - moving if gone else -1}")
print(f"GONE_SEEN={1 if gone else 0}")
PY
}

phase "5. kdesched with moves: payment replaced on another node, never without a Ready pod"
kds_watch_pods payment
WATCH="${WORK}/watch-payment.jsonl"
kd_wait_for "watcher saw the current pod" 10 grep -q "${PAYMENT_POD}" "${WATCH}" || die "payment watcher"
kds_free_port PORT
kds_start moves --policy-config-file "${WORK}/moves.yaml" --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
check "kdesched restarted payment's rollout (\"Moving pod\")" kds_wait_log moves "msg=\"Moving pod\" pod=default/${PAYMENT_POD} " 30
check "the move succeeded (\"Moved pod\" ... result=success)" kds_wait_log moves 'msg="Moved pod" deployment=default/payment .*result=success' 90
check "payment's replacement Ready on a node without order" kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
check "the old payment pod is gone" kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "nothing else restarted: order, ledger, vault intact" \
  eval 'kds_pod_intact "${ORDER_POD}" "${ORDER_UID}" && kds_pod_intact "${LEDGER_POD}" "${LEDGER_UID}" && kds_pod_intact "${VAULT_POD}" "${VAULT_UID}"'
check "no pod was evicted" kds_log_lacks moves 'msg="Evicted pod"'
sleep 1
MOVING_MS="$(kds_log_ts_ms "$(grep -m1 'msg="Moving pod"' "$(kds_log moves)")")"
timeline "${WATCH}" "${PAYMENT_POD}" "${MOVING_MS}" >"${WORK}/timeline.txt"
sed 's/^/     /' "${WORK}/timeline.txt"
MIN_READY="$(sed -n 's/^MIN_READY=//p' "${WORK}/timeline.txt")"
GONE_MS="$(sed -n 's/^DECISION_TO_GONE_MS=//p' "${WORK}/timeline.txt")"
check "at least one Ready payment pod at every instant (minimum ${MIN_READY})" [ "${MIN_READY:-0}" -ge 1 ]
check "the old pod's deletion was watched (${GONE_MS} ms after the decision)" \
  [ "$(sed -n 's/^GONE_SEEN=//p' "${WORK}/timeline.txt")" = 1 ]
timing "moves: minimum Ready payment pods during the move" "${MIN_READY}"
timing "moves: decision (Moving pod) -> old pod deleted" "$(ms_str "${GONE_MS#-}")"
deployment_events() {
  local uid; uid="$(kd_kubectl -n "${KDS_NS}" get deployment payment -o 'jsonpath={.metadata.uid}')"
  kd_kubectl -n "${KDS_NS}" get events --field-selector "involvedObject.uid=${uid}" -o json |
    jq -e '[.items[].reason] | (index("MoveStarted") != null) and (index("MoveSucceeded") != null)' >/dev/null
}
check "Events MoveStarted and MoveSucceeded on Deployment payment" kd_wait_for "Deployment Events" 10 deployment_events
kds_metrics "${PORT}" "${WORK}/metrics.txt" || true
check "kdesched_moves_total{result=\"succeeded\"} 1" grep -q '^kdesched_moves_total{result="succeeded"} 1$' "${WORK}/metrics.txt"
check "kdesched_move_ready_seconds observed once" grep -q '^kdesched_move_ready_seconds_count 1$' "${WORK}/metrics.txt"
kds_stop "${KDS_PID}" || true

# ---------------------------------------------------------------------------
# The same story with real readiness: payment-real runs the real node's pause image (the only image
# there: no registry) and may run on node1 or the real node (a label both carry). Placed on node1,
# then broken by order-real pinned beside it; its move's new pod is started by the real kubelet.
if [ "$(id -u)" -eq 0 ]; then
  phase "6. on the real node: the replacement started and Ready by a real kubelet, never without a Ready pod"
  kd_kubectl label node node1 kdesched-e2e/moves=yes >/dev/null
  kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<EOF2
apiVersion: apps/v1
kind: Deployment
metadata: {name: payment-real, labels: {app: payment-real}}
spec:
  replicas: 1
  selector: {matchLabels: {app: payment-real}}
  template:
    metadata: {labels: {app: payment-real}}
    spec:
      nodeSelector: {kdesched-e2e/moves: "yes"}
      tolerations: [{key: kdesched.io/real-node, operator: Exists}]
      terminationGracePeriodSeconds: 1
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: order-real}}, topologyKey: kubernetes.io/hostname}
      containers:
      - {name: main, image: localhost/kdesched/pause:1, imagePullPolicy: Never, resources: {requests: {cpu: 10m, memory: 16Mi}}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: payment-real}
spec: {minAvailable: 1, selector: {matchLabels: {app: payment-real}}}
EOF2
  must "payment-real Running on node1" kd_wait_pods_ready "${KDS_NS}" app=payment-real 1 60
  OLD_REAL="$(pod_of payment-real)"; OLD_REAL_UID="$(uid_of "${OLD_REAL}")"
  must "payment-real's pod is on node1" test "$(node_of "${OLD_REAL}")" = node1
  kd_kubectl label node kdesched-node kdesched-e2e/moves=yes >/dev/null
  kd_kubectl -n "${KDS_NS}" create deployment order-real --image=nginx:1.24 --dry-run=client -o json |
    jq '.spec.template.spec.nodeName = "node1"' | kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
  must "order-real Running beside it (the violation)" kd_wait_pods_ready "${KDS_NS}" app=order-real 1 60
  kds_watch_pods payment-real
  WATCH="${WORK}/watch-payment-real.jsonl"
  kd_wait_for "watcher saw the current pod" 10 grep -q "${OLD_REAL}" "${WATCH}" || die "payment-real watcher"
  kds_start real --policy-config-file "${WORK}/moves.yaml" --descheduling-interval 1h
  check "the move of payment-real succeeded" kds_wait_log real 'msg="Moved pod" deployment=default/payment-real .*result=success' 90
  NEW_REAL="$(pod_of payment-real)"
  check "the replacement ${NEW_REAL} runs on the real node" test "$(node_of "${NEW_REAL}")" = kdesched-node
  check "its container was started by the real kubelet (containerStatuses running, a containerd ID)" eval \
    "kd_kubectl -n ${KDS_NS} get pod ${NEW_REAL} -o json | jq -e '.status.containerStatuses[0].state.running and (.status.containerStatuses[0].containerID | startswith(\"containerd://\"))' >/dev/null"
  check "the old pod is gone" kds_pod_evicted "${OLD_REAL}" "${OLD_REAL_UID}"
  sleep 1
  timeline "${WATCH}" "${OLD_REAL}" "$(kds_log_ts_ms "$(grep -m1 'msg="Moving pod"' "$(kds_log real)")")" >"${WORK}/timeline-real.txt"
  sed 's/^/     /' "${WORK}/timeline-real.txt"
  MIN_READY="$(sed -n 's/^MIN_READY=//p' "${WORK}/timeline-real.txt")"
  GONE_MS="$(sed -n 's/^DECISION_TO_GONE_MS=//p' "${WORK}/timeline-real.txt")"
  READY_S="$(grep -o 'msg="Moved pod" .*ready_seconds=[0-9.]*' "$(kds_log real)" | sed 's/.*ready_seconds=//')"
  check "at least one Ready payment-real pod at every instant (minimum ${MIN_READY})" [ "${MIN_READY:-0}" -ge 1 ]
  timing "moves (real node): minimum Ready pods during the move" "${MIN_READY}"
  timing "moves (real node): decision -> new pod Ready (kdesched's ready_seconds)" "${READY_S}s"
  timing "moves (real node): decision -> old pod deleted" "$(ms_str "${GONE_MS#-}")"
  kds_stop "${KDS_PID}" || true
else
  note "6. (the real-node story needs root: not run)"
fi
