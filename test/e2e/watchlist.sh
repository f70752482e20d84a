#!/usr/bin/env bash
# kdesched's cache sync by watch-list (sendInitialEvents, KEP-3157) against the real control plane,
# with the gate on (kube-apiserver 1.36's default) and off. The apiserver's audit log (list and
# watch of pods, Metadata) tells what kdesched asked for, independently of kdesched's own log:
#
#  1. gate on: a one-shot run streams pods by one watch with sendInitialEvents=true,
#     resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true and no resourceVersion, sends no
#     LIST of pods, logs "reflector listed ... via=watch-list" for every resource, evicts payment.
#  2. gate on, daemon: the watch-list's stream goes on as the watch (the audit shows that one watch
#     of pods and no other), and a violation made after the sync is evicted from what it carried.
#  3. the switch: --watch-list=false, and KUBE_FEATURE_WatchListClient=false as client-go reads it,
#     each make a dry run list pods in pages (limit=500) and ask for no watch-list.
#  4. gate off (restart-apiserver --apiserver-arg=--feature-gates=WatchList=false): the API server
#     answers the watch-list 422; the one-shot run says so once (info, with the server's reason),
#     lists in pages and evicts payment.
#
# Own cluster directory (${KDESCHED_WATCHLIST_DIR:-/tmp/kdesched-watchlist.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "watchlist: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin watchlist --cluster
kds_require_tools

AUDIT="${WORK}/audit.log"
cat >"${WORK}/audit-policy.yaml" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [list, watch]
  resources: [{group: "", resources: [pods]}]
- level: None
YAML

# audit_since LINE: kdesched's pod requests from audit line LINE (1-based) on, as "VERB CODE URI"
# (a watch twice: when it starts and when it ends; a refused one once, at its end).
audit_since() {
  tail -n "+$1" "${AUDIT}" 2>/dev/null |
    jq -r 'select(.userAgent | startswith("kdesched/")) | "\(.verb) \(.responseStatus.code // "-") \(.requestURI)"'
}
audit_next() { echo $(( $(wc -l <"${AUDIT}") + 1 )); }
audit_has() { audit_since "$1" | grep -Eq -- "$2"; }
audit_lacks() { ! audit_since "$1" | grep -Eq -- "$2"; }
audit_show() { audit_since "$1" | sort -u | sed 's/^/       audit: /'; }
WATCH_LIST='^watch 200 /api/v1/pods\?(.*&)?sendInitialEvents=true'
PAGED_LIST='^list 200 /api/v1/pods\?limit=500$'
# The watch-list as client-go asks for it: the newest state (no resourceVersion), bookmarks.
audit_watch_list_as_client_go() {
  local w
  w="$(audit_since "$1" | grep -E "${WATCH_LIST}" | head -n 1)"
  [[ "${w}" == *resourceVersionMatch=NotOlderThan* && "${w}" == *allowWatchBookmarks=true* ]] &&
    ! grep -Eq '[?&]resourceVersion=' <<<"${w}"
}

phase "cluster up (3 kwok nodes, audit of pod lists and watches), order beside payment"
must "cluster.sh up --nodes 3 with the audit log" quietly "${KDS_CLUSTER}" up --nodes 3 \
  --apiserver-arg=--audit-policy-file="${WORK}/audit-policy.yaml" --apiserver-arg=--audit-log-path="${AUDIT}" \
  --apiserver-arg=--audit-log-maxsize=0
kd_env_load
must "Deployments order and payment Running" kds_create_workload
must "order moved onto payment's node" kds_violate

# ---------------------------------------------------------------------------
phase "1. gate on: pods streamed by one watch-list, no LIST, payment evicted"
a0="$(audit_next)"
kds_run on 60 --descheduling-interval 0
check "one-shot exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "payment ${PAYMENT_POD} evicted" kds_log_has on "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} "
check "log: pods listed via=watch-list" kds_log_has on 'msg="reflector listed" resource=pods via=watch-list'
check "log: every resource via=watch-list, none via=list" kds_log_lacks on 'via=list'
check "audit: a watch of pods with sendInitialEvents=true" kd_wait_for "audit" 10 audit_has "${a0}" "${WATCH_LIST}"
audit_show "${a0}"
check "audit: resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true, no resourceVersion" \
  audit_watch_list_as_client_go "${a0}"
check "audit: no LIST of pods" audit_lacks "${a0}" '^list '
must "payment's replacement Running elsewhere" kd_wait_for "replacement" 60 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "2. gate on, daemon: the watch-list goes on as the watch"
a0="$(audit_next)"
kds_start d --descheduling-interval 3s --secure-port 0
check "daemon synced" kds_wait_log d 'msg="caches synced"' 30
must "order moved onto payment's node" kds_violate
check "payment ${PAYMENT_POD} evicted by the running daemon" kds_wait_log d \
  "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " 60
audit_show "${a0}"
check "audit: the daemon's only pods request is that watch-list (its stream carried the changes)" bash -c \
  "[ \"\$(grep -c . <<<\"\$1\")\" = 1 ] && grep -Eq '${WATCH_LIST}' <<<\"\$1\"" _ "$(audit_since "${a0}" | sort -u)"
kds_stop "$(cat "${WORK}/d.pid")" || true
check "daemon exit 0 on SIGTERM (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
must "payment's replacement Running elsewhere" kd_wait_for "replacement" 60 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "3. the switch: --watch-list=false and KUBE_FEATURE_WatchListClient=false list in pages"
must "order moved onto payment's node again" kds_violate
a0="$(audit_next)"
kds_run flag 60 --descheduling-interval 0 --dry-run --watch-list=false
check "--watch-list=false: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "--watch-list=false: pods via=list" kds_log_has flag 'msg="reflector listed" resource=pods via=list'
check "--watch-list=false: audit shows a paged LIST of pods" kd_wait_for "audit" 10 audit_has "${a0}" "${PAGED_LIST}"
a1="$(audit_next)"
KUBE_FEATURE_WatchListClient=false kds_run env 60 --descheduling-interval 0 --dry-run
check "KUBE_FEATURE_WatchListClient=false: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "KUBE_FEATURE_WatchListClient=false: pods via=list" kds_log_has env 'msg="reflector listed" resource=pods via=list'
check "KUBE_FEATURE_WatchListClient=false: audit shows a paged LIST of pods" kd_wait_for "audit" 10 \
  audit_has "${a1}" "${PAGED_LIST}"
check "neither asked for a watch-list" audit_lacks "${a0}" 'sendInitialEvents'
check "dry runs: payment ${PAYMENT_POD} untouched" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

# ---------------------------------------------------------------------------
phase "4. gate off: 422, said once, paged LIST, payment evicted"
must "restart-apiserver with --feature-gates=WatchList=false" quietly "${KDS_CLUSTER}" restart-apiserver \
  --apiserver-arg=--feature-gates=WatchList=false
a0="$(audit_next)"
kds_run off 60 --descheduling-interval 0
check "one-shot exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "payment ${PAYMENT_POD} evicted" kds_log_has off "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} "
check "the refusal said once, at info, with the API server's reason" bash -c \
  "[ \"\$(grep -c 'does not serve watch-lists' \"\$1\")\" = 1 ] &&
   grep 'does not serve watch-lists' \"\$1\" | grep 'level=info' | grep -q 'WatchList feature gate'" _ "$(kds_log off)"
check "log: pods via=list" kds_log_has off 'msg="reflector listed" resource=pods via=list'
check "log: no warning or error" kds_log_lacks off 'level=(warn|error)'
check "audit: a paged LIST of pods" kd_wait_for "audit" 10 audit_has "${a0}" "${PAGED_LIST}"
check "audit: the watch-list of pods answered 422" audit_has "${a0}" '^watch 422 /api/v1/pods\?(.*&)?sendInitialEvents=true'
audit_show "${a0}"
check "payment's replacement Running elsewhere" kd_wait_for "replacement" 60 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
