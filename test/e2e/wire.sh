#!/usr/bin/env bash
# Protobuf on the wire against the real API server: its pods read as protobuf decode to exactly the
# objects their JSON decodes to, and kdesched's cache reads them in protobuf (fewer bytes), with the
# same decisions.
#
#  1. A cluster of varied pods: test/e2e/manifests/wire-pods.yaml (owners, labels, the annotations
#     kdesched honours, a PriorityClass, a RuntimeClass's overhead, init and sidecar containers,
#     requests and limits, node selector and affinity with matchFields, pod (anti-)affinity with
#     namespace selectors and match/mismatch label keys, tolerations, spread constraints with every
#     policy, emptyDir, hostPath, PVC and ephemeral volumes, pod-level resources; Running by kwok,
#     Pending for good, a terminating pod, a failed one with container statuses patched in) and
#     KDESCHED_WIRE_PODS (2,000) generated pods (kdesched-gen --kwok, bench/load_cluster.py). The
#     pod-level requests the API server defaults are those kdesched's defaulting gives.
#  2. One LIST of pods at one resourceVersion (resourceVersionMatch=Exact), asked in JSON and in
#     protobuf (Content-Type application/vnd.kubernetes.protobuf, "k8s\0"): kdesched-wire-compare
#     decodes both as the reflector does and finds every pod identical, field by field; the same
#     for the nodes (kwok's and a plain tainted one).
#  3. The same for a watch-list stream (sendInitialEvents, length-framed protobuf events, its
#     closing bookmark).
#  4. kdesched one-shot dry runs, watch-list and paged LIST, protobuf (the default) and JSON
#     (--kube-api-content-type application/json): "reflector listed ... wire=protobuf bytes=N" for
#     pods and nodes (namespaces stay JSON);
#     the same pods planned for eviction either way. The bytes are printed as timings.
#
# Own cluster directory (${KDESCHED_WIRE_DIR:-/tmp/kdesched-wire.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}, the comparer kdesched-wire-compare and kdesched-gen beside it.
# Prints "wire: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin wire --cluster
kds_require_tools
BIN_DIR="$(dirname "${KDESCHED}")"
COMPARE="${BIN_DIR}/kdesched-wire-compare"
GEN="${BIN_DIR}/kdesched-gen"
PODS="${KDESCHED_WIRE_PODS:-2000}"
[ -x "${COMPARE}" ] || die "no ${COMPARE} (build the kdesched-wire-compare target)"
[ -x "${GEN}" ] || die "no ${GEN} (build the kdesched-gen target)"
PROTOBUF=application/vnd.kubernetes.protobuf

# api_get FILE ACCEPT PATH: the admin's GET, body to FILE, headers to FILE.headers; the HTTP code.
api_get() {
  # Not curl's user agent: the API server pretty-prints JSON for curl, which would inflate its bytes.
  curl -sS -A kdesched-wire-e2e -o "$1" -D "$1.headers" -w '%{http_code}' --cacert "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" \
    --key "${ADMIN_KEY_FILE}" -H "Accept: $2" "${APISERVER_URL}$3"
}
content_type() { sed -n 's/^[Cc]ontent-[Tt]ype: *//p' "$1.headers" | tr -d '\r'; }
# compare MODE NAME: kdesched-wire-compare on WORK/NAME.json and WORK/NAME.pb, its output kept.
compare() { "${COMPARE}" "$1" "${WORK}/$2.json" "${WORK}/$2.pb" >"${WORK}/$2.compare" 2>&1; }
show_compare() { tail -n 20 "${WORK}/$1.compare" | sed 's/^/       /'; }
# listed_bytes NAME: bytes=N of the run's "reflector listed" line for pods.
listed_bytes() { grep 'msg="reflector listed" resource=pods ' "$(kds_log "$1")" | sed -n 's/.* bytes=\([0-9]*\).*/\1/p'; }
# evicted NAME: the pods the run planned for eviction (a dry run's "Evicted pod in dry run mode").
evicted() { sed -n 's/.*msg="Evicted pod[^"]*" pod=\([^ ]*\) .*/\1/p' "$(kds_log "$1")" | sort; }

# ---------------------------------------------------------------------------
phase "1. varied pods, and ${PODS} generated ones"
kds_cluster_up 3
# First: load_cluster.py waits until every pod of the cluster is Running, which these are.
t0="$(kd_now_ms)"
must "kdesched-gen: ${PODS} pods" quietly "${GEN}" --nodes 20 --pods "${PODS}" --namespaces 4 --kwok --format ndjson \
  -o "${WORK}/gen.ndjson"
must "load_cluster.py: every generated pod Running" quietly python3 "${ROOT}/bench/load_cluster.py" \
  --server "${APISERVER_URL}" --ca "${CA_FILE}" --cert "${ADMIN_CERT_FILE}" --key "${ADMIN_KEY_FILE}" "${WORK}/gen.ndjson"
timing "generated pods loaded" "$(kd_elapsed "${t0}")"
kd_kubectl create -f - >/dev/null <<'JSON' || die "creating plain-node"
{"apiVersion": "v1", "kind": "Node",
 "metadata": {"name": "plain-node", "labels": {"kubernetes.io/hostname": "plain-node", "type": "plain"}},
 "spec": {"taints": [{"key": "plain", "effect": "NoSchedule"}]}}
JSON
must "apply wire-pods.yaml" quietly kd_kubectl apply -f "${KDS_MANIFESTS}/wire-pods.yaml"
# defaultPodRequests: memory from the containers' sum (64Mi), cpu as written; kdesched's defaulting
# (pkg/api/scheduling.cpp defaultPodLevelRequests) gives the same for a manifest read from a file.
check "pod-level requests as the API server defaulted them: cpu 600m, memory 64Mi" test \
  "$(kd_kubectl -n wire get pod pod-level -o 'jsonpath={.spec.resources.requests.cpu} {.spec.resources.requests.memory}')" = "600m 64Mi"
must "rich: 2 pods Running and Ready" kd_wait_pods_ready wire app=rich 2 90
must "failed pod: status patched in" quietly kd_kubectl -n wire patch pod failed --subresource=status --type=merge -p '
{"status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory.",
  "startTime": "2026-01-02T03:04:05Z",
  "conditions": [{"type": "Ready", "status": "False", "reason": "PodFailed", "lastTransitionTime": "2026-01-02T03:05:00Z"},
                 {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}],
  "containerStatuses": [
    {"name": "main", "image": "busybox", "imageID": "", "ready": false, "restartCount": 5,
     "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}},
     "allocatedResources": {"cpu": "1500m"}, "resources": {"requests": {"cpu": "1"}}},
    {"name": "second", "image": "busybox", "imageID": "", "ready": false, "restartCount": 0,
     "state": {"waiting": {"reason": "ContainerCreating"}}}],
  "initContainerStatuses": [
    {"name": "init", "image": "busybox", "imageID": "", "ready": false, "restartCount": 2,
     "state": {"waiting": {"reason": "CrashLoopBackOff"}}, "resources": {"requests": {"cpu": "100m"}}}]}}'
must "terminating pod deleted (held)" quietly kd_kubectl -n wire delete pod terminating --wait=false
terminating() { [ -n "$(kd_kubectl -n wire get pod terminating -o jsonpath='{.metadata.deletionTimestamp}')" ]; }
must "terminating pod has its deletionTimestamp" kd_wait_for "deletionTimestamp" 30 terminating

# ---------------------------------------------------------------------------
phase "2. one LIST at one resourceVersion, JSON and protobuf: identical pods"
code="$(api_get "${WORK}/rv.json" application/json '/api/v1/pods?limit=1')"
must "a LIST for the resourceVersion (${code})" [ "${code}" = 200 ]
RV="$(jq -r .metadata.resourceVersion "${WORK}/rv.json")"
q="/api/v1/pods?resourceVersion=${RV}&resourceVersionMatch=Exact"
check "JSON LIST 200" [ "$(api_get "${WORK}/list.json" application/json "${q}")" = 200 ]
check "protobuf LIST 200" [ "$(api_get "${WORK}/list.pb" "${PROTOBUF}, application/json" "${q}")" = 200 ]
check "protobuf LIST answered in protobuf ($(content_type "${WORK}/list.pb"))" \
  [ "$(content_type "${WORK}/list.pb")" = "${PROTOBUF}" ]
check "every pod of the LIST decodes alike" compare list list
show_compare list
summary="$(tail -n 1 "${WORK}/list.compare")"
total="$(sed -n 's/^pods=\([0-9]*\) .*/\1/p' <<<"${summary}")"
check "the LIST held every pod (${total:-0} >= ${PODS})" [ "${total:-0}" -ge "${PODS}" ]
q="/api/v1/nodes?resourceVersion=${RV}&resourceVersionMatch=Exact"
check "JSON LIST of nodes 200" [ "$(api_get "${WORK}/nodes.json" application/json "${q}")" = 200 ]
check "protobuf LIST of nodes 200" [ "$(api_get "${WORK}/nodes.pb" "${PROTOBUF}, application/json" "${q}")" = 200 ]
check "every node of the LIST decodes alike" "${COMPARE}" list "${WORK}/nodes.json" "${WORK}/nodes.pb" Node
timing "LIST of ${total:-?} pods" "$(sed -n 's/.*\(json_bytes=[0-9]* protobuf_bytes=[0-9]* ratio=[0-9.]*\).*/\1/p' <<<"${summary}")"

# ---------------------------------------------------------------------------
phase "3. a watch-list stream, JSON and protobuf: identical pods and closing bookmark"
q="/api/v1/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
q+="&resourceVersion=${RV}&timeoutSeconds=2"
check "JSON watch-list 200" [ "$(api_get "${WORK}/stream.json" application/json "${q}")" = 200 ]
check "protobuf watch-list 200" [ "$(api_get "${WORK}/stream.pb" "${PROTOBUF}, application/json" "${q}")" = 200 ]
check "protobuf watch-list framed ($(content_type "${WORK}/stream.pb"))" \
  [ "$(content_type "${WORK}/stream.pb")" = "${PROTOBUF};stream=watch" ]
check "every event of the stream decodes alike" compare watch stream
show_compare stream
check "the stream ended its initial events (one closing bookmark each)" \
  grep -q 'initial_events_end=1 differences=0' "${WORK}/stream.compare"
timing "watch-list stream" "$(sed -n 's/.*\(json_bytes=[0-9]* protobuf_bytes=[0-9]* ratio=[0-9.]*\).*/\1/p' \
  "${WORK}/stream.compare")"

# ---------------------------------------------------------------------------
phase "4. kdesched reads pods in protobuf, and decides the same"
for via in watch-list list; do
  extra=(--descheduling-interval 0 --dry-run -v 2)
  [ "${via}" = list ] && extra+=(--watch-list=false)
  kds_run "proto-${via}" 90 "${extra[@]}"
  check "${via}, protobuf: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
  check "${via}, protobuf: pods listed wire=protobuf" \
    kds_log_has "proto-${via}" "msg=\"reflector listed\" resource=pods via=${via} .*wire=protobuf"
  check "${via}, protobuf: nodes too" kds_log_has "proto-${via}" 'msg="reflector listed" resource=nodes .*wire=protobuf'
  check "${via}, protobuf: namespaces still JSON" \
    kds_log_has "proto-${via}" 'msg="reflector listed" resource=namespaces .*wire=json'
  kds_run "json-${via}" 90 "${extra[@]}" --kube-api-content-type application/json
  check "${via}, JSON: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
  check "${via}, JSON: pods listed wire=json" \
    kds_log_has "json-${via}" "msg=\"reflector listed\" resource=pods via=${via} .*wire=json"
  n="$(evicted "proto-${via}" | wc -l)"
  check "${via}: the same pods planned for eviction (${n}, the generated violations)" \
    bash -c '[ "$1" -gt 0 ] && [ "$2" = "$3" ]' _ "${n}" "$(evicted "proto-${via}")" "$(evicted "json-${via}")"
  pb="$(listed_bytes "proto-${via}")"; js="$(listed_bytes "json-${via}")"
  check "${via}: protobuf bytes ${pb:-?} < JSON bytes ${js:-?}" [ "${pb:-0}" -gt 0 ] && [ "${pb:-0}" -lt "${js:-0}" ]
  timing "kdesched pods ${via}: JSON / protobuf bytes" "${js:-?} / ${pb:-?}"
done
check "no warning or error in the protobuf runs" bash -c \
  "! grep -h 'level=\(warn\|error\)' \"\$1\" \"\$2\" | grep -v 'ignoring'" _ "$(kds_log proto-watch-list)" "$(kds_log proto-list)"
