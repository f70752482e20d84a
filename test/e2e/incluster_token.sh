# incluster.sh's token story (sourced after incluster_lib.sh): a release that leads (leader
# election renewing every 2 s, so a steady stream of requests) while the token file under
# /var/run/secrets/kubernetes.io/serviceaccount changes and the old token stops working. Two ways,
# KDESCHED_INCLUSTER_TOKEN picks one:
#   rotate  (the default, CI) the test rotates the token itself, in about a minute: the file comes
#           from a Secret holding a TokenRequest token bound to another Secret (tok-a); the test
#           puts a second token (bound to tok-b) into it, waits until the kubelet has rewritten the
#           file on the node (its volume resync, within about a minute), then deletes tok-a, which
#           makes the API server refuse the first token at once. The same process must go on with
#           the new token. This proves what a rotation needs of kdesched (the file re-read at
#           least every minute, and at once after a 401), through the kubelet's own atomic writes.
#   expiry  (about 10 minutes more) the kubelet's projected token with expirationSeconds 600, the
#           shortest the API server allows: the kubelet refreshes it at 80% of its lifetime, and
#           the same process must go on after the first one expired.
# token_start (story 2) installs the release; token_finish (story 7) rotates or waits and checks.
# Both leave TOKEN_* variables for each other.

IC_TOKEN_MODE="${KDESCHED_INCLUSTER_TOKEN:-rotate}"
case "${IC_TOKEN_MODE}" in rotate | expiry) ;; *) die "KDESCHED_INCLUSTER_TOKEN=${IC_TOKEN_MODE}: rotate or expiry" ;; esac
IC_TOKEN_NS=kdesched-token
IC_TOKEN_SA="system:serviceaccount:${IC_TOKEN_NS}:kdesched-token"

# token_values FILE: the release's values (the token volume is the mode's).
token_values() {
  cat >"$1" <<'YAML'
kind: Deployment
replicas: 1
# Renewed every 2 s (upstream's defaults renew every 26 s): a steady stream of requests.
leaderElection: {enabled: true, resourceNamespace: kdesched-token, leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 2s}
# Evicts nothing (its own namespace only) but leads, so it keeps making requests across the
# rotation (--dry-run would turn leader election off).
deschedulerPolicy:
  profiles:
  - name: token
    pluginConfig:
    - name: DefaultEvictor
    - name: RemovePodsViolatingInterPodAntiAffinity
      args: {namespaces: {include: [kdesched-token]}}
    plugins:
      deschedule: {enabled: [RemovePodsViolatingInterPodAntiAffinity]}
resources: {requests: {cpu: 100m, memory: 64Mi}, limits: {cpu: 500m, memory: 256Mi}}
automountServiceAccountToken: false
extraServiceAccountVolumeMounts:
- {name: api-access, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
YAML
  if [ "${IC_TOKEN_MODE}" = rotate ]; then
    # The ServiceAccount is the test's, made before the token it mints.
    cat >>"$1" <<'YAML'
serviceAccount: {create: false, name: kdesched-token}
extraServiceAccountVolumes:
- name: api-access
  secret: {secretName: kd-sa-token}
YAML
  else
    cat >>"$1" <<'YAML'
extraServiceAccountVolumes:
- name: api-access
  projected:
    sources:
    - serviceAccountToken: {path: token, expirationSeconds: 600}
    - configMap: {name: kube-root-ca.crt, items: [{key: ca.crt, path: ca.crt}]}
    - downwardAPI: {items: [{path: namespace, fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}}]}
YAML
  fi
}

# token_mint BOUND_SECRET: a TokenRequest token of the release's ServiceAccount, bound to the
# Secret (deleting it invalidates the token).
token_mint() {
  kd_kubectl -n "${IC_TOKEN_NS}" create token kdesched-token --bound-object-kind Secret \
    --bound-object-name "$1" --duration 3600s
}

# token_secret TOKEN: creates or replaces Secret kd-sa-token (token, ca.crt, namespace), the files
# a pod's service-account volume holds.
token_secret() {
  kd_kubectl -n "${IC_TOKEN_NS}" create secret generic kd-sa-token --from-literal=token="$1" \
    --from-file=ca.crt="${WORK}/token-ca.crt" --from-literal=namespace="${IC_TOKEN_NS}" \
    --dry-run=client -o json | kd_kubectl apply -f - >/dev/null
}

token_start() {
  kd_kubectl create namespace "${IC_TOKEN_NS}" >/dev/null
  kd_kubectl label namespace "${IC_TOKEN_NS}" pod-security.kubernetes.io/enforce=restricted >/dev/null
  token_values "${WORK}/values-token.yaml"
  local plugin=projected
  if [ "${IC_TOKEN_MODE}" = rotate ]; then
    plugin=secret
    must "ServiceAccount kdesched-token and the bound Secrets tok-a, tok-b" quietly bash -c \
      "'${KD_BIN_DIR}/kubectl' -n ${IC_TOKEN_NS} create serviceaccount kdesched-token &&
       '${KD_BIN_DIR}/kubectl' -n ${IC_TOKEN_NS} create secret generic tok-a --from-literal=bound=a &&
       '${KD_BIN_DIR}/kubectl' -n ${IC_TOKEN_NS} create secret generic tok-b --from-literal=bound=b"
    must "the namespace's kube-root-ca.crt" kd_wait_for "kube-root-ca.crt" 30 bash -c \
      "'${KD_BIN_DIR}/kubectl' -n ${IC_TOKEN_NS} get configmap kube-root-ca.crt -o 'jsonpath={.data.ca\\.crt}' >'${WORK}/token-ca.crt' && test -s '${WORK}/token-ca.crt'"
    TOKEN_A="$(token_mint tok-a)"
    must "Secret kd-sa-token with a token bound to tok-a" quietly token_secret "${TOKEN_A}"
  fi
  must "helm install kdesched-token" quietly ic_helm install kdesched-token "${IC_CHART}" -n "${IC_TOKEN_NS}" \
    -f "${WORK}/values-token.yaml" "${IC_REAL_NODE_VALUES[@]}"
  must "the token release's pod is Ready on the real node" kd_wait_for "token pod" 120 \
    ic_ready_on_node "${IC_TOKEN_NS}" app.kubernetes.io/instance=kdesched-token 1
  TOKEN_POD="$(ic_pods "${IC_TOKEN_NS}" app.kubernetes.io/instance=kdesched-token)"
  TOKEN_FILE="$(ic_token_file "${IC_TOKEN_NS}" "${TOKEN_POD}" api-access "${plugin}")"
  must "the token file is on the node" test -s "${TOKEN_FILE}"
  cp "${TOKEN_FILE}" "${WORK}/token.first"
  TOKEN1="$(ic_token_claims "${WORK}/token.first")"
  TOKEN1_EXP="$(jq -r .exp <<<"${TOKEN1}")"
  note "first token: jti $(jq -r .jti <<<"${TOKEN1}"), expires $(date -u -d "@${TOKEN1_EXP}" +%T)"
  if [ "${IC_TOKEN_MODE}" = expiry ]; then
    check "the first token lives 600 s" test "$(jq -r '.exp - .iat' <<<"${TOKEN1}")" -eq 600
  else
    check "the node's file is the token bound to tok-a" test "$(jq -r '."kubernetes.io".secret.name' <<<"${TOKEN1}")" = tok-a
  fi
}

# token_requests_since EPOCH: the release's audited requests received after EPOCH, in order.
token_requests_since() {
  ic_audit ".user.username == \"${IC_TOKEN_SA}\" and (.requestReceivedTimestamp | sub(\"\\\\.[0-9]+Z$\"; \"Z\") | fromdateiso8601) > $1"
}

# token_with_jti JTI: the requests on stdin (a JSON array) that carried the token with that id.
token_with_jti() {
  jq --arg j "JTI=$1" '[.[] | select(.user.extra["authentication.kubernetes.io/credential-id"][0] == $j)]'
}

# token_used N EPOCH JTI: true once N requests received after EPOCH carried the token with that id.
token_used() {
  [ "$(token_requests_since "$2" | token_with_jti "$3" | jq length)" -ge "$1" ]
}

# token_rotate: the new token into the Secret, the kubelet's rewrite, the old token revoked.
# Sets TOKEN_CUT: the second before the first token's bound Secret was deleted.
token_rotate() {
  local token_b t
  token_b="$(token_mint tok-b)"
  t="$(kd_now_ms)"
  must "Secret kd-sa-token now holds a token bound to tok-b" quietly token_secret "${token_b}"
  printf '%s' "${token_b}" >"${WORK}/token.second"
  # The kubelet rewrites a Secret volume at its next resync of the pod (about a minute).
  must "the kubelet rewrote the token file on the node" kd_wait_for "token file" 150 \
    bash -c "[ \"\$(tr -d '[:space:]' <'${TOKEN_FILE}')\" = \"\$(cat '${WORK}/token.second')\" ]"
  timing "Secret updated -> the kubelet rewrote the file" "$(kd_elapsed "${t}")"
  TOKEN_CUT="$(date +%s)"
  must "delete Secret tok-a (the first token's bound object)" quietly kd_kubectl -n "${IC_TOKEN_NS}" delete secret tok-a
  # The API server keeps a token's successful authentication for 10 s (TokenSuccessCacheTTL), then
  # finds the bound Secret gone: "service account token has been invalidated".
  t="$(kd_now_ms)"
  check "the first token is refused now (401)" kd_wait_for "first token refused" 30 bash -c \
    "[ \"\$(curl -s -o /dev/null -w '%{http_code}' --cacert '${CA_FILE}' -H \"Authorization: Bearer ${TOKEN_A}\" '${APISERVER_URL}/api')\" = 401 ]"
  timing "tok-a deleted -> the first token refused" "$(kd_elapsed "${t}")"
}

token_finish() {
  local since t
  # scripts/cluster/ci.sh runs the chart and differential tests from here on; this file tells it.
  [ -z "${KDESCHED_INCLUSTER_WAITING:-}" ] || : >"${KDESCHED_INCLUSTER_WAITING}"
  if [ "${IC_TOKEN_MODE}" = rotate ]; then
    token_rotate
    since="${TOKEN_CUT}"
  else
    local wait_s=$((TOKEN1_EXP + 45 - $(date +%s)))
    if [ "${wait_s}" -gt 0 ]; then note "waiting ${wait_s}s for the first token to expire"; sleep "${wait_s}"; fi
    check "the kubelet rewrote the token file" bash -c "! cmp -s '${WORK}/token.first' '${TOKEN_FILE}'"
    since="${TOKEN1_EXP}"
  fi
  TOKEN2="$(ic_token_claims "${TOKEN_FILE}")"
  TOKEN2_JTI="$(jq -r .jti <<<"${TOKEN2}")"
  [ "${IC_TOKEN_MODE}" = rotate ] ||
    timing "token refreshed by the kubelet (age of the first token then)" "$(($(jq -r .iat <<<"${TOKEN2}") - $(jq -r .iat <<<"${TOKEN1}")))s"
  # Renewals every 2 s: five with the new token come within about 10 s of it being needed.
  t="$(kd_now_ms)"
  kd_wait_for "5 requests with the new token" 60 token_used 5 "${since}" "${TOKEN2_JTI}" || true
  [ "${IC_TOKEN_MODE}" = expiry ] || timing "old token refused -> 5 requests with the new one" "$(kd_elapsed "${t}")"
  local after new n_new
  after="$(token_requests_since "${since}")"
  check "requests after the first token stopped working: $(jq length <<<"${after}") (lease renewals every 2 s)" test "$(jq length <<<"${after}")" -ge 5
  new="$(token_with_jti "${TOKEN2_JTI}" <<<"${after}")"
  n_new="$(jq length <<<"${new}")"
  check "${n_new} of them with the new token (credential id JTI=${TOKEN2_JTI})" test "${n_new}" -ge 5
  check "every request with the new token succeeded" test "$(jq '[.[] | select(.responseStatus.code >= 400)] | length' <<<"${new}")" -eq 0
  check "the last 5 requests succeeded" test "$(jq '[.[-5:][] | select(.responseStatus.code >= 400)] | length' <<<"${after}")" -eq 0
  # kdesched (like client-go) re-reads the file at least every minute and at once after a 401: a
  # request or two may still carry the old token just after it stopped working. A storm would be
  # many.
  local ip n401
  ip="$(kd_kubectl -n "${IC_TOKEN_NS}" get pod "${TOKEN_POD}" -o 'jsonpath={.status.podIP}')"
  n401="$(ic_audit ".responseStatus.code == 401 and .sourceIPs[0] == \"${ip}\"" | jq length)"
  timing "401 answers to the pod around the change" "${n401}"
  check "no 401 storm from the pod (${ip}): ${n401} (at most 3)" test "${n401}" -le 3
  check "the token pod never restarted" test "$(kd_kubectl -n "${IC_TOKEN_NS}" get pod "${TOKEN_POD}" -o 'jsonpath={.status.containerStatuses[0].restartCount}')" = 0
  must "helm uninstall kdesched-token" quietly ic_helm uninstall kdesched-token -n "${IC_TOKEN_NS}" --wait
}
