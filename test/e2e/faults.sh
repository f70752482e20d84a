#!/usr/bin/env bash
# Checks that the fault helpers of scripts/cluster/cluster.sh do what they say,
# on a real cluster of its own (${KDESCHED_FAULTS_DIR:-/tmp/kdesched-faults.PID}):
#   restart-apiserver  drops an open watch; the apiserver comes back on the same port
#   pause/resume-apiserver  requests hang while paused, work after resume
#   compact-etcd       etcd refuses the old revision; after restart-apiserver --kill
#                      a watch and a list from the old resourceVersion get 410
#   restart-etcd       writes fail while etcd is down; its data and the apiserver survive
#   node-notready/node-ready  Ready=False (and stays so), not-ready taint, back
# A failed check is reported and the test goes on; the last line is "faults: N passed, N failed"
# (test/e2e/lib.sh); the cluster is torn down in every case.
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin faults --cluster

phase "up"
kds_cluster_up 2
check "a second up is a no-op" quietly "${KDS_CLUSTER}" up

phase "restart-apiserver"
url0="${APISERVER_URL}"
curl -sSN --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" --key "${ADMIN_KEY_FILE}" --max-time 300 \
  "${APISERVER_URL}/api/v1/namespaces/default/configmaps?watch=1" >"${WORK}/watch.out" 2>&1 7>&- 8>&- &
WATCH_PID=$!
KDS_EXTRA_PIDS+=("${WATCH_PID}")
sleep 1
check "watch is open" kds_alive "${WATCH_PID}"
t="$(kd_now_ms)"
"${KDS_CLUSTER}" restart-apiserver
note "restart took $(kd_elapsed "${t}")"
check "the open watch was dropped" kd_wait_for "watch to end" 10 kds_gone "${WATCH_PID}"
kd_env_load
check "apiserver back on the same URL (${url0})" [ "${APISERVER_URL}" = "${url0}" ]
check "kubectl works after the restart" kd_kubectl get ns default

phase "pause-apiserver / resume-apiserver"
"${KDS_CLUSTER}" pause-apiserver
hangs() { local rc=0; kds_api /readyz --max-time 2 >/dev/null 2>&1 || rc=$?; [ "${rc}" = 28 ]; }
check "a request hangs while paused (curl timeout)" hangs
"${KDS_CLUSTER}" resume-apiserver
ready() { [ "$(kds_api /readyz --max-time 5)" = 200 ]; }
check "ready again after resume" kd_wait_for "readyz" 30 ready

phase "compact-etcd, then restart-apiserver --kill"
kd_kubectl -n default create configmap faults --from-literal=v=1 >/dev/null
rv1="$(kd_kubectl -n default get configmap faults -o 'jsonpath={.metadata.resourceVersion}')"
for i in 2 3 4; do kd_kubectl -n default patch configmap faults -p "{\"data\":{\"v\":\"${i}\"}}" >/dev/null; done
"${KDS_CLUSTER}" compact-etcd
compacted_in_etcd() {
  ! "${KD_BIN_DIR}/etcdctl" --endpoints="${ETCD_ENDPOINT}" get --rev="${rv1}" /registry/configmaps/default/faults \
    >"${WORK}/etcdctl.out" 2>&1 && grep -q 'required revision has been compacted' "${WORK}/etcdctl.out"
}
check "etcd refuses reads at the old revision ${rv1}" compacted_in_etcd
# The watch cache still holds rv1; a restart (here a crash) starts a new cache
# at the current revision.
"${KDS_CLUSTER}" restart-apiserver --kill
watch_410() {
  kds_api "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv1}" --max-time 5 >/dev/null 2>&1 || true
  jq -e 'select(.type == "ERROR") | .object.code == 410' "${WORK}/body" >/dev/null
}
check "a watch from the old RV ${rv1} gets a 410 Expired ERROR event" watch_410
jq -r '"     " + .object.reason + ": " + .object.message' "${WORK}/body" || true
list_410() { [ "$(kds_api "/api/v1/namespaces/default/configmaps?resourceVersion=${rv1}&resourceVersionMatch=Exact")" = 410 ]; }
check "a list at the old RV ${rv1} (resourceVersionMatch=Exact) gets 410" list_410
jq -r '"     " + .reason + ": " + .message' "${WORK}/body" || true

phase "restart-etcd --kill --down 4"
kd_env_load  # the pids as they are now (the phase before restarted the apiserver)
etcd_pid0="${ETCD_PID}"
apiserver_pid0="${APISERVER_PID}"
"${KDS_CLUSTER}" restart-etcd --kill --down 4 >"${WORK}/restart-etcd.out" 2>&1 &
RESTART_PID=$!
KDS_EXTRA_PIDS+=("${RESTART_PID}")
etcd_down() { ! curl -fsS --max-time 1 "${ETCD_ENDPOINT}/health" >/dev/null 2>&1; }
check "etcd goes down" kd_wait_for "etcd down" 10 etcd_down
write_fails() { ! kd_kubectl -n default create configmap faults-down --request-timeout=2s >/dev/null 2>&1; }
check "a write fails while etcd is down" write_fails
check "restart-etcd exits 0" wait "${RESTART_PID}"
sed 's/^/     /' "${WORK}/restart-etcd.out"
kd_env_load
check "etcd has a new pid (${etcd_pid0} -> ${ETCD_PID})" [ "${ETCD_PID}" != "${etcd_pid0}" ]
check "the apiserver is the same process (${apiserver_pid0})" [ "${APISERVER_PID}" = "${apiserver_pid0}" ]
check "...and alive" kds_alive "${APISERVER_PID}"
data_kept() { [ "$(kd_kubectl -n default get configmap faults -o 'jsonpath={.data.v}')" = 4 ]; }
check "etcd's data survived (configmap faults v=4)" kd_wait_for "configmap readable" 30 data_kept
check "writes work again" kd_wait_for "a write" 30 kd_kubectl -n default create configmap faults-up

phase "node-notready / node-ready"
"${KDS_CLUSTER}" node-notready node1
not_ready() { [ "$(kd_kubectl get node node1 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = False ]; }
has_taint() { kd_kubectl get node node1 -o json | jq -e '[.spec.taints[]? | select(.key == "node.kubernetes.io/not-ready")] | length > 0' >/dev/null; }
check "node1 gets the node.kubernetes.io/not-ready taint" kd_wait_for "not-ready taint" 60 has_taint
sleep 5
check "node1 is still NotReady after 5 s (kwok does not revert it)" not_ready
check "node2 is still Ready" kd_node_ready node2
"${KDS_CLUSTER}" node-ready node1
no_taint() { ! has_taint; }
check "node1 Ready again and the taint removed" kd_wait_for "taint removal" 60 no_taint

phase "down"
pids=("${ETCD_PID}" "${APISERVER_PID}" "${CONTROLLER_MANAGER_PID}" "${SCHEDULER_PID}" "${KWOK_PID}")
check "cluster.sh down" quietly "${KDS_CLUSTER}" down
all_gone() { local p; for p in "${pids[@]}"; do kds_gone "${p}" || return 1; done; [ ! -e "${KDESCHED_CLUSTER_DIR}" ]; }
check "down stopped everything and removed the directory" all_gone
check "a second down is safe" quietly "${KDS_CLUSTER}" down
end_phase
