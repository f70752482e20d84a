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
# Uses its own cluster directory (${KDESCHED_SMOKE_DIR:-/tmp/kdesched-smoke.PID}),
# so a developer's cluster in /tmp/kdesched-cluster is left alone. Prints each
# phase's duration and a final "smoke: N passed, N failed" line; exits non-zero
# on the first failure (the cluster is torn down in every case).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"
CLUSTER="${ROOT}/scripts/cluster/cluster.sh"
export KDESCHED_CLUSTER_DIR="${KDESCHED_SMOKE_DIR:-/tmp/kdesched-smoke.$$}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kdesched-smoke-work.XXXXXX")"
NS=default
PASSED=0
FAILED=0
PHASES=()
PHASE_NAME=""
PHASE_T0=0
T0="$(kd_now_ms)"

pass() { PASSED=$((PASSED + 1)); echo "  ok    $*"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAIL  $*" >&2; exit 1; }
# check DESCRIPTION COMMAND...: one counted check.
check() { local d="$1"; shift; if "$@"; then pass "${d}"; else fail "${d}"; fi; }

phase() {
  end_phase
  PHASE_NAME="$1"; PHASE_T0="$(kd_now_ms)"
  echo "== ${PHASE_NAME}"
}
end_phase() {
  [ -n "${PHASE_NAME}" ] || return 0
  local took; took="$(kd_elapsed "${PHASE_T0}")"
  PHASES+=("$(printf '%-46s %s' "${PHASE_NAME}" "${took}")")
  echo "   (${PHASE_NAME}: ${took})"
  PHASE_NAME=""
}

finish() {
  local rc=$?
  trap - EXIT INT TERM
  set +eu  # clean up whatever state we are in
  exec 1>&7 2>&8  # the real stdout/stderr, even if we were inside a redirection
  [ "${rc}" -eq 0 ] || [ "${FAILED}" -gt 0 ] || { FAILED=$((FAILED + 1)); echo "  FAIL  aborted (exit ${rc})" >&2; }
  if [ "${rc}" -ne 0 ] && [ -n "${PHASE_NAME}" ]; then
    PHASES+=("$(printf '%-46s %s (failed)' "${PHASE_NAME}" "$(kd_elapsed "${PHASE_T0}")")")
  fi
  if [ -d "${KDESCHED_CLUSTER_DIR}" ]; then
    if [ "${rc}" -ne 0 ] && [ -d "${KDESCHED_CLUSTER_DIR}/logs" ]; then
      echo "--- state at failure" >&2
      if [ -n "${KUBECONFIG:-}" ]; then
        kd_kubectl --request-timeout=5s get nodes,pods,pdb -o wide >&2 2>/dev/null
      fi
      for l in "${KDESCHED_CLUSTER_DIR}"/logs/*.log; do
        echo "--- tail ${l}" >&2; tail -n 15 "${l}" >&2 || true
      done
    fi
    "${CLUSTER}" down >&2 || echo "WARNING: cluster.sh down failed" >&2
  fi
  rm -rf "${WORK}"
  echo "== phase durations"
  printf '   %s\n' "${PHASES[@]+"${PHASES[@]}"}"
  echo "   total: $(kd_elapsed "${T0}")"
  echo "smoke: ${PASSED} passed, ${FAILED} failed"
  [ "${rc}" -eq 0 ] && [ "${FAILED}" -eq 0 ] || exit 1
}
exec 7>&1 8>&2
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------
# helpers

# pod_of APP: name of the single non-terminating pod with app=APP.
pod_of() {
  kd_kubectl -n "${NS}" get pods -l "app=$1" -o json |
    jq -r '[.items[] | select(.metadata.deletionTimestamp == null)] | if length == 1 then .[0].metadata.name else empty end'
}
node_of() { kd_kubectl -n "${NS}" get pod "$1" -o 'jsonpath={.spec.nodeName}'; }
image_of() { kd_kubectl -n "${NS}" get pod "$1" -o 'jsonpath={.spec.containers[0].image}'; }

# evict POD: POSTs a policy/v1 Eviction with the admin client certificate;
# prints the HTTP status code, keeps the body in ${WORK}/evict.json.
evict() {
  curl -sS -o "${WORK}/evict.json" -w '%{http_code}' \
    --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" --key "${ADMIN_KEY_FILE}" \
    -H 'Content-Type: application/json' -X POST \
    --data "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"${NS}\"}}" \
    "${APISERVER_URL}/api/v1/namespaces/${NS}/pods/$1/eviction"
}

pdb_settled() {
  kd_kubectl -n "${NS}" get pdb payment -o json | jq -e '
    .status.observedGeneration == .metadata.generation and .status.disruptionsAllowed == 0
    and .status.currentHealthy == 1 and .status.desiredHealthy == 1 and .status.expectedPods == 1' >/dev/null
}

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes)"
check "cluster.sh up --nodes 3" "${CLUSTER}" up --nodes 3
kd_env_load
three_nodes_ready() { [ "$(kd_kubectl get nodes -o name | wc -l)" -eq 3 ] && "${CLUSTER}" wait-ready 30 >/dev/null; }
check "3 nodes, all Ready" three_nodes_ready

phase "service-account tokens"
TOKEN="$(kd_kubectl -n "${NS}" create token default --duration=10m)" || fail "kubectl create token default"
is_jwt() { [[ "${TOKEN}" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]]; }
check "kubectl create token returns a JWT" is_jwt
code="$(curl -sS -o /dev/null -w '%{http_code}' --cacert "${CA_FILE}" -H "Authorization: Bearer ${TOKEN}" \
  "${APISERVER_URL}/api/v1/namespaces/${NS}/pods")"
check "the token authenticates (RBAC answers 403, not 401): got ${code}" [ "${code}" = 403 ]

phase "order and payment on different nodes"
kd_kubectl -n "${NS}" apply -f - >/dev/null <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: order
  labels: {app: order}
spec:
  replicas: 1
  selector:
    matchLabels: {app: order}
  template:
    metadata:
      labels: {app: order}
    spec:
      containers:
      - name: order
        image: nginx:1.24
        resources:
          requests: {cpu: 100m, memory: 256Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payment
  labels: {app: payment}
spec:
  replicas: 1
  selector:
    matchLabels: {app: payment}
  template:
    metadata:
      labels: {app: payment}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels: {app: order}
            topologyKey: kubernetes.io/hostname
      containers:
      - name: payment
        image: nginx:1.24
        resources:
          requests: {cpu: 100m, memory: 256Mi}
EOF
check "order Running and Ready" kd_wait_pods_ready "${NS}" app=order 1 90
check "payment Running and Ready" kd_wait_pods_ready "${NS}" app=payment 1 90
ORDER_POD="$(pod_of order)"; PAYMENT_POD="$(pod_of payment)"
ORDER_NODE="$(node_of "${ORDER_POD}")"; PAYMENT_NODE="$(node_of "${PAYMENT_POD}")"
echo "     order ${ORDER_POD} on ${ORDER_NODE}; payment ${PAYMENT_POD} on ${PAYMENT_NODE}"
different_nodes() { [ -n "${ORDER_NODE}" ] && [ -n "${PAYMENT_NODE}" ] && [ "${ORDER_NODE}" != "${PAYMENT_NODE}" ]; }
check "order and payment on different nodes" different_nodes

phase "order moved beside payment"
# nodeSelector is the story's patch; nodeName is what makes it happen despite
# payment's (symmetric) anti-affinity, see the header.
kd_kubectl -n "${NS}" patch deployment order --type=strategic -p "$(jq -cn --arg n "${PAYMENT_NODE}" '
  {spec: {template: {spec: {nodeSelector: {"kubernetes.io/hostname": $n}, nodeName: $n,
    containers: [{name: "order", image: "nginx:1.25",
                  resources: {requests: {cpu: "200m", memory: "512Mi"}}}]}}}}')" >/dev/null
kd_kubectl -n "${NS}" rollout status deployment/order --timeout=90s >/dev/null || fail "order rollout did not finish"
check "order rolled out: one pod, Running and Ready, old pod gone" kd_wait_pods_ready "${NS}" app=order 1 60
NEW_ORDER_POD="$(pod_of order)"
echo "     order ${NEW_ORDER_POD} on $(node_of "${NEW_ORDER_POD}") ($(image_of "${NEW_ORDER_POD}"))"
order_beside_payment() {
  [ -n "${NEW_ORDER_POD}" ] && [ "${NEW_ORDER_POD}" != "${ORDER_POD}" ] &&
    [ "$(node_of "${NEW_ORDER_POD}")" = "${PAYMENT_NODE}" ] && [ "$(image_of "${NEW_ORDER_POD}")" = nginx:1.25 ]
}
payment_unmoved() {
  [ "$(pod_of payment)" = "${PAYMENT_POD}" ] && kd_pod_running_ready "${NS}" "${PAYMENT_POD}" &&
    [ "$(node_of "${PAYMENT_POD}")" = "${PAYMENT_NODE}" ]
}
check "new order pod runs on payment's node ${PAYMENT_NODE} with nginx:1.25" order_beside_payment
check "payment still Running on ${PAYMENT_NODE} (anti-affinity now violated)" payment_unmoved

phase "PDB blocks the eviction (429)"
kd_kubectl -n "${NS}" apply -f - >/dev/null <<'EOF'
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: payment
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: payment}
EOF
check "disruption controller filled the PDB status (disruptionsAllowed 0)" kd_wait_for "PDB status" 60 pdb_settled
code="$(evict "${PAYMENT_POD}")"
echo "     eviction answered ${code}: $(jq -r '.message // empty' "${WORK}/evict.json")"
refused_by_pdb() {
  [ "${code}" = 429 ] &&
    jq -e '[.details.causes[]? | select(.reason == "DisruptionBudget" or .type == "DisruptionBudget")] | length > 0' \
      "${WORK}/evict.json" >/dev/null
}
check "eviction of payment refused with 429 (DisruptionBudget cause)" refused_by_pdb
check "payment pod untouched" kd_pod_running_ready "${NS}" "${PAYMENT_POD}"

phase "eviction without PDB, replacement elsewhere"
kd_kubectl -n "${NS}" delete pdb payment --wait=true >/dev/null
code=""
for _ in $(seq 1 20); do
  code="$(evict "${PAYMENT_POD}")"
  [ "${code}" = 429 ] || break   # the deleted PDB may still be seen for a moment
  sleep 0.5
done
evicted() { [ "${code}" = 201 ] || [ "${code}" = 200 ]; }
check "eviction of payment accepted (HTTP ${code})" evicted
check "a replacement payment pod is Running and Ready, the evicted one is gone" \
  kd_wait_pods_ready "${NS}" app=payment 1 90
NEW_PAYMENT_POD="$(pod_of payment)"; NEW_PAYMENT_NODE="$(node_of "${NEW_PAYMENT_POD}")"
echo "     payment ${NEW_PAYMENT_POD} on ${NEW_PAYMENT_NODE}"
replacement_elsewhere() {
  [ -n "${NEW_PAYMENT_POD}" ] && [ "${NEW_PAYMENT_POD}" != "${PAYMENT_POD}" ] &&
    [ -n "${NEW_PAYMENT_NODE}" ] && [ "${NEW_PAYMENT_NODE}" != "${PAYMENT_NODE}" ]
}
check "replacement scheduled on another node than order's (${PAYMENT_NODE})" replacement_elsewhere

phase "cluster down"
pids=()
for v in ETCD_PID APISERVER_PID CONTROLLER_MANAGER_PID SCHEDULER_PID KWOK_PID; do pids+=("${!v}"); done
"${CLUSTER}" down >/dev/null || fail "cluster.sh down"
all_gone() {
  local p
  # A stopped process may linger a moment as a zombie until init reaps it.
  for p in "${pids[@]}"; do
    [ ! -e "/proc/${p}" ] || grep -q '^State:[[:space:]]*Z' "/proc/${p}/status" 2>/dev/null || return 1
  done
  [ ! -e "${KDESCHED_CLUSTER_DIR}" ]
}
check "no cluster process left (${pids[*]}), directory removed" all_gone
end_phase
