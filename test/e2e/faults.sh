#!/usr/bin/env bash
# Checks that the fault helpers of scripts/cluster/cluster.sh do what they say,
# on a real cluster of its own (${KDESCHED_FAULTS_DIR:-/tmp/kdesched-faults.PID}):
#   restart-apiserver  drops an open watch; the apiserver comes back on the same port
#   pause/resume-apiserver  requests hang while paused, work after resume
#   compact-etcd       etcd refuses the old revision; after restart-apiserver --kill
#                      a watch and a list from the old resourceVersion get 410
#   node-notready/node-ready  Ready=False (and stays so), not-ready taint, back
# Prints "faults: N passed, N failed"; the cluster is torn down in every case.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"
CLUSTER="${ROOT}/scripts/cluster/cluster.sh"
export KDESCHED_CLUSTER_DIR="${KDESCHED_FAULTS_DIR:-/tmp/kdesched-faults.$$}"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/kdesched-faults-work.XXXXXX")"
PASSED=0
FAILED=0
T0="$(kd_now_ms)"
WATCH_PID=""

pass() { PASSED=$((PASSED + 1)); echo "  ok    $*"; }
fail() { FAILED=$((FAILED + 1)); echo "  FAIL  $*" >&2; exit 1; }
check() { local d="$1"; shift; if "$@"; then pass "${d}"; else fail "${d}"; fi; }

finish() {
  local rc=$?
  trap - EXIT INT TERM
  set +eu  # clean up whatever state we are in
  exec 1>&7 2>&8  # the real stdout/stderr, even if we were inside a redirection
  [ "${rc}" -eq 0 ] || [ "${FAILED}" -gt 0 ] || { FAILED=$((FAILED + 1)); echo "  FAIL  aborted (exit ${rc})" >&2; }
  if [ -n "${WATCH_PID}" ]; then kill "${WATCH_PID}" 2>/dev/null || true; wait "${WATCH_PID}" 2>/dev/null || true; fi
  if [ -d "${KDESCHED_CLUSTER_DIR}" ]; then
    # A paused apiserver is resumed by down (SIGTERM + SIGCONT).
    "${CLUSTER}" down >&2 || echo "WARNING: cluster.sh down failed" >&2
  fi
  rm -rf "${WORK}"
  echo "   total: $(kd_elapsed "${T0}")"
  echo "faults: ${PASSED} passed, ${FAILED} failed"
  [ "${rc}" -eq 0 ] && [ "${FAILED}" -eq 0 ] || exit 1
}
exec 7>&1 8>&2
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

api() { # api PATH [curl args...]: prints the HTTP code, body in ${WORK}/body
  local path="$1"; shift
  curl -sS -o "${WORK}/body" -w '%{http_code}' --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" \
    --key "${ADMIN_KEY_FILE}" "$@" "${APISERVER_URL}${path}"
}
# Running and not a zombie (a stopped process lingers as one until init reaps it).
is_running() { [ -e "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

echo "== up"
check "cluster.sh up --nodes 2" "${CLUSTER}" up --nodes 2
kd_env_load
check "a second up is a no-op" "${CLUSTER}" up

echo "== restart-apiserver"
url0="${APISERVER_URL}"
curl -sSN --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" --key "${ADMIN_KEY_FILE}" --max-time 300 \
  "${APISERVER_URL}/api/v1/namespaces/default/configmaps?watch=1" >"${WORK}/watch.out" 2>&1 &
WATCH_PID=$!
sleep 1
check "watch is open" is_running "${WATCH_PID}"
t="$(kd_now_ms)"
"${CLUSTER}" restart-apiserver
echo "     restart took $(kd_elapsed "${t}")"
watch_ended() { ! is_running "${WATCH_PID}"; }
check "the open watch was dropped" kd_wait_for "watch to end" 10 watch_ended
WATCH_PID=""
kd_env_load
check "apiserver back on the same URL (${url0})" [ "${APISERVER_URL}" = "${url0}" ]
check "kubectl works after the restart" kd_kubectl get ns default

echo "== pause-apiserver / resume-apiserver"
"${CLUSTER}" pause-apiserver
hangs() { local rc=0; api /readyz --max-time 2 >/dev/null 2>&1 || rc=$?; [ "${rc}" = 28 ]; }
check "a request hangs while paused (curl timeout)" hangs
"${CLUSTER}" resume-apiserver
ready() { [ "$(api /readyz --max-time 5)" = 200 ]; }
check "ready again after resume" kd_wait_for "readyz" 30 ready

echo "== compact-etcd, then restart-apiserver --kill"
kd_kubectl -n default create configmap faults --from-literal=v=1 >/dev/null
rv1="$(kd_kubectl -n default get configmap faults -o 'jsonpath={.metadata.resourceVersion}')"
for i in 2 3 4; do kd_kubectl -n default patch configmap faults -p "{\"data\":{\"v\":\"${i}\"}}" >/dev/null; done
"${CLUSTER}" compact-etcd
compacted_in_etcd() {
  ! "${KD_BIN_DIR}/etcdctl" --endpoints="${ETCD_ENDPOINT}" get --rev="${rv1}" /registry/configmaps/default/faults \
    >"${WORK}/etcdctl.out" 2>&1 && grep -q 'required revision has been compacted' "${WORK}/etcdctl.out"
}
check "etcd refuses reads at the old revision ${rv1}" compacted_in_etcd
# The watch cache still holds rv1; a restart (here a crash) starts a new cache
# at the current revision.
"${CLUSTER}" restart-apiserver --kill
watch_410() {
  api "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rv1}" --max-time 5 >/dev/null 2>&1 || true
  jq -e 'select(.type == "ERROR") | .object.code == 410' "${WORK}/body" >/dev/null
}
check "a watch from the old RV ${rv1} gets a 410 Expired ERROR event" watch_410
jq -r '"     " + .object.reason + ": " + .object.message' "${WORK}/body" || true
list_410() { [ "$(api "/api/v1/namespaces/default/configmaps?resourceVersion=${rv1}&resourceVersionMatch=Exact")" = 410 ]; }
check "a list at the old RV ${rv1} (resourceVersionMatch=Exact) gets 410" list_410
jq -r '"     " + .reason + ": " + .message' "${WORK}/body" || true

echo "== node-notready / node-ready"
"${CLUSTER}" node-notready node1
not_ready() { [ "$(kd_kubectl get node node1 -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = False ]; }
has_taint() { kd_kubectl get node node1 -o json | jq -e '[.spec.taints[]? | select(.key == "node.kubernetes.io/not-ready")] | length > 0' >/dev/null; }
check "node1 gets the node.kubernetes.io/not-ready taint" kd_wait_for "not-ready taint" 60 has_taint
sleep 5
check "node1 is still NotReady after 5 s (kwok does not revert it)" not_ready
check "node2 is still Ready" kd_node_ready node2
"${CLUSTER}" node-ready node1
no_taint() { ! has_taint; }
check "node1 Ready again and the taint removed" kd_wait_for "taint removal" 60 no_taint

echo "== down"
pids=("${ETCD_PID}" "${APISERVER_PID}" "${CONTROLLER_MANAGER_PID}" "${SCHEDULER_PID}" "${KWOK_PID}")
"${CLUSTER}" down
all_gone() { local p; for p in "${pids[@]}"; do ! is_running "${p}" || return 1; done; [ ! -e "${KDESCHED_CLUSTER_DIR}" ]; }
check "down stopped everything and removed the directory" all_gone
check "a second down is safe" "${CLUSTER}" down
