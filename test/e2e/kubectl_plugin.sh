#!/usr/bin/env bash
# The kubectl plugin (`kubectl kdesched`, docs/kubectl.md) on the real control plane, as an
# operator meets it: kdesched installed by the chart (helm install, kind Deployment with leader
# election and the metrics Service; kwok runs its pod), the binary on PATH as kubectl-kdesched (a
# symlink, as docs/kubectl.md installs it), and the order/payment story (order moved beside payment):
#
#  1. kubectl finds the plugin (`kubectl plugin list`) and runs it (`kubectl kdesched version`); the
#     krew manifest (deploy/krew/kdesched.yaml) names this version and a binary it installs.
#  2. `kubectl kdesched plan` (the current context of $KUBECONFIG, the installed daemon's policy read
#     from the chart's ConfigMap): payment planned by RemovePodsViolatingInterPodAntiAffinity, exit 0;
#     -o json and -o yaml carry it; nothing was evicted. $KUBECONFIG as a list with a missing file.
#  3. `kubectl kdesched explain POD -n default`: payment `evicted` by that plugin, order `skipped`
#     (pod/NAME spelling, -o json). The context's namespace is the default: a context in kube-system
#     does not find payment (exit 1, naming the namespace); --context picks a context over a broken
#     current-context.
#  4. Exit codes: a pod that is not there, no policy where --kdesched-namespace points (1, naming
#     what was looked for; --policy-config-file overrides), an unreachable cluster (1), bad usage (2).
#  5. `kubectl kdesched status`: with the daemon down, the metrics through the API server's service
#     proxy fail (exit 1) and no Lease is held. The chart's Service is pointed at a kdesched daemon
#     on this host (its pod's IP patched to the host's address, the Service's targetPort to the
#     daemon's port: the API server proxies only to a pod's address). With the daemon running
#     (leader election, the chart's Lease) and payment evicted: the Lease's holder and renew time,
#     the metrics (1 cycle, 1 eviction), the Event on payment; -o json and -o yaml; exit 0. After
#     SIGTERM (the Lease released): no holder, the metrics unreachable, exit 1.
#
# Own cluster directory (${KDESCHED_KUBECTL_PLUGIN_DIR:-/tmp/kdesched-kubectl-plugin.PID}); kdesched
# is ${KDESCHED_BIN:-build/kdesched}. Prints "kubectl-plugin: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin kubectl-plugin --cluster
kds_require_tools
SYS=kube-system

# kp NAME ARGS...: `kubectl kdesched ARGS` as an operator types it (kubectl from PATH, which finds the
# plugin on PATH); stdout in WORK/NAME.out, stderr in WORK/NAME.err, the exit code in KDS_RC.
kp() {
  local name="$1"; shift
  KDS_RC=0
  timeout 60 kubectl kdesched "$@" >"${WORK}/${name}.out" 2>"${WORK}/${name}.err" </dev/null || KDS_RC=$?
  sed 's/^/        | /' "${WORK}/${name}.err"
}
out_has() { grep -Eq -- "$2" "${WORK}/$1.out"; }
err_has() { grep -Eq -- "$2" "${WORK}/$1.err"; }
shows() { sed 's/^/        > /' "${WORK}/$1.out"; }
payment_planned() { grep -Eq "^${KDS_NS} +${PAYMENT_POD} +${PAYMENT_NODE} +RemovePodsViolatingInterPodAntiAffinity " "${WORK}/$1.out"; }
jqe() { jq -e "$@" >/dev/null; }
yaml_json() { python3 -c 'import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))' "$1"; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes), order beside payment"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload
must "order moved onto payment's node" kds_violate
note "order ${ORDER_POD} and payment ${PAYMENT_POD} on ${PAYMENT_NODE}"

phase "helm install: Deployment, leader election, metrics Service, the order/payment policy"
python3 - "${KDS_POLICY}" >"${WORK}/values.yaml" <<'PY'
import sys, yaml
policy = yaml.safe_load(open(sys.argv[1]))
for k in ("apiVersion", "kind"):
    policy.pop(k)
print(yaml.safe_dump({"kind": "Deployment", "replicas": 1, "leaderElection": {"enabled": True},
                      "service": {"enabled": True}, "deschedulerPolicy": policy}))
PY
must "helm install kdesched ./helm/kdesched -n kube-system -f values.yaml" \
  quietly "$(kd_bin_dir)/helm" install kdesched "${ROOT}/helm/kdesched" -n "${SYS}" -f "${WORK}/values.yaml" --wait --timeout 2m
must "the chart's pod Running (kwok)" kd_wait_pods_ready "${SYS}" app.kubernetes.io/instance=kdesched 1 60

# ---------------------------------------------------------------------------
phase "1. kubectl finds the plugin on PATH"
mkdir -p "${WORK}/bin"
ln -s "$(readlink -f "${KDESCHED}")" "${WORK}/bin/kubectl-kdesched"
PATH="${WORK}/bin:${PATH}"
note "kubectl: $(command -v kubectl), $(kubectl version --client 2>/dev/null | head -1)"
kubectl plugin list >"${WORK}/plugins.out" 2>/dev/null || true
check "kubectl plugin list names ${WORK}/bin/kubectl-kdesched" grep -qxF "${WORK}/bin/kubectl-kdesched" "${WORK}/plugins.out"
kp version version
check "kubectl kdesched version: exit 0, kubectl-kdesched <version>" \
  eval '[ "${KDS_RC}" = 0 ] && out_has version "^kubectl-kdesched [0-9]"'
# What krew would do with deploy/krew/kdesched.yaml: link kubectl-kdesched to the file `bin` names,
# one of the archive's files, of this version.
krew_manifest_ok() {
  python3 - "${ROOT}/deploy/krew/kdesched.yaml" "$(sed -n 's/^kubectl-kdesched //p' "${WORK}/version.out")" <<'PY'
import re, sys, yaml
m = yaml.safe_load(open(sys.argv[1]))
assert m["apiVersion"] == "krew.googlecontainers.github.com/v1alpha2" and m["kind"] == "Plugin", m
assert m["metadata"]["name"] == "kdesched" and m["spec"]["version"] == "v" + sys.argv[2], m["spec"]["version"]
for p in m["spec"]["platforms"]:
    assert p["bin"] in [f["from"] for f in p["files"]], p
    assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]) and p["uri"].startswith("https://"), p
    assert p["selector"]["matchLabels"]["os"] == "linux", p
PY
}
check "deploy/krew/kdesched.yaml: a krew Plugin named kdesched, of this version, its bin among its files" krew_manifest_ok

# ---------------------------------------------------------------------------
phase "2. kubectl kdesched plan: the installed policy, the current context"
kp plan plan
shows plan
check "exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "payment ${PAYMENT_POD} on ${PAYMENT_NODE} planned by RemovePodsViolatingInterPodAntiAffinity" payment_planned plan
check "one eviction planned" out_has plan '^Summary: 1 eviction, 0 refused'
check "stderr is empty" [ ! -s "${WORK}/plan.err" ]
kp plan-json plan -o json
check "-o json: payment in .evictions" \
  jqe --arg p "${PAYMENT_POD}" '[.evictions[] | select(.name == $p)] | length == 1' "${WORK}/plan-json.out"
kp plan-yaml plan -o yaml
yaml_json "${WORK}/plan-yaml.out" >"${WORK}/plan-yaml.json" || true
check "-o yaml: the same plan as -o json" \
  eval 'jq -S . "${WORK}/plan-yaml.json" | cmp -s - <(jq -S . "${WORK}/plan-json.out")'
KUBECONFIG="${WORK}/missing.kubeconfig:${KUBECONFIG}" kp plan-list plan
check "\$KUBECONFIG as a list with a missing file first: the same plan" cmp -s "${WORK}/plan.out" "${WORK}/plan-list.out"
check "payment and order untouched" eval 'kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}" && kds_pod_intact "${ORDER_POD}"'

# ---------------------------------------------------------------------------
phase "3. kubectl kdesched explain POD"
kp explain explain "${PAYMENT_POD}" -n "${KDS_NS}"
shows explain
check "exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "payment: the explain table only, from its header" out_has explain "^Explain ${KDS_NS}/${PAYMENT_POD} \\(node ${PAYMENT_NODE}\\):"
check "payment: evicted by RemovePodsViolatingInterPodAntiAffinity, the term and ${ORDER_POD} named" \
  out_has explain "RemovePodsViolatingInterPodAntiAffinity +evicted .*violated by pod ${KDS_NS}/${ORDER_POD}"
check "no plan around it" eval '! out_has explain "^Summary:"'
kp explain-order explain "pod/${ORDER_POD}" -o json
check "order (pod/NAME, -o json): skipped, no violated term" jqe '.found and
  ([.steps[] | select(.outcome == "skipped" and (.why | contains("no violated term")))] | length == 1)' \
  "${WORK}/explain-order.out"
# A kubeconfig whose current context points nowhere, a context "shop" in kube-system, one "here".
cp "${KUBECONFIG}" "${WORK}/ctx.kubeconfig"
kc() { kubectl --kubeconfig "${WORK}/ctx.kubeconfig" config "$@" >/dev/null; }
CLUSTER="$(kubectl config view -o jsonpath='{.contexts[0].context.cluster}')"
KUSER="$(kubectl config view -o jsonpath='{.contexts[0].context.user}')"
kc set-cluster nowhere --server=https://127.0.0.1:1 --insecure-skip-tls-verify=true
kc set-context broken --cluster=nowhere --user="${KUSER}"
kc set-context shop --cluster="${CLUSTER}" --user="${KUSER}" --namespace="${SYS}"
kc set-context here --cluster="${CLUSTER}" --user="${KUSER}"
kc use-context broken
KUBECONFIG="${WORK}/ctx.kubeconfig" kp ctx-ns explain "${PAYMENT_POD}" --context shop
check "--context shop (namespace kube-system): payment is not there, exit 1 naming kube-system" \
  eval '[ "${KDS_RC}" = 1 ] && err_has ctx-ns "pods \"${PAYMENT_POD}\" not found in namespace \"kube-system\""'
KUBECONFIG="${WORK}/ctx.kubeconfig" kp ctx-here explain "${PAYMENT_POD}" --context here
check "--context here (no namespace: default) over the broken current context: exit 0, payment explained" \
  eval '[ "${KDS_RC}" = 0 ] && out_has ctx-here "^Explain ${KDS_NS}/${PAYMENT_POD}"'

# ---------------------------------------------------------------------------
phase "4. exit codes"
kp nope explain no-such-pod -n "${KDS_NS}"
check "a pod that is not there: exit 1, kubectl's words" \
  eval '[ "${KDS_RC}" = 1 ] && err_has nope "^error: pods \"no-such-pod\" not found in namespace \"default\""'
kp nopolicy plan --kdesched-namespace default
check "no policy where --kdesched-namespace points: exit 1, naming the ConfigMap, labels and namespace" \
  eval '[ "${KDS_RC}" = 1 ] && err_has nopolicy "no DeschedulerPolicy found: no ConfigMap with a policy.yaml key labelled app.kubernetes.io/name=kdesched .* in namespace default"'
kp override plan --kdesched-namespace default --policy-config-file "${KDS_POLICY}"
check "--policy-config-file instead: exit 0, the same plan" eval '[ "${KDS_RC}" = 0 ] && cmp -s "${WORK}/plan.out" "${WORK}/override.out"'
KUBECONFIG="${WORK}/ctx.kubeconfig" kp unreachable plan --request-timeout 5s
check "an unreachable cluster (the broken current context): exit 1" eval '[ "${KDS_RC}" = 1 ] && err_has unreachable "^error: "'
kp badout plan -o xml
check "-o xml: exit 2 (usage)" eval '[ "${KDS_RC}" = 2 ] && err_has badout "xml"'
kp noarg explain
check "explain without POD: exit 2 (usage)" eval '[ "${KDS_RC}" = 2 ] && err_has noarg "POD is required"'
kp notinstalled status --kdesched-namespace default
check "status where nothing is installed: exit 1, saying so" \
  eval '[ "${KDS_RC}" = 1 ] && err_has notinstalled "kdesched is not installed in namespace default"'

# ---------------------------------------------------------------------------
phase "5. kubectl kdesched status: Lease, metrics through the service proxy, Events"
HOST_IP="$(ip -4 -o addr show scope global | awk '{ sub(/\/.*/, "", $4); print $4; exit }')"
[ -n "${HOST_IP}" ] || die "no global IPv4 address on this host for the Service's endpoint"
kds_free_port PORT
CHART_POD="$(kd_kubectl -n "${SYS}" get pods -l app.kubernetes.io/instance=kdesched -o jsonpath='{.items[0].metadata.name}')"
must "the chart's pod ${CHART_POD} gets this host's address ${HOST_IP}" quietly kd_kubectl -n "${SYS}" patch pod "${CHART_POD}" \
  --subresource=status --type=merge -p "{\"status\":{\"podIP\":\"${HOST_IP}\",\"podIPs\":[{\"ip\":\"${HOST_IP}\"}]}}"
must "the chart's Service targets port ${PORT}" quietly kd_kubectl -n "${SYS}" patch service kdesched --type=json \
  -p "[{\"op\":\"replace\",\"path\":\"/spec/ports/0/targetPort\",\"value\":${PORT}}]"
endpoints_ok() {
  [ "$(kd_kubectl -n "${SYS}" get endpoints kdesched -o jsonpath='{.subsets[0].addresses[0].ip}:{.subsets[0].ports[0].port}' 2>/dev/null)" = "${HOST_IP}:${PORT}" ]
}
must "Endpoints kdesched: ${HOST_IP}:${PORT}" kd_wait_for "endpoints" 30 endpoints_ok

kp status-down status
shows status-down
check "daemon down: exit 1" [ "${KDS_RC}" = 1 ]
check "daemon down: the Deployment found, no Lease held yet" \
  eval 'out_has status-down "Deployment kdesched, 1/1 ready, leader election on" && out_has status-down "no Lease kube-system/descheduler"'
check "daemon down: the metrics error names the service proxy path" \
  out_has status-down "Metrics: error: .*/api/v1/namespaces/kube-system/services/https:kdesched:http-metrics/proxy/metrics"

kd_kubectl -n "${SYS}" get configmap kdesched -o jsonpath='{.data.policy\.yaml}' >"${WORK}/policy.yaml"
kds_start daemon --policy-config-file "${WORK}/policy.yaml" --descheduling-interval 1h --leader-elect \
  --bind-address "${HOST_IP}" --secure-port "${PORT}"
must "the daemon evicts payment" kds_wait_log daemon "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD}" 60
HOLDER="$(kd_kubectl -n "${SYS}" get lease descheduler -o jsonpath='{.spec.holderIdentity}')"
note "the Lease's holder: ${HOLDER}"
event_seen() { kp status-up status && out_has status-up "${PAYMENT_POD} +Normal +RemovePodsViolatingInterPodAntiAffinity"; }
check "the eviction's Event listed (events.k8s.io, reportingController sigs.k8s.io.descheduler)" kd_wait_for "Event" 20 event_seen
shows status-up
check "daemon up: exit 0 (rc=${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "the Lease: held by ${HOLDER}, renewed seconds ago" \
  out_has status-up "^Lease: +kube-system/descheduler held by ${HOLDER}, renewed [0-9]+s ago \\(duration 137s"
check "the metrics through the service proxy: 1 cycle, 1 eviction, cache fresh" \
  eval 'out_has status-up "^Metrics: 1 cycles, last successful [0-9]+s ago" && out_has status-up "evictions: success 1$" && out_has status-up "cache: +fresh$"'
kp status-json status -o json
check "-o json: holder, cycles, evictions, the Event" jqe --arg h "${HOLDER}" --arg p "${PAYMENT_POD}" '
  .lease.state == "found" and .lease.holder == $h and (.lease.expired | not) and .metrics.state == "found"
  and .metrics.cycles == 1 and .metrics.evictions.success == 1 and .metrics.staleCaches == []
  and ([.events[] | select(.pod == $p and .reason == "RemovePodsViolatingInterPodAntiAffinity")] | length == 1)' \
  "${WORK}/status-json.out"
kp status-yaml status -o yaml
yaml_json "${WORK}/status-yaml.out" >"${WORK}/status-yaml.json" || true
check "-o yaml: the same as -o json but for the ages (timestamps quoted, as kubectl writes them)" eval \
  'jq -S "del(.. | .ageSeconds?, .lastSuccessfulCycleAgeSeconds?)" "${WORK}/status-yaml.json" |
     cmp -s - <(jq -S "del(.. | .ageSeconds?, .lastSuccessfulCycleAgeSeconds?)" "${WORK}/status-json.out")'

check "SIGTERM: the daemon exits 0" eval 'kds_stop "$(cat "${WORK}/daemon.pid")" && [ "${KDS_RC}" = 0 ]'
kp status-after status
shows status-after
check "after SIGTERM: the Lease released (no holder), the metrics unreachable, exit 1" \
  eval '[ "${KDS_RC}" = 1 ] && out_has status-after "held by nobody" && out_has status-after "^Metrics: error: "'
