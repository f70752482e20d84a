#!/usr/bin/env bash
# The live plan (`kdesched plan --kubeconfig`) on the real control plane, with the order/payment
# story (order moved onto payment's node) and kdesched as the chart's ServiceAccount (ClusterRole
# and ServiceAccount rendered by `helm template helm/kdesched`, a TokenRequest token). The
# apiserver's audit log (every request of the test's ServiceAccounts, Metadata) says what was asked:
#
#  1. live plan, table: exit 0, payment planned for eviction by RemovePodsViolatingInterPodAntiAffinity
#     on its node; payment and order untouched (same UIDs, not terminating); the audit has only list
#     requests, none that writes (no eviction, Event or Lease).
#  2. --save-snapshot: the file holds LIST answers only (no Secret, not the token); the replay command
#     the plan printed on stderr, run offline, prints the same table byte for byte; the same with
#     -o json.
#  3. a ServiceAccount bound to the chart's rules cut down to their list verbs alone gets the same
#     plan: list is all a live plan needs. One with no rules exits 1, naming pods and list.
#  4. --explain on order: the anti-affinity plugin found no violated term for it; with a PDB on
#     payment: refused by that PDB with its numbers; -o json carries the same; an unknown pod: exit 2.
#
# Own cluster directory (${KDESCHED_LIVEPLAN_DIR:-/tmp/kdesched-liveplan.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "liveplan: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin liveplan --cluster
kds_require_tools

SA=system:serviceaccount:kube-system
AUDIT="${WORK}/audit.log"
cat >"${WORK}/audit-policy.yaml" <<YAML
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: ["${SA}:kdesched", "${SA}:kdesched-lister", "${SA}:kdesched-nothing"]
- level: None
YAML

# audit_of USER: that ServiceAccount's requests as "VERB CODE RESOURCE[/SUBRESOURCE] URI".
audit_of() {
  jq -r --arg u "${SA}:$1" 'select(.user.username == $u) |
    "\(.verb) \(.responseStatus.code // "-") \(.objectRef.resource // "-")\(if .objectRef.subresource then "/" + .objectRef.subresource else "" end) \(.requestURI)"' \
    "${AUDIT}" 2>/dev/null
}
audit_has_lists() { audit_of "$1" | grep -q '^list 200 pods '; }
# Every request of USER a list: nothing created, updated, patched or deleted.
audit_only_lists() { [ -n "$(audit_of "$1")" ] && ! audit_of "$1" | grep -qv '^list '; }

# live_plan NAME KUBECONFIG ARGS...: `kdesched plan` read from the cluster; stdout in WORK/NAME.out,
# stderr in WORK/NAME.err, the exit code in KDS_RC.
live_plan() {
  local name="$1" kc="$2"; shift 2
  KDS_RC=0
  timeout 60 "${KDESCHED}" plan --kubeconfig "${kc}" --policy-config-file "${KDS_POLICY}" "$@" \
    >"${WORK}/${name}.out" 2>"${WORK}/${name}.err" </dev/null || KDS_RC=$?
  sed 's/^/        | /' "${WORK}/${name}.err"
}
# replay NAME: runs the replay command NAME's live plan printed on stderr (kdesched's own words,
# with this build's binary); stdout in WORK/NAME.replay, stderr in WORK/NAME.replay.err.
replay() {
  local cmd
  cmd="$(sed -n 's/^kdesched: saved what was read to .*; replay: kdesched plan //p' "${WORK}/$1.err")"
  [ -n "${cmd}" ] || return 1
  eval "\"\${KDESCHED}\" plan ${cmd}" >"${WORK}/$1.replay" 2>"${WORK}/$1.replay.err"
}
payment_row() {
  grep -Eq "^${KDS_NS} +${PAYMENT_POD} +${PAYMENT_NODE} +RemovePodsViolatingInterPodAntiAffinity " "$1"
}
json_plans_payment() {
  jq -e --arg p "${PAYMENT_POD}" \
    '[.evictions[] | select(.name == $p and .plugin == "RemovePodsViolatingInterPodAntiAffinity")] | length == 1' \
    "$1" >/dev/null
}
# payment_lands_apart JSON_PLAN SNAPSHOT: the plan expects payment on a node other than its own
# where no order pod runs (by what the plan read), and the table's LANDS ON column names it too.
payment_expected() {
  jq -r --arg p "${PAYMENT_POD}" '.evictions[] | select(.name == $p) | .landing.expected // empty' "$1"
}
payment_lands_apart() {
  local expected
  expected="$(payment_expected "$1")"
  [ -n "${expected}" ] && [ "${expected}" != "${PAYMENT_NODE}" ] || return 1
  ! jq -r 'select(.kind == "PodList") | .items[] | select(.metadata.labels.app == "order") | .spec.nodeName' \
    "$2" | grep -qxF "${expected}"
}
table_names_landing() {
  [ "$(awk -v p="${PAYMENT_POD}" '$2 == p {print $5}' "$1")" = "$(payment_expected "$2")" ]
}
untouched() { kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}" && kds_pod_intact "${ORDER_POD}" "${ORDER_UID}"; }
no_eviction_request() { ! audit_of "$1" | grep -q 'pods/eviction'; }
# The kinds of the saved documents: LIST answers of the cached resources, nothing else.
list_answers_only() {
  [ "$(jq -r .kind "$1" | sort -u | tr '\n' ' ')" = \
    "NamespaceList NodeList PersistentVolumeClaimList PodDisruptionBudgetList PodList " ]
}
# no_secrets SNAPSHOT KUBECONFIG: no Secret object, and not the kubeconfig's token.
no_secrets() {
  local token
  token="$(sed -n 's/^ *token: //p' "$2")"
  [ -n "${token}" ] && ! grep -q '"Secret' "$1" && ! grep -qF -- "${token}" "$1"
}
can_list_pods() { kd_kubectl auth can-i list pods --all-namespaces --as="$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes, audit of the test's ServiceAccounts), order beside payment"
must "cluster.sh up --nodes 3 with the audit log" quietly "${KDS_CLUSTER}" up --nodes 3 \
  --apiserver-arg=--audit-policy-file="${WORK}/audit-policy.yaml" --apiserver-arg=--audit-log-path="${AUDIT}" \
  --apiserver-arg=--audit-log-maxsize=0
kd_env_load
must "Deployments order and payment Running" kds_create_workload
must "order moved onto payment's node" kds_violate
ORDER_UID="$(uid_of "${ORDER_POD}")"
note "order ${ORDER_POD} and payment ${PAYMENT_POD} on ${PAYMENT_NODE}"

phase "the chart's ServiceAccount and ClusterRole (helm template helm/kdesched)"
helm template kdesched "${ROOT}/helm/kdesched" -n kube-system --show-only templates/serviceaccount.yaml \
  --show-only templates/clusterrole.yaml >"${WORK}/rbac.yaml"
must "helm template rendered a ClusterRole with list on pods" grep -q 'resources: \["pods"\]' "${WORK}/rbac.yaml"
must "the chart's RBAC applied" quietly kd_kubectl apply -f "${WORK}/rbac.yaml"
must "the ServiceAccount may list pods" kd_wait_for "RBAC visible" 15 can_list_pods "${SA}:kdesched"
must "TokenRequest for kube-system/kdesched -> kubeconfig" kds_sa_kubeconfig kdesched kube-system "${WORK}/sa.kubeconfig"

# ---------------------------------------------------------------------------
phase "1. live plan as the chart's ServiceAccount: payment planned, nothing written"
t0="$(kd_now_ms)"
live_plan table "${WORK}/sa.kubeconfig" --save-snapshot "${WORK}/snap.json"
timing "live plan (3 nodes, read + cycle)" "$(kd_elapsed "${t0}")"
check "exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
sed 's/^/        > /' "${WORK}/table.out"
check "payment ${PAYMENT_POD} on ${PAYMENT_NODE} planned by RemovePodsViolatingInterPodAntiAffinity" \
  payment_row "${WORK}/table.out"
check "one eviction planned" grep -q '^Summary: 1 eviction, 0 refused; 3 nodes (3 in the cycle)' "${WORK}/table.out"
check "stderr holds the replay line only" [ "$(wc -l <"${WORK}/table.err")" = 1 ]
check "payment and order untouched (same UIDs, not terminating)" untouched
check "audit: the plan listed pods" kd_wait_for "audit" 10 audit_has_lists kdesched
audit_of kdesched | awk '{print $1, $2, $3}' | sort | uniq -c | sed 's/^/       audit: /'
check "audit: only list requests (no eviction, Event or Lease written)" audit_only_lists kdesched
check "audit: no pods/eviction request at all" no_eviction_request kdesched

# ---------------------------------------------------------------------------
phase "2. --save-snapshot replayed offline: the same plan byte for byte"
check "the saved snapshot is the LIST answers of the five cached resources" list_answers_only "${WORK}/snap.json"
check "no Secret and not the token in the saved snapshot" no_secrets "${WORK}/snap.json" "${WORK}/sa.kubeconfig"
check "the saved snapshot is readable by its owner only (0600)" [ "$(stat -c %a "${WORK}/snap.json")" = 600 ]
check "no temporary file left beside it" [ -z "$(ls "${WORK}" | grep -F '.tmp-')" ]
note "$(cat "${WORK}/table.err")"
check "the printed replay command runs offline (exit 0)" replay table
check "replay == live plan, byte for byte (table)" cmp "${WORK}/table.out" "${WORK}/table.replay"
live_plan json "${WORK}/sa.kubeconfig" -o json --save-snapshot "${WORK}/snap-json.json"
check "-o json: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "-o json: payment in .evictions" json_plans_payment "${WORK}/json.out"
note "payment expected on $(payment_expected "${WORK}/json.out")"
check "-o json: payment expected on a node without order" \
  payment_lands_apart "${WORK}/json.out" "${WORK}/snap-json.json"
check "the table's LANDS ON column names the same node" table_names_landing "${WORK}/table.out" "${WORK}/json.out"
check "-o json: the replay command runs offline" replay json
check "replay == live plan, byte for byte (JSON)" cmp "${WORK}/json.out" "${WORK}/json.replay"
check "payment and order still untouched" untouched

# ---------------------------------------------------------------------------
phase "3. list alone is enough; no rules: exit 1 naming pods and list"
kd_kubectl get clusterrole kdesched -o json | jq '{apiVersion, kind, metadata: {name: "kdesched-lister"},
  rules: [.rules[] | select(.verbs | index("list")) | .verbs = ["list"]]}' >"${WORK}/lister.json"
note "list-only rules: $(jq -c '[.rules[].resources[]]' "${WORK}/lister.json")"
must "ClusterRole kdesched-lister (the chart's rules, list verbs only)" quietly kd_kubectl apply -f "${WORK}/lister.json"
must "ServiceAccounts kdesched-lister and kdesched-nothing" quietly kd_kubectl -n kube-system create serviceaccount kdesched-lister
quietly kd_kubectl -n kube-system create serviceaccount kdesched-nothing
must "ClusterRoleBinding kdesched-lister" quietly kd_kubectl create clusterrolebinding kdesched-lister \
  --clusterrole=kdesched-lister --serviceaccount=kube-system:kdesched-lister
must "kdesched-lister may list pods" kd_wait_for "RBAC visible" 15 can_list_pods "${SA}:kdesched-lister"
must "TokenRequests -> kubeconfigs" kds_sa_kubeconfig kdesched-lister kube-system "${WORK}/lister.kubeconfig"
kds_sa_kubeconfig kdesched-nothing kube-system "${WORK}/nothing.kubeconfig"
live_plan lister "${WORK}/lister.kubeconfig"
check "list-only ServiceAccount: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "list-only ServiceAccount: the same plan" cmp "${WORK}/table.out" "${WORK}/lister.out"
check "audit: kdesched-lister sent only lists" audit_only_lists kdesched-lister
live_plan nothing "${WORK}/nothing.kubeconfig"
check "no rules: exit 1 (rc=${KDS_RC})" [ "${KDS_RC}" = 1 ]
check "no rules: the error names pods and list, with the fix" grep -q \
  'kdesched: cannot list pods: 403 Forbidden: .*(grant list on pods to this identity' "${WORK}/nothing.err"
check "no rules: nothing on stdout" [ ! -s "${WORK}/nothing.out" ]

# ---------------------------------------------------------------------------
phase "4. --explain: order is no candidate, payment refused by its PDB (with the numbers)"
must "PDB payment (minAvailable 1) applied" kds_apply payment-pdb.yaml
must "disruption controller set disruptionsAllowed 0" kd_wait_for "PDB status" 60 kds_pdb_settled
live_plan explain "${WORK}/sa.kubeconfig" --explain "${KDS_NS}/${ORDER_POD}" --explain "${KDS_NS}/${PAYMENT_POD}"
sed 's/^/        | /' "${WORK}/explain.out"
check "--explain: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
# explain_line POD PATTERN: a line of POD's explain section matches PATTERN.
explain_line() {
  awk -v p="Explain ${KDS_NS}/$1 " 'index($0, p) == 1 {on = 1; next} /^Explain / {on = 0} on' "${WORK}/explain.out" |
    grep -Eq "$2"
}
check "order: the anti-affinity plugin found no violated term for it" explain_line "${ORDER_POD}" \
  "RemovePodsViolatingInterPodAntiAffinity +skipped +- +not a candidate: no violated term"
payment_pdb_line="RemovePodsViolatingInterPodAntiAffinity +refused +PodDisruptionBudget ${KDS_NS}/payment +"
payment_pdb_line+="disruptionsAllowed 0 [(]minAvailable 1, currentHealthy 1, desiredHealthy 1[)]"
check "payment: refused by PodDisruptionBudget ${KDS_NS}/payment, allowed 0, healthy 1, desired 1" \
  explain_line "${PAYMENT_POD}" "${payment_pdb_line}"
live_plan explain-json "${WORK}/sa.kubeconfig" -o json --explain "${KDS_NS}/${PAYMENT_POD}"
check "-o json: .explain says the same as data" jq -e --arg p "${PAYMENT_POD}" '.explain[0] | .name == $p and .found and
  ([.steps[] | select(.outcome == "refused" and .kind == "pdb")] | length == 1)' "${WORK}/explain-json.out"
live_plan explain-missing "${WORK}/sa.kubeconfig" --explain "${KDS_NS}/no-such-pod"
missing_said() {
  [ "${KDS_RC}" = 2 ] && grep -q "no such pod" "${WORK}/explain-missing.out" &&
    grep -q "no pod ${KDS_NS}/no-such-pod" "${WORK}/explain-missing.err"
}
check "--explain of a pod that is not there: exit 2 (rc=${KDS_RC}), said on stdout and stderr" missing_said
check "payment and order untouched at the end" untouched
end_phase
