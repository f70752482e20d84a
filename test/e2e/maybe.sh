#!/usr/bin/env bash
# A 504 that evicted, and one that did not, end to end on the real control plane
# (scripts/cluster/cluster.sh) with the order/payment story:
#
#  kdesched reaches the real kube-apiserver through a TLS-terminating gateway
#  (test/e2e/gateway504.py proxy) that answers an Eviction POST still unanswered after 2 s with
#  "504 Gateway Timeout" itself while the request goes on upstream, as a load balancer or API
#  gateway does (the API server's own timeout filter does the same after a pause; a soak saw an
#  eviction carried out 27 ms after its 504). A validating webhook on pods/eviction
#  (gateway504.py webhook) holds each review 4 s, so the API server's handler is still at work
#  when the 504 goes out.
#
#  1. the webhook allows: the 504 arrives, kdesched looks the pod up (0.5 s, 1 s, 2 s later), finds
#     it gone or terminating and counts the eviction as done: "Evicted pod ... answer=504
#     confirmed=...", one-shot exit 0 even with --fail-on-eviction-errors, payment evicted once;
#  2. the webhook denies: the 504 arrives, the pod is still there after the last look: "eviction
#     failed ... not evicted", exit 1 with --fail-on-eviction-errors, payment intact.
#
# Why a gateway of our own: a real API server answers 504 only when its timeout filter fires
# (60 s by default) and whether its handler then finishes is a race; a gateway that gives up is a
# common real fault, and here it is exact. Own cluster directory
# (${KDESCHED_MAYBE_DIR:-/tmp/kdesched-maybe.PID}).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin maybe --cluster
kds_require_tools
command -v python3 >/dev/null 2>&1 || die "python3 not found"

GATEWAY="${ROOT}/test/e2e/gateway504.py"

start_webhook() {
  python3 "${GATEWAY}" webhook --listen "${HOOK_PORT}" --cert "${KDESCHED_CLUSTER_DIR}/pki/apiserver.crt" \
    --key "${KDESCHED_CLUSTER_DIR}/pki/apiserver.key" --hold 4 --mode "$1" --log "${WORK}/webhook.log" \
    </dev/null >>"${WORK}/webhook.out" 2>&1 7>&- 8>&- &
  WEBHOOK_PID=$!
  KDS_EXTRA_PIDS+=("${WEBHOOK_PID}")
  kd_wait_for "webhook listening" 10 kds_port_in_use "${HOOK_PORT}"
}
register_webhook() {
  kd_kubectl apply -f - >/dev/null <<HOOK
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: kdesched-e2e-maybe
webhooks:
- name: hold.kdesched-e2e.example
  clientConfig:
    url: https://127.0.0.1:${HOOK_PORT}/hold
    caBundle: $(base64 -w0 "${CA_FILE}")
  rules:
  - apiGroups: [""]
    apiVersions: ["v1"]
    operations: ["CREATE"]
    resources: ["pods/eviction"]
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: ["v1"]
  timeoutSeconds: 10
  namespaceSelector:
    matchLabels: {kubernetes.io/metadata.name: ${KDS_NS}}
HOOK
}
# run_once NAME: a one-shot kdesched through the gateway; sets KDS_RC.
run_once() {
  kds_run "$1" 60 --kubeconfig "${WORK}/gateway.kubeconfig" --descheduling-interval 0 --fail-on-eviction-errors
  note "$1: exit ${KDS_RC} after $(ms_str "${KDS_RUN_MS}")"
}

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes); order and payment; the gateway and the webhook"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload
kds_free_port HOOK_PORT
must "webhook (holds 4 s, allows) listening on ${HOOK_PORT}" start_webhook allow
must "ValidatingWebhookConfiguration on pods/eviction" register_webhook
kds_free_port GW_PORT
python3 "${GATEWAY}" proxy --listen "${GW_PORT}" --upstream "127.0.0.1:${APISERVER_PORT}" \
  --cert "${KDESCHED_CLUSTER_DIR}/pki/apiserver.crt" --key "${KDESCHED_CLUSTER_DIR}/pki/apiserver.key" \
  --ca "${CA_FILE}" --client-cert "${ADMIN_CERT_FILE}" --client-key "${ADMIN_KEY_FILE}" --after 2 \
  --log "${WORK}/gateway.log" </dev/null >"${WORK}/gateway.out" 2>&1 7>&- 8>&- &
KDS_EXTRA_PIDS+=("$!")
must "gateway listening on ${GW_PORT}" kd_wait_for "gateway" 10 kds_port_in_use "${GW_PORT}"
# The admin kubeconfig's CA, pointed at the gateway (which presents the API server's certificate
# and goes upstream as the admin).
sed "s#server: .*#server: https://127.0.0.1:${GW_PORT}#" "${KUBECONFIG}" >"${WORK}/gateway.kubeconfig"

phase "1. 504 from the gateway; the webhook allows: counted as evicted"
must "order patched onto payment's node (violation made)" kds_violate
run_once allowed
check "one-shot exit 0 (with --fail-on-eviction-errors)" [ "${KDS_RC}" = 0 ]
check "the gateway answered 504" grep -q "504 sent" "${WORK}/gateway.log"
check "the API server answered after the 504" grep -q "upstream answered after the 504" "${WORK}/gateway.log"
check "logged Evicted pod with answer=504 and what confirmed it" \
  kds_log_has allowed "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} .*result=success answer=504 confirmed="
check "no eviction failed line" kds_log_lacks allowed 'msg="eviction failed"'
check "one eviction POST" [ "$(grep -c '^[0-9.]* eviction ' "${WORK}/gateway.log")" -eq 1 ]
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
check "cycle finished evicted=1" kds_log_has allowed 'msg="cycle finished" evicted=1 refused=0'

phase "2. 504 from the gateway; the webhook denies: a failure"
kill "${WEBHOOK_PID}" 2>/dev/null || true
kd_wait_for "old webhook gone" 10 bash -c "! kill -0 ${WEBHOOK_PID} 2>/dev/null"
must "webhook (holds 4 s, denies) listening on ${HOOK_PORT}" start_webhook deny
must "replacement payment Running elsewhere" kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
must "order patched onto payment's new node (violation made)" kds_violate
: >"${WORK}/gateway.log"
run_once denied
check "one-shot exit 1 (--fail-on-eviction-errors)" [ "${KDS_RC}" = 1 ]
check "the gateway answered 504" grep -q "504 sent" "${WORK}/gateway.log"
check "logged eviction failed, not evicted" \
  kds_log_has denied "msg=\"eviction failed\" pod=${KDS_NS}/${PAYMENT_POD} .*not evicted: the same uid, not being deleted"
check "no Evicted pod line" kds_log_lacks denied 'msg="Evicted pod"'
check "payment ${PAYMENT_POD} intact" kds_pod_intact "${PAYMENT_POD}" "${PAYMENT_UID}"

phase "no kdesched left"
check "every kdesched started (${#KDS_PIDS[@]}) has exited" kds_all_stopped
end_phase
