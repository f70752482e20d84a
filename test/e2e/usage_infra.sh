#!/usr/bin/env bash
# The real usage sources the LowNodeUtilization/HighNodeUtilization stories run against
# (scripts/cluster/metrics.sh, usage.sh), without kdesched:
#
#  1. up --metrics-server with 3 kwok nodes (cpu 4): metrics-server from its Go module, registered as
#     APIService v1beta1.metrics.k8s.io, scraping kwok's kubelet resource endpoints.
#  2. Two pods per node with equal requests (500m, 512Mi); usage set per node: node1 3600m (90%)
#     and 6Gi, node2 and node3 800m (20%). metrics.k8s.io, through the aggregator, reports those
#     values for the nodes and each pod's share; `kubectl top` agrees.
#  3. node2 changed to 3000m: the time until metrics.k8s.io reports it is measured (bound 45 s).
#  4. metrics-server stopped: `kubectl get --raw /apis/metrics.k8s.io/...` fails at once and the
#     APIService turns Available=False (its 30 s re-check: bound 60 s). Started again: the
#     APIService is Available and the values come back (bound 90 s; both times measured).
#  5. Prometheus (Debian's) scraping the same endpoints: upstream's README query
#     instance:node_cpu:rate:sum gives one sample per node, instance = node name, 0.9/0.75/0.2.
#  6. Prometheus behind nginx requiring a bearer token (Prometheus cannot require one itself), the
#     token read from a Secret's prometheusAuthToken: none or a wrong one gets 401, the Secret's one
#     the query's answer; after a rotation the new token works and the old one gets 401.
#  7. down stops metrics-server, Prometheus and nginx with the rest.
#
# Own cluster directory (${KDESCHED_USAGE_INFRA_DIR:-/tmp/kdesched-usage-infra.PID}). Needs
# metrics-server in the binary cache (scripts/cluster/build.sh metrics-server) and Debian's
# prometheus and nginx (nginx-light). Prints "usage-infra: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/cluster/usage.sh
source "${ROOT}/scripts/cluster/usage.sh"
e2e_begin usage-infra --cluster
command -v prometheus >/dev/null || die "prometheus is needed (Debian package prometheus; scripts/install-deps.sh)"
command -v nginx >/dev/null || die "nginx is needed (Debian package nginx-light)"
KDS_STATE_ON_FAILURE=("nodes,pods,apiservices" -o wide)

# tol MILLI: the tolerance of a cpu reading: 1/25 of it plus 10m (metrics-server times its
# scrapes itself; kwok integrates at its own clock).
tol() { echo $(($1 / 25 + 10)); }

# ---------------------------------------------------------------------------
phase "cluster up --metrics-server (3 kwok nodes)"
t="$(kd_now_ms)"
must "cluster.sh up --nodes 3 --metrics-server" quietly "${KDS_CLUSTER}" up --nodes 3 --metrics-server
timing "up --metrics-server until the APIService is Available" "$(ms_str $(($(kd_now_ms) - t)))"
kd_env_load
check "APIService v1beta1.metrics.k8s.io Available" kd_usage_apiservice_is True
node_port() { kd_kubectl get node "$1" -o 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}'; }
check "node1 advertises kwok's server port ${KWOK_SERVER_URL##*:} as its kubelet port" \
  [ "$(node_port node1)" = "${KWOK_SERVER_URL##*:}" ]
kwok_endpoint() {
  curl -fsS -m 5 --cacert "${CA_FILE}" "${KWOK_SERVER_URL}/metrics/nodes/node1/metrics/resource" |
    grep -q '^node_cpu_usage_seconds_total '
}
check "kwok serves node1's resource metrics over TLS (cluster CA)" kwok_endpoint

phase "usage per node: node1 90%, node2 and node3 20%, equal requests"
pods_yaml() {
  local n i
  for n in node1 node2 node3; do
    for i in a b; do
      cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: load-${n}-${i}, namespace: ${KDS_NS}, labels: {app: load}}
spec:
  nodeName: ${n}
  containers:
  - name: app
    image: registry.k8s.io/pause:3.10
    resources: {requests: {cpu: 500m, memory: 512Mi}}
EOF
    done
  done
}
pods_yaml | kd_kubectl apply -f - >/dev/null
must "6 pods Running" kd_wait_pods_ready "${KDS_NS}" app=load 6 60
must "set node1 to 3600m and 6Gi" kd_usage_set_node node1 3600m 6Gi
must "set node2 to 800m" kd_usage_set_node node2 800m
must "set node3 to 800m" kd_usage_set_node node3 800m
t="$(kd_now_ms)"
check "metrics.k8s.io lists the 3 nodes" kd_usage_wait_nodes 3 60
check "node1 at 3600m" kd_usage_wait_node_cpu node1 3600 "$(tol 3600)" 45
timing "from setting the usage to metrics.k8s.io reporting node1" "$(ms_str $(($(kd_now_ms) - t)))"
check "node2 at 800m" kd_usage_wait_node_cpu node2 800 "$(tol 800)" 30
check "node3 at 800m" kd_usage_wait_node_cpu node3 800 "$(tol 800)" 30
note "metrics.k8s.io: node1 $(kd_usage_node_cpu node1)m, node2 $(kd_usage_node_cpu node2)m, node3 $(kd_usage_node_cpu node3)m"
check "node1's memory is 6Gi (+-1Mi)" kd_within "$(kd_usage_node_memory node1)" $((6 * 1024 * 1024 * 1024)) 1048576
check "pod load-node1-a at 1800m" kd_usage_wait_pod_cpu "${KDS_NS}" load-node1-a 1800 "$(tol 1800)" 30
check "pod load-node2-b at 400m" kd_usage_wait_pod_cpu "${KDS_NS}" load-node2-b 400 "$(tol 400)" 30
pods_listed() { [ "$(kd_metrics_raw "namespaces/${KDS_NS}/pods" | jq '[.items[] | select(.metadata.labels.app == "load")] | length')" = 6 ]; }
check "PodMetrics list: all 6 pods, with their labels" kd_wait_for "6 PodMetrics" 30 pods_listed
# kubectl rounds the percentage down: 3599m of 4 cores is 89%.
top_node1() { kd_kubectl top node node1 --no-headers | tee "${WORK}/top.out" | awk '{ exit !($2 ~ /^3[56][0-9][0-9]m$/ && $3 ~ /^(89|9[0-2])%$/) }'; }
check "kubectl top node node1: about 3600m, 90%" top_node1
note "kubectl top: $(cat "${WORK}/top.out")"

phase "a usage change reaches metrics.k8s.io"
must "set node2 to 3000m" kd_usage_set_node node2 3000m
t="$(kd_now_ms)"
check "node2 at 3000m within 45 s" kd_usage_wait_node_cpu node2 3000 "$(tol 3000)" 45
CHANGE_MS=$(($(kd_now_ms) - t))
timing "usage change to metrics.k8s.io (metric-resolution 10s)" "$(ms_str "${CHANGE_MS}")"

phase "metrics-server stopped, then started again"
must "cluster.sh stop-metrics-server" quietly "${KDS_CLUSTER}" stop-metrics-server
t="$(kd_now_ms)"
raw_fails() { ! kd_kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes >"${WORK}/raw.out" 2>&1; }
check "kubectl get --raw /apis/metrics.k8s.io/v1beta1/nodes fails" kd_wait_for "the GET to fail" 10 raw_fails
note "kubectl: $(head -c 200 "${WORK}/raw.out")"
timing "metrics-server stopped to the GET failing" "$(ms_str $(($(kd_now_ms) - t)))"
check "APIService Available=False within 60 s" kd_wait_for "Available=False" 60 kd_usage_apiservice_is False
timing "metrics-server stopped to APIService Available=False" "$(ms_str $(($(kd_now_ms) - t)))"
note "APIService: $(kd_usage_apiservice)"
check "still failing while it is down" raw_fails
must "cluster.sh start-metrics-server" quietly "${KDS_CLUSTER}" start-metrics-server
t="$(kd_now_ms)"
check "APIService Available=True within 90 s" kd_wait_for "Available=True" 90 kd_usage_apiservice_is True
timing "metrics-server started to APIService Available=True" "$(ms_str $(($(kd_now_ms) - t)))"
check "node1 back at 3600m" kd_usage_wait_node_cpu node1 3600 "$(tol 3600)" 60
timing "metrics-server started to node1's usage served again" "$(ms_str $(($(kd_now_ms) - t)))"

phase "Prometheus scrapes the same endpoints"
t="$(kd_now_ms)"
must "cluster.sh start-prometheus" quietly "${KDS_CLUSTER}" start-prometheus
kd_env_load
targets_up() { [ "$(kd_prom_query 'sum(up{job="kubelet-resource"})' | jq -r '.data.result[0].value[1]')" = 3 ]; }
check "3 kubelet-resource targets up" kd_wait_for "3 targets up" 30 targets_up
Q='instance:node_cpu:rate:sum'
check "${Q}: node1 0.9" kd_wait_for "node1 at 0.9" 30 kd_prom_value_near "${Q}" node1 0.9 0.03
timing "start-prometheus to the first per-node value" "$(ms_str $(($(kd_now_ms) - t)))"
# Each target's first scrapes come at their own moment: wait for each node's value.
check "${Q}: node2 0.75" kd_wait_for "node2 at 0.75" 10 kd_prom_value_near "${Q}" node2 0.75 0.03
check "${Q}: node3 0.2" kd_wait_for "node3 at 0.2" 10 kd_prom_value_near "${Q}" node3 0.2 0.03
one_per_node() {
  kd_prom_query "${Q}" | jq -e '[.data.result[].metric.instance] | sort == ["node1", "node2", "node3"]' >/dev/null &&
    kd_prom_query "${Q}" | jq -e '[.data.result[].value[1] | tonumber | select(. >= 0 and . <= 1)] | length == 3' >/dev/null
}
check "${Q}: exactly one sample per node, instance = node name, values in [0,1]" one_per_node
note "${Q}: $(kd_prom_query "${Q}" | jq -c '[.data.result[] | {(.metric.instance): (.value[1] | tonumber * 1000 | round / 1000)}] | add')"
check "the raw kubelet series: rate(node_cpu_usage_seconds_total) of node1 is 3.6 cores" \
  kd_prom_value_near 'sum by (instance) (rate(node_cpu_usage_seconds_total[5s]))' node1 3.6 0.1
check "instance:node_memory_working_set_bytes:ratio: node1 0.75 (6Gi of 8Gi)" \
  kd_prom_value_near 'instance:node_memory_working_set_bytes:ratio' node1 0.75 0.01

phase "Prometheus behind a bearer token (nginx), the token read from a Secret"
kd_kubectl -n kube-system create secret generic prometheus-token \
  --from-literal=prometheusAuthToken="$(kd_kubectl -n "${KDS_NS}" create token default --duration=1h)" >/dev/null
secret_token() { kd_kubectl -n kube-system get secret prometheus-token -o 'jsonpath={.data.prometheusAuthToken}' | base64 -d; }
secret_token >"${WORK}/token"
must "cluster.sh start-prometheus --bearer-token-file" quietly "${KDS_CLUSTER}" start-prometheus --bearer-token-file "${WORK}/token"
kd_env_load
# auth_code TOKEN: the HTTP status of the query through the front, with that bearer token ("" for none).
auth_code() {
  local h=()
  [ -z "$1" ] || h=(-H "Authorization: Bearer $1")
  curl -sS -o "${WORK}/auth.out" -w '%{http_code}' -m 5 "${h[@]+"${h[@]}"}" \
    "${PROMETHEUS_AUTH_URL}/api/v1/query" --data-urlencode "query=${Q}"
}
check "no token: 401" [ "$(auth_code '')" = 401 ]
check "a wrong token: 401" [ "$(auth_code not-the-token)" = 401 ]
node1_through_front() {
  [ "$(auth_code "$(secret_token)")" = 200 ] &&
    jq -e '.data.result[] | select(.metric.instance == "node1") | .value[1] | tonumber | . > 0.87 and . < 0.93' \
      "${WORK}/auth.out" >/dev/null
}
check "the Secret's token: 200, node1 at 0.9" node1_through_front
OLD_TOKEN="$(secret_token)"
kd_kubectl -n kube-system create secret generic prometheus-token --dry-run=client -o yaml \
  --from-literal=prometheusAuthToken="$(kd_kubectl -n "${KDS_NS}" create token default --duration=2h)" |
  kd_kubectl apply -f - >/dev/null
secret_token >"${WORK}/token"
must "rotated: start-prometheus --bearer-token-file again" quietly "${KDS_CLUSTER}" start-prometheus --bearer-token-file "${WORK}/token"
check "rotated: the new token is accepted" kd_wait_for "new token accepted" 10 node1_through_front
check "rotated: the old token gets 401" [ "$(auth_code "${OLD_TOKEN}")" = 401 ]

phase "cluster down"
pids=("${METRICS_SERVER_PID}" "${PROMETHEUS_PID}" "${PROMETHEUS_AUTH_PID}")
check "cluster.sh down" quietly "${KDS_CLUSTER}" down
all_gone() { local p; for p in "${pids[@]}"; do kds_gone "${p}" || return 1; done; [ ! -e "${KDESCHED_CLUSTER_DIR}" ]; }
check "metrics-server, prometheus and nginx stopped (${pids[*]}), directory removed" all_gone
end_phase
