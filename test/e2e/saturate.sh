#!/usr/bin/env bash
# Amounts beyond int64 milli-units, end to end on the real control plane (scripts/cluster/cluster.sh):
# the API server accepts a pod requesting 10P of memory (10^19 milli-units) and a node advertising
# cpu 1e15 and memory 1E (10^21 milli-units; not more: kube-scheduler itself overflows past int64
# units and would leave the pod Pending). kdesched once refused to decode them, marked the resource
# stale and ran no cycle at all while they existed (a one-shot exited 1, a live plan 2): anyone who may create a
# pod could switch it off. Now the amounts saturate (docs/decoding.md) and:
#
#  1. the API server holds the objects: their figures are printed as stored.
#  2. `kdesched plan` against the live cluster: exit 0, payment planned, and the output names the
#     saturated pod and node; `--explain tenant/hog` says LowNodeUtilization left its node out.
#  3. one-shot: payment (order/payment violation, test/e2e/manifests/order-payment.yaml) evicted,
#     exit 0, each saturated object named once at warning level, no "cache stale".
#  4. daemon (--descheduling-interval 3s): the violation made again is evicted, cycles keep running,
#     each saturated object is still named once (not every cycle or relist).
#
# Own cluster directory (${KDESCHED_SATURATE_DIR:-/tmp/kdesched-saturate.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "saturate: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin saturate --cluster
kds_require_tools

# Anti-affinity (the story) and LowNodeUtilization (which must leave the saturated node out).
POLICY="${WORK}/policy.yaml"
cat >"${POLICY}" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: default
  pluginConfig:
  - name: DefaultEvictor
    args: {nodeFit: true}
  - name: RemovePodsViolatingInterPodAntiAffinity
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20, pods: 20}
      targetThresholds: {cpu: 50, memory: 50, pods: 50}
  plugins:
    deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity]}
    balance: {enabled: [LowNodeUtilization]}
YAML
SATURATED_WARN='level=warn msg="an amount beyond what kdesched represents is saturated'

# ---------------------------------------------------------------------------
phase "cluster up: 3 kwok nodes and virtual1 (cpu 1e15, memory 1E)"
{
  for i in 1 2 3; do printf 'node%d - cpu=4,memory=8Gi,pods=110 -\n' "${i}"; done
  printf 'virtual1 type=virtual cpu=1e15,memory=1E,pods=110 -\n'
} >"${WORK}/nodes.spec"
must "cluster.sh up --node-spec (4 nodes)" quietly "${KDS_CLUSTER}" up --node-spec "${WORK}/nodes.spec"
kd_env_load
note "virtual1 allocatable as stored: $(kd_kubectl get node virtual1 -o jsonpath='{.status.allocatable}')"

phase "a tenant's pod requesting 10P of memory; order and payment"
kd_kubectl create namespace tenant >/dev/null
must "pod tenant/hog (requests memory 10P) created" quietly kd_kubectl -n tenant apply -f - <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: hog, labels: {app: hog}}
spec:
  containers:
  - name: c
    image: nginx:1.25
    resources: {requests: {memory: 10P, cpu: 100m}}
YAML
must "tenant/hog Running (only virtual1 has room)" kd_wait_pods_ready tenant app=hog 1 60
note "tenant/hog on $(kd_kubectl -n tenant get pod hog -o jsonpath='{.spec.nodeName}'), requests as stored: $(
  kd_kubectl -n tenant get pod hog -o jsonpath='{.spec.containers[0].resources.requests}')"
must "Deployments order and payment Running" kds_create_workload
must "violation made (order beside payment)" kds_violate
note "order ${ORDER_POD} and payment ${PAYMENT_POD} on ${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "1. kdesched plan against the live cluster"
t0="$(kd_now_ms)"
rc=0
timeout 60 "${KDESCHED}" plan --kubeconfig "${KUBECONFIG}" --policy-config-file "${POLICY}" \
  --explain tenant/hog >"${WORK}/plan.out" 2>"${WORK}/plan.err" || rc=$?
timing "live plan" "$(kd_elapsed "${t0}")"
sed 's/^/     | /' "${WORK}/plan.out" | cut -c1-260
check "exit 0 (got ${rc}; it was 2)" [ "${rc}" = 0 ]
check "payment planned for eviction" grep -q "${PAYMENT_POD}  *${PAYMENT_NODE}  *RemovePodsViolatingInterPodAntiAffinity" "${WORK}/plan.out"
check "the output names the saturated pod and field" grep -q "saturated: pod tenant/hog requests memory" "${WORK}/plan.out"
check "the output names the saturated node and fields" grep -q "saturated: node virtual1 allocatable memory" "${WORK}/plan.out"
check "--explain: LowNodeUtilization left hog's node out, its usage unknown" \
  grep -q "LowNodeUtilization.*the usage of its node virtual1 is unknown" "${WORK}/plan.out"

# ---------------------------------------------------------------------------
phase "2. one-shot: payment evicted, exit 0"
kds_run oneshot 60 --policy-config-file "${POLICY}" --descheduling-interval 0
timing "one-shot: start to exit" "$(ms_str "${KDS_RUN_MS}")"
check "exit 0 (got ${KDS_RC}; it was 1)" [ "${KDS_RC}" = 0 ]
check "payment ${PAYMENT_POD} evicted" kds_log_has oneshot "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} "
check "no cache stale" kds_log_lacks oneshot 'cache stale'
check "tenant/hog named once, with the field" \
  [ "$(kds_log_count oneshot "${SATURATED_WARN}.* object=tenant/hog saturated=\"requests memory\"")" = 1 ]
check "virtual1 named once, with the fields" \
  [ "$(kds_log_count oneshot "${SATURATED_WARN}.* object=virtual1 saturated=\"allocatable memory\"")" = 1 ]
note "$(grep -m2 'is saturated' "$(kds_log oneshot)" | cut -c1-300)"
note "$(grep -m1 'msg="cycle finished"' "$(kds_log oneshot)" | cut -c1-300)"

# ---------------------------------------------------------------------------
phase "3. daemon: cycles keep running, the violation made again is evicted"
must "replacement payment Running elsewhere" \
  kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
kds_start daemon --policy-config-file "${POLICY}" --descheduling-interval 3s
DAEMON_PID="${KDS_PID}"
check "first cycle" kds_wait_log daemon 'msg="cycle finished"' 30
must "violation made again" kds_violate
check "payment ${PAYMENT_POD} evicted by the daemon" kds_wait_log daemon "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " 30
check "cycles keep running (5 finished)" kds_wait_log daemon 'msg="cycle finished"' 30 5
cycles="$(kds_log_count daemon 'msg="cycle finished"')"
note "cycles finished: ${cycles}"
check "no cache stale, no skipped cycle" kds_log_lacks daemon 'cache stale|skipping the cycle'
check "tenant/hog named once in ${cycles} cycles" [ "$(kds_log_count daemon "${SATURATED_WARN}.* object=tenant/hog ")" = 1 ]
check "virtual1 named once in ${cycles} cycles" [ "$(kds_log_count daemon "${SATURATED_WARN}.* object=virtual1 ")" = 1 ]
kds_stop "${DAEMON_PID}" TERM 15 || true
check "SIGTERM: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
