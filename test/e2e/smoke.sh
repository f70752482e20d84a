#!/usr/bin/env bash
# Smoke test of the real test control plane (scripts/cluster/cluster.sh):
# the "order / payment" incident, end to end, with the real kube-scheduler,
# kube-controller-manager (ReplicaSet, Deployment, disruption controllers),
# the Eviction API and kwok nodes.
#
#  1. up with 3 kwok nodes; TokenRequest works.
#  2. Deployments order (app=order) and payment (app=payment, required pod
#     anti-affinity against app=order on kubernetes.io/hostname) run on
#     different nodes.
#  3. order is patched to run on payment's node (image nginx:1.25, requests
#     200m/512Mi). The scheduler would refuse that placement: InterPodAntiAffinity
#     also honours the anti-affinity of pods already on a node (payment's), so a
#     nodeSelector alone leaves the new order pod Pending. The incident needs the
#     constraint violated anyway, so the patch sets the template's
#     spec.nodeName as well (the same bypass as a pod created with nodeName): the
#     ReplicaSet's pod is bound directly, kwok runs it. End state: order Running
#     beside payment, payment still Running there.
#  4. A PDB (minAvailable 1, app=payment) gets its status from the disruption
#     controller (disruptionsAllowed 0); an Eviction of payment is refused with
#     429.
#  5. Without the PDB the Eviction succeeds; the ReplicaSet's replacement is
#     scheduled onto another node (not order's) and runs.
#  6. down leaves no process and no directory.
#
# Own cluster directory (${KDESCHED_SMOKE_DIR:-/tmp/kdesched-smoke.PID}). The workload is
# test/e2e/manifests/order-payment.yaml and payment-pdb.yaml. A failed check is reported and the
# test goes on; the last line is "smoke: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin smoke --cluster

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes)"
kds_cluster_up 3
three_nodes_ready() { [ "$(kd_kubectl get nodes -o name | wc -l)" -eq 3 ] && "${KDS_CLUSTER}" wait-ready 30 >/dev/null; }
check "3 nodes, all Ready" three_nodes_ready

phase "service-account tokens"
TOKEN="$(kd_kubectl -n "${KDS_NS}" create token default --duration=10m)" || die "kubectl create token default"
is_jwt() { [[ "${TOKEN}" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]]; }
check "kubectl create token returns a JWT" is_jwt
code="$(curl -sS -o /dev/null -w '%{http_code}' --cacert "${CA_FILE}" -H "Authorization: Bearer ${TOKEN}" \
  "${APISERVER_URL}/api/v1/namespaces/${KDS_NS}/pods")"
check "the token authenticates (RBAC answers 403, not 401): got ${code}" [ "${code}" = 403 ]

phase "order and payment on different nodes"
kds_apply_workload
must "order Running and Ready" kd_wait_pods_ready "${KDS_NS}" app=order 1 90
must "payment Running and Ready" kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
ORDER_POD="$(pod_of order)"; PAYMENT_POD="$(pod_of payment)"
ORDER_NODE="$(node_of "${ORDER_POD}")"; PAYMENT_NODE="$(node_of "${PAYMENT_POD}")"
note "order ${ORDER_POD} on ${ORDER_NODE}; payment ${PAYMENT_POD} on ${PAYMENT_NODE}"
different_nodes() { [ -n "${ORDER_NODE}" ] && [ -n "${PAYMENT_NODE}" ] && [ "${ORDER_NODE}" != "${PAYMENT_NODE}" ]; }
must "order and payment on different nodes" different_nodes

phase "order moved beside payment"
# nodeSelector is the story's patch; nodeName is what makes it happen despite
# payment's (symmetric) anti-affinity, see the header.
kds_patch_order "${PAYMENT_NODE}" nginx:1.25
kd_kubectl -n "${KDS_NS}" rollout status deployment/order --timeout=90s >/dev/null || die "order rollout did not finish"
must "order rolled out: one pod, Running and Ready, old pod gone" kd_wait_pods_ready "${KDS_NS}" app=order 1 60
NEW_ORDER_POD="$(pod_of order)"
note "order ${NEW_ORDER_POD} on $(node_of "${NEW_ORDER_POD}") ($(image_of "${NEW_ORDER_POD}"))"
order_beside_payment() {
  [ -n "${NEW_ORDER_POD}" ] && [ "${NEW_ORDER_POD}" != "${ORDER_POD}" ] &&
    [ "$(node_of "${NEW_ORDER_POD}")" = "${PAYMENT_NODE}" ] && [ "$(image_of "${NEW_ORDER_POD}")" = nginx:1.25 ]
}
payment_unmoved() {
  [ "$(pod_of payment)" = "${PAYMENT_POD}" ] && kd_pod_running_ready "${KDS_NS}" "${PAYMENT_POD}" &&
    [ "$(node_of "${PAYMENT_POD}")" = "${PAYMENT_NODE}" ]
}
check "new order pod runs on payment's node ${PAYMENT_NODE} with nginx:1.25" order_beside_payment
check "payment still Running on ${PAYMENT_NODE} (anti-affinity now violated)" payment_unmoved

phase "PDB blocks the eviction (429)"
kds_apply payment-pdb.yaml
check "disruption controller filled the PDB status (disruptionsAllowed 0)" kd_wait_for "PDB status" 60 kds_pdb_settled
code="$(kds_evict "${PAYMENT_POD}")"
note "eviction answered ${code}: $(jq -r '.message // empty' "${WORK}/body")"
refused_by_pdb() {
  [ "${code}" = 429 ] &&
    jq -e '[.details.causes[]? | select(.reason == "DisruptionBudget" or .type == "DisruptionBudget")] | length > 0' \
      "${WORK}/body" >/dev/null
}
check "eviction of payment refused with 429 (DisruptionBudget cause)" refused_by_pdb
check "payment pod untouched" kd_pod_running_ready "${KDS_NS}" "${PAYMENT_POD}"

phase "eviction without PDB, replacement elsewhere"
kd_kubectl -n "${KDS_NS}" delete pdb payment --wait=true >/dev/null
code=""
for _ in $(seq 1 20); do
  code="$(kds_evict "${PAYMENT_POD}")"
  [ "${code}" = 429 ] || break   # the deleted PDB may still be seen for a moment
  sleep 0.5
done
evicted() { [ "${code}" = 201 ] || [ "${code}" = 200 ]; }
check "eviction of payment accepted (HTTP ${code})" evicted
check "a replacement payment pod is Running and Ready, the evicted one is gone" \
  kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
NEW_PAYMENT_POD="$(pod_of payment)"; NEW_PAYMENT_NODE="$(node_of "${NEW_PAYMENT_POD}")"
note "payment ${NEW_PAYMENT_POD} on ${NEW_PAYMENT_NODE}"
replacement_elsewhere() {
  [ -n "${NEW_PAYMENT_POD}" ] && [ "${NEW_PAYMENT_POD}" != "${PAYMENT_POD}" ] &&
    [ -n "${NEW_PAYMENT_NODE}" ] && [ "${NEW_PAYMENT_NODE}" != "${PAYMENT_NODE}" ]
}
check "replacement scheduled on another node than order's (${PAYMENT_NODE})" replacement_elsewhere

phase "cluster down"
pids=()
for v in ETCD_PID APISERVER_PID CONTROLLER_MANAGER_PID SCHEDULER_PID KWOK_PID; do pids+=("${!v}"); done
check "cluster.sh down" quietly "${KDS_CLUSTER}" down
all_gone() {
  local p
  for p in "${pids[@]}"; do kds_gone "${p}" || return 1; done
  [ ! -e "${KDESCHED_CLUSTER_DIR}" ]
}
check "no cluster process left (${pids[*]}), directory removed" all_gone
end_phase
