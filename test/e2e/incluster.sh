#!/usr/bin/env bash
# kdesched where it lives: the image built from the repository's Dockerfile (scripts/image.sh),
# run by a real kubelet on a real node (scripts/cluster/cluster.sh up --real-node: containerd 2,
# runc, the CNI bridge, kube-proxy) beside the kwok nodes, installed with the real helm. Every
# used-by story, in the order a user meets them:
#
#  1. The node and the image: the node is Ready, the image imported, the kubernetes Service
#     points at the API server through kube-proxy's rules.
#  2. Token rotation, started first: a release (namespace kdesched-token, dry-run, leader election
#     renewing every 2 s) whose token file changes under it (test/e2e/incluster_token.sh). By
#     default the test rotates it through a Secret volume and revokes the first token; with
#     KDESCHED_INCLUSTER_TOKEN=expiry it is the kubelet's 600 s projected token, refreshed at 80%
#     of its lifetime. Checked at the end (7): the kubelet rewrote the file, and after the first
#     token stopped working the same process kept making requests, with the new token (the audit
#     log's credential id), and no request was refused as unauthenticated but a few at the change.
#  3. helm install into kube-system (PodSecurity restricted enforced) as a Deployment with 2
#     replicas and leader election: the chart's defaults but for the image's pull policy and the
#     real node's nodeSelector/toleration (and service.enabled for the scrape). Both pods become
#     Ready through the kubelet's HTTPS probes and stay up; the process runs as 65532 with a
#     read-only root and seccomp; the API server sees it come from the pod's address through the
#     Service (conntrack); kubectl logs is logfmt; one Lease holder.
#  4. The seed story, order/payment, on kwok nodes: the in-cluster leader evicts payment by the
#     event trigger within 2 s (the interval is the chart's 5 min). Debian's Prometheus scrapes
#     the pods through the chart's Service endpoints over HTTPS (what the ServiceMonitor says)
#     and reads descheduler_pods_evicted_total.
#  5. A rollout: helm upgrade with another policy (triggers off, interval 15 s). The old pods get
#     the kubelet's SIGTERM, the leader releases the Lease and each exits 0 within the grace
#     period; a new pod leads; the next violation is evicted by the interval; no pod is evicted
#     twice (audit log). The leader's peak memory against the chart's limit. helm uninstall
#     leaves no object and no container.
#  6. CronJob (the chart's default kind): a Job made from it runs the one-shot on the node,
#     evicts payment, exits 0 and completes; with the watch verb on pods cut from the
#     ClusterRole the Job's pod fails and its log names the verb and the resource.
#  7. The token check of (2); cluster.sh down; nothing of the node is left on the machine.
#
# The image: ${KDESCHED_IMAGE_ARCHIVE} when set, else scripts/image.sh builds it (cached).
# Root only (network namespaces, mounts, iptables). Lasts about 2 minutes, 12 with
# KDESCHED_INCLUSTER_TOKEN=expiry (it waits for the first token to expire). Last line
# "incluster: N passed, N failed".
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=test/e2e/incluster_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/incluster_lib.sh"
# shellcheck source=test/e2e/incluster_token.sh
source "$(dirname "${BASH_SOURCE[0]}")/incluster_token.sh"
e2e_begin incluster --cluster
KDS_STATE_ON_FAILURE=(-A "nodes,pods,jobs,deployments,leases,endpointslices" -o wide)
[ "$(id -u)" -eq 0 ] || die "incluster.sh needs root (the real node)"

# ---------------------------------------------------------------------------------------------
phase "1. the image and a real node"
IMAGE_ARCHIVE="${KDESCHED_IMAGE_ARCHIVE:-${WORK}/kdesched.oci.tar}"
if [ ! -s "${IMAGE_ARCHIVE}" ]; then
  t="$(kd_now_ms)"
  must "scripts/image.sh builds the image" quietly bash "${ROOT}/scripts/image.sh" --out "${IMAGE_ARCHIVE}"
  timing "scripts/image.sh" "$(kd_elapsed "${t}")"
fi
must "image archive ${IMAGE_ARCHIVE}" test -s "${IMAGE_ARCHIVE}"
IMAGE="ghcr.io/kdesched/kdesched:v$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "${IC_CHART}/Chart.yaml")"
ic_machine_state | sort >"${WORK}/machine.before"
IC_AUDIT_LOG="${WORK}/audit.log"
ic_audit_policy "${WORK}/audit-policy.yaml"
t="$(kd_now_ms)"
must "cluster.sh up --real-node" quietly "${KDS_CLUSTER}" up --nodes 3 --real-node --image "${IMAGE_ARCHIVE}" \
  --apiserver-arg="--audit-policy-file=${WORK}/audit-policy.yaml" --apiserver-arg="--audit-log-path=${IC_AUDIT_LOG}" \
  --apiserver-arg=--audit-log-maxsize=0
timing "cluster up with the real node" "$(kd_elapsed "${t}")"
kd_env_load
check "node ${REAL_NODE_NAME} Ready" kd_node_ready "${REAL_NODE_NAME}"
check "the node's containerd has ${IMAGE}" bash -c "'${KD_BIN_DIR}/ctr' --address '${CONTAINERD_ADDRESS}' -n k8s.io images ls -q | grep -qx '${IMAGE}'"
check "the kubernetes Service's endpoint is the API server on the bridge (${REAL_NODE_IP})" bash -c \
  "'${KD_BIN_DIR}/kubectl' get endpointslice -n default -l kubernetes.io/service-name=kubernetes -o json | jq -e '[.items[].endpoints[].addresses[]] | index(\"${REAL_NODE_IP}\") != null' >/dev/null"

# ---------------------------------------------------------------------------------------------
phase "2. token rotation (${IC_TOKEN_MODE}): a release that keeps making requests"
token_start

# ---------------------------------------------------------------------------------------------
phase "3. helm install: Deployment, 2 replicas, leader election, kube-system restricted"
kd_kubectl label namespace kube-system pod-security.kubernetes.io/enforce=restricted --overwrite >/dev/null
t="$(kd_now_ms)"
must "helm install kdesched (Deployment)" quietly ic_helm install kdesched "${IC_CHART}" -n kube-system \
  --set kind=Deployment --set replicas=2 --set leaderElection.enabled=true --set service.enabled=true \
  "${IC_REAL_NODE_VALUES[@]}"
must "both replicas Running and Ready on the real node (kubelet's HTTPS probes)" kd_wait_for "2 ready" 120 \
  ic_ready_on_node kube-system app.kubernetes.io/instance=kdesched 2
timing "helm install -> 2 pods Ready" "$(kd_elapsed "${t}")"
mapfile -t HA_PODS < <(ic_pods kube-system app.kubernetes.io/instance=kdesched)
must "a leader holds the Lease" kd_wait_for "lease" 30 bash -c "[ -n \"\$('${KD_BIN_DIR}/kubectl' -n kube-system get lease descheduler -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null)\" ]"
LEADER="$(ic_lease_holder kube-system descheduler)"
LEADER_POD="${LEADER%%_*}"
check "the Lease holder (${LEADER}) is one of the pods" bash -c "printf '%s\n' ${HA_PODS[*]} | grep -qx '${LEADER_POD}'"
LEADER_PID="$(ic_container_pid kube-system "${LEADER_POD}")"
must "the leader's process is seen on the node" test -d "/proc/${LEADER_PID}"
check "runs as uid 65532" grep -Eq '^Uid:[[:space:]]+65532[[:space:]]+65532' "/proc/${LEADER_PID}/status"
check "seccomp filter on (RuntimeDefault)" grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/${LEADER_PID}/status"
check "no new privileges, no capabilities" bash -c "grep -Eq '^NoNewPrivs:[[:space:]]+1$' /proc/${LEADER_PID}/status && grep -Eq '^CapEff:[[:space:]]+0+$' /proc/${LEADER_PID}/status"
check "the root filesystem is read-only" bash -c "awk '\$5 == \"/\" { print \$6 }' /proc/${LEADER_PID}/mountinfo | grep -q '^ro'"
check "in-cluster config: KUBERNETES_SERVICE_HOST is the Service address" bash -c \
  "tr '\0' '\n' </proc/${LEADER_PID}/environ | grep -qx 'KUBERNETES_SERVICE_HOST=10.96.0.1'"
LEADER_IP="$(kd_kubectl -n kube-system get pod "${LEADER_POD}" -o 'jsonpath={.status.podIP}')"
check "kube-proxy translated ${LEADER_IP} -> 10.96.0.1:443 to the API server (conntrack)" bash -c \
  "conntrack -L -p tcp --src ${LEADER_IP} --orig-dst 10.96.0.1 2>/dev/null | grep -q 'src=${REAL_NODE_IP} dst=${LEADER_IP} sport=${APISERVER_PORT}'"
check "the API server saw the ServiceAccount's requests come from the pod (${LEADER_IP})" bash -c \
  "jq -e 'select(.user.username == \"system:serviceaccount:kube-system:kdesched\" and .sourceIPs[0] == \"${LEADER_IP}\")' '${IC_AUDIT_LOG}' | grep -q ."
for p in "${HA_PODS[@]}"; do
  kd_kubectl -n kube-system logs "${p}" >"${WORK}/logs-${p}.txt"
  check "kubectl logs ${p}: logfmt, every line with ts, level, msg" ic_logfmt_valid "${WORK}/logs-${p}.txt"
done
check "the leader logged 'became leader'" grep -q 'msg="became leader"' "${WORK}/logs-${LEADER_POD}.txt"

# ---------------------------------------------------------------------------------------------
phase "4. the seed story: order/payment, evicted by the in-cluster leader's event trigger"
must "order and payment Running on kwok nodes" kds_create_workload
kd_kubectl logs -f -n kube-system "${LEADER_POD}" >"${WORK}/leader-follow.log" 2>&1 &
KDS_EXTRA_PIDS+=("$!")
must "order moved onto payment's node" kds_violate
must "payment evicted" kd_wait_for "payment evicted" 20 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
eviction="$(ic_audit ".objectRef.subresource == \"eviction\" and .objectRef.name == \"${PAYMENT_POD}\" and .responseStatus.code == 201" | jq -c '.[0]')"
# The new order pod: the ReplicaSet controller's last pod create in default before the Eviction
# (a generateName create carries no name in the audit event).
evicted_at="$(jq -r .requestReceivedTimestamp <<<"${eviction}")"
created="$(ic_audit ".verb == \"create\" and .objectRef.resource == \"pods\" and .objectRef.namespace == \"default\" and (.objectRef.subresource // \"\") == \"\" and .responseStatus.code == 201 and .user.username == \"system:serviceaccount:kube-system:replicaset-controller\"" |
  jq -r --arg t "${evicted_at}" '[.[] | select(.stageTimestamp < $t)] | last | .stageTimestamp')"
check "the eviction came from the leader's pod (${LEADER_IP})" test "$(jq -r '.sourceIPs[0]' <<<"${eviction}")" = "${LEADER_IP}"
lat_ms=$(( $(kds_ts_ms "${evicted_at}") - $(kds_ts_ms "${created}") ))
timing "in-cluster: order bound next to payment -> Eviction received" "$(ms_str "${lat_ms}")"
check "evicted by the event trigger within 2 s (interval 5 min)" test "${lat_ms}" -lt 2000
check "replacement payment placed elsewhere" kd_wait_for "replacement" 60 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}"
ic_prometheus_start
check "Prometheus scrapes both pods through the chart's Service (https, endpoints)" kd_wait_for "2 targets up" 60 \
  ic_prom_query_equals 'count(up{job="kdesched"} == 1)' 2
check "Prometheus reads descheduler_pods_evicted_total >= 1" kd_wait_for "evicted_total" 30 \
  ic_prom_query_at_least 'sum(descheduler_pods_evicted_total{job="kdesched"})' 1
for p in "${HA_PODS[@]}"; do
  check "${p}: no container restart (liveness probe passing)" test "$(kd_kubectl -n kube-system get pod "${p}" -o 'jsonpath={.status.containerStatuses[0].restartCount}')" = 0
done
PEAK_BEFORE="$(ic_memory_peak "${LEADER_PID}" || echo 0)"

# ---------------------------------------------------------------------------------------------
phase "5. rollout: helm upgrade with another policy (triggers off, interval 15 s)"
kd_kubectl get pods -n kube-system -l app.kubernetes.io/instance=kdesched -w -o json >"${WORK}/ha-watch.json" 2>/dev/null &
KDS_EXTRA_PIDS+=("$!")
kd_kubectl get lease -n kube-system descheduler -w -o json >"${WORK}/lease-watch.json" 2>/dev/null &
KDS_EXTRA_PIDS+=("$!")
GRACE="$(kd_kubectl -n kube-system get pod "${LEADER_POD}" -o 'jsonpath={.spec.terminationGracePeriodSeconds}')"
t="$(kd_now_ms)"
must "helm upgrade (policy and interval changed)" quietly ic_helm upgrade kdesched "${IC_CHART}" -n kube-system --reuse-values \
  --set deschedulingInterval=15s --set-json 'deschedulerPolicy.kdesched={"triggers":{"enabled":false}}'
must "two new pods Ready, the old ones gone" kd_wait_for "rollout" 180 ic_rolled_over
timing "helm upgrade -> both new pods Ready" "$(kd_elapsed "${t}")"
must "a new pod leads" kd_wait_for "new leader" 60 ic_new_leader
NEW_LEADER_POD="$(ic_lease_holder kube-system descheduler)"; NEW_LEADER_POD="${NEW_LEADER_POD%%_*}"
for p in "${HA_PODS[@]}"; do
  term="$(jq -cs --arg p "${p}" '[.[] | select(.metadata.name == $p) | .status.containerStatuses[0].state.terminated // empty
    | select(.finishedAt != null)] | last // {}' "${WORK}/ha-watch.json")"
  # deletionTimestamp is the end of the grace period: the request was that much earlier.
  del="$(jq -rs --arg p "${p}" '[.[] | select(.metadata.name == $p and .metadata.deletionTimestamp != null)
    | ((.metadata.deletionTimestamp | fromdateiso8601) - .metadata.deletionGracePeriodSeconds | todateiso8601)] | first // ""' "${WORK}/ha-watch.json")"
  check "${p} exited 0 on the kubelet's SIGTERM" test "$(jq -r '.exitCode // "none"' <<<"${term}")" = 0
  if [ -n "${del}" ] && [ "$(jq -r '.finishedAt // ""' <<<"${term}")" != "" ]; then
    took=$(( $(kds_ts_ms "$(jq -r .finishedAt <<<"${term}")") - $(kds_ts_ms "${del}") ))
    timing "${p}: deletion -> container exited" "$(ms_str $(( took < 0 ? 0 : took )))"
    check "${p} exited within terminationGracePeriodSeconds (${GRACE}s)" test "${took}" -lt $(( GRACE * 1000 ))
  else
    fail "${p}: no terminated state or deletion time seen"
  fi
done
check "the old leader released the Lease on SIGTERM" grep -q 'msg="released leadership"\|msg="lease released"\|released' "${WORK}/leader-follow.log"
check "the old leader's last line: stopped exit=0" bash -c "grep 'msg=\"stopped\"' '${WORK}/leader-follow.log' | tail -n1 | grep -q 'exit=0'"
# Each change of holder during the rollout: from the old holder's container exit to the next
# holder's acquireTime.
while IFS=$'\t' read -r prev next acq; do
  end="$(jq -rs --arg p "${prev%%_*}" '[.[] | select(.metadata.name == $p) | .status.containerStatuses[0].state.terminated.finishedAt // empty] | first // ""' "${WORK}/ha-watch.json")"
  [ -n "${end}" ] || continue
  took=$(( $(kds_ts_ms "${acq}") - $(kds_ts_ms "${end}") ))
  timing "Lease ${prev%%_*} exited -> ${next%%_*} acquired" "$(ms_str $(( took < 0 ? 0 : took )))"
  # Released, not expired: a released Lease is taken at the candidate's next try (retryPeriod 2 s,
  # plus its requests on a loaded machine; finishedAt has whole seconds, up to 1 s more), an
  # expired one no sooner than leaseDuration (15 s) after the last renewal, >= 13 s after the exit.
  check "${next%%_*} took over within 8 s of ${prev%%_*}'s exit (released: an expired Lease takes >= 13 s)" \
    test "${took}" -lt 8000
  [ "${took}" -lt 8000 ] || ic_handover_logs "${next%%_*}"
done < <(jq -rs '[.[] | select((.spec.holderIdentity // "") != "") | {h: .spec.holderIdentity, a: .spec.acquireTime}] | . as $l
  | [range(1; length) | select($l[.].h != $l[. - 1].h) | [$l[. - 1].h, $l[.].h, $l[.].a]] | .[] | @tsv' "${WORK}/lease-watch.json")
kd_kubectl logs -f -n kube-system "${NEW_LEADER_POD}" >"${WORK}/new-leader-follow.log" 2>&1 &
KDS_EXTRA_PIDS+=("$!")
t="$(kd_now_ms)"
must "order moved onto payment's node again" kds_violate
must "payment evicted by the 15 s interval (triggers off)" kd_wait_for "payment evicted" 45 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
timing "in-cluster, interval 15 s: violation -> eviction" "$(kd_elapsed "${t}")"
check "the new leader logged the eviction after a periodic cycle" kd_wait_for "log" 10 \
  bash -c "grep -q 'msg=\"Evicted pod\".*${PAYMENT_POD}' '${WORK}/new-leader-follow.log' && ! grep -q 'msg=\"triggered run finished\"' '${WORK}/new-leader-follow.log'"
twice="$(ic_audit '.objectRef.subresource == "eviction" and .responseStatus.code == 201' | jq '[group_by(.objectRef.namespace + "/" + .objectRef.name)[] | length] | max // 0')"
check "no pod evicted twice (audit log: most Evictions of one pod = ${twice})" test "${twice}" -le 1
NEW_PID="$(ic_container_pid kube-system "${NEW_LEADER_POD}")"
PEAK_AFTER="$(ic_memory_peak "${NEW_PID}" || echo 0)"
LIMIT="$(kd_kubectl -n kube-system get pod "${NEW_LEADER_POD}" -o 'jsonpath={.spec.containers[0].resources.limits.memory}')"
HWM_KB="$(awk '/^VmHWM:/ { print $2 }' "/proc/${NEW_PID}/status")"
timing "leader peak memory vs the chart's limit ${LIMIT}" "cgroup $(( PEAK_BEFORE / 1048576 )) MiB (first leader), $(( PEAK_AFTER / 1048576 )) MiB (after rollout); peak RSS $(( HWM_KB / 1024 )) MiB"
check "peak memory under the limit" test "${PEAK_AFTER}" -lt $(( 256 * 1048576 ))
must "helm uninstall kdesched" quietly ic_helm uninstall kdesched -n kube-system --wait
check "no object of the release left" kd_wait_for "objects gone" 60 ic_release_gone kdesched kube-system
check "no container of the release left on the node" kd_wait_for "containers gone" 60 ic_no_containers kube-system "kdesched-"
note "the Lease kube-system/descheduler stays (holder '$(ic_lease_holder kube-system descheduler)'), as client-go's elections leave theirs"

# ---------------------------------------------------------------------------------------------
phase "6. CronJob (the chart's default kind): a Job's pod runs the one-shot"
must "helm install kdesched-cron (CronJob, suspended: the test makes its Jobs)" quietly ic_helm install kdesched-cron \
  "${IC_CHART}" -n kube-system --set suspend=true "${IC_REAL_NODE_VALUES[@]}"
must "order moved onto payment's node" kds_violate
t="$(kd_now_ms)"
must "kubectl create job --from=cronjob/kdesched-cron" quietly kd_kubectl -n kube-system create job ic-run-1 --from=cronjob/kdesched-cron
check "the Job completes" kd_wait_for "job complete" 120 bash -c \
  "'${KD_BIN_DIR}/kubectl' -n kube-system get job ic-run-1 -o json | jq -e '[.status.conditions[]? | select(.type == \"Complete\" and .status == \"True\")] | length == 1' >/dev/null"
timing "CronJob's Job created -> Complete" "$(kd_elapsed "${t}")"
JOB_POD="$(kd_kubectl -n kube-system get pods -l job-name=ic-run-1 -o 'jsonpath={.items[0].metadata.name}')"
check "its pod ran on the real node" test "$(kd_kubectl -n kube-system get pod "${JOB_POD}" -o 'jsonpath={.spec.nodeName}')" = "${REAL_NODE_NAME}"
check "its container exited 0" test "$(kd_kubectl -n kube-system get pod "${JOB_POD}" -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}')" = 0
check "payment evicted by the Job" kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
kd_kubectl -n kube-system logs "${JOB_POD}" >"${WORK}/job-1.log"
check "the Job's log has the eviction" grep -q 'msg="Evicted pod"' "${WORK}/job-1.log"
check "the Job's log is logfmt" ic_logfmt_valid "${WORK}/job-1.log"
# Cut list and watch on pods: a one-shot run syncs by watch-list and, refused, by LIST.
kd_kubectl get clusterrole kdesched-cron -o json >"${WORK}/clusterrole.json"
jq '.rules |= map(if ((.resources // []) | index("pods")) and ((.apiGroups // [""]) | index("")) then .verbs -= ["list", "watch"] else . end | select(.verbs | length > 0))
  | del(.metadata.resourceVersion, .metadata.managedFields)' "${WORK}/clusterrole.json" >"${WORK}/clusterrole-cut.json"
must "ClusterRole kdesched-cron without list and watch on pods" quietly kd_kubectl replace -f "${WORK}/clusterrole-cut.json"
must "kubectl create job ic-run-2" quietly kd_kubectl -n kube-system create job ic-run-2 --from=cronjob/kdesched-cron
check "the Job's pod fails" kd_wait_for "job failed" 120 bash -c \
  "'${KD_BIN_DIR}/kubectl' -n kube-system get job ic-run-2 -o json | jq -e '(.status.failed // 0) >= 1' >/dev/null"
FAILED_POD="$(kd_kubectl -n kube-system get pods -l job-name=ic-run-2 -o json | jq -r '[.items[] | select(.status.phase == "Failed")][0].metadata.name')"
kd_kubectl -n kube-system logs "${FAILED_POD}" >"${WORK}/job-2.log" 2>&1 || true
check "kubectl logs names the verb (list) and the resource (pods)" ic_log_names_verb "${WORK}/job-2.log" list pods
check "its exit code is not 0" bash -c "[ \"\$('${KD_BIN_DIR}/kubectl' -n kube-system get pod '${FAILED_POD}' -o 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}')\" != 0 ]"
kd_kubectl -n kube-system delete job ic-run-2 --wait=false >/dev/null
must "helm uninstall kdesched-cron" quietly ic_helm uninstall kdesched-cron -n kube-system --wait
kd_kubectl -n kube-system delete job ic-run-1 --wait=false >/dev/null 2>&1 || true
check "no object of the CronJob release left" kd_wait_for "objects gone" 60 ic_release_gone kdesched-cron kube-system

# ---------------------------------------------------------------------------------------------
phase "7. token rotation, then down"
token_finish
for p in "${KDS_EXTRA_PIDS[@]}"; do kill -TERM "${p}" 2>/dev/null || true; done
t="$(kd_now_ms)"
must "cluster.sh down" quietly "${KDS_CLUSTER}" down
timing "cluster.sh down (with the real node)" "$(kd_elapsed "${t}")"
check "nothing of the real node left (cluster.sh real-node-leftovers)" test -z "$("${KDS_CLUSTER}" real-node-leftovers)"
ic_machine_clean() { ic_machine_state | sort >"${WORK}/machine.after"; diff "${WORK}/machine.before" "${WORK}/machine.after"; }
check "the machine's links, rules, mounts and processes as before up" kd_wait_for "machine state" 10 ic_machine_clean
diff "${WORK}/machine.before" "${WORK}/machine.after" || ps -eo pid,etime,args | grep -E 'containerd|kubelet|kube-proxy' | grep -v grep
