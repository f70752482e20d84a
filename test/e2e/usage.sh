#!/usr/bin/env bash
# Balancing by measured usage against the real sources: metrics-server built from its Go
# module behind the v1beta1.metrics.k8s.io APIService, and Debian's Prometheus, both reading kwok's
# simulated kubelet resource endpoints (scripts/cluster/metrics.sh, usage.sh).
#
# Three kwok nodes of 4 cpus; two pods on each (a Deployment per node), every pod requesting 500m,
# so by requests every node is at 25% and LowNodeUtilization (30% / 70%) sees nothing to do.
#
#  1. metrics-server: node1 uses 90%, node2 and node3 20%. The same policy by requests evicts
#     nothing (one-shot); with `metricsUtilization: {source: KubernetesMetrics}` one one-shot run
#     evicts exactly one pod, from node1, and its reason names the usage and who measured it.
#  2. Prometheus (upstream README's query instance:node_cpu:rate:sum, MetricResource thresholds):
#     one pod from node1.
#  3. The same through a bearer-token front (nginx), the token read from a Secret named by
#     `authToken.secretReference`: evicts one pod from node1; with a wrong token in the Secret the
#     source is down: no eviction, kdesched_usage_source_up{source="Prometheus"} 0.
#  4. metrics-server stopped under a running daemon (all nodes cool): kdesched_usage_source_up 0,
#     one warning, LowNodeUtilization skipped, no eviction; started again: back to 1.
#  5. HighNodeUtilization by metrics-server usage (kdesched only): node1 and node2 at 40%, node3 at
#     5%, threshold cpu 20%: by requests (25% each) nothing; by usage node3's two pods go.
#
# Own cluster directory; kdesched is ${KDESCHED_BIN:-build/kdesched}. Needs metrics-server in the
# binary cache (scripts/cluster/build.sh metrics-server), Debian's prometheus and nginx-light.
# Prints "usage: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=scripts/cluster/usage.sh
source "${ROOT}/scripts/cluster/usage.sh"
e2e_begin usage --cluster
kds_require_tools
command -v prometheus >/dev/null || die "prometheus is needed (Debian package prometheus; scripts/install-deps.sh)"
command -v nginx >/dev/null || die "nginx is needed (Debian package nginx-light; scripts/install-deps.sh)"
KDS_STATE_ON_FAILURE=("nodes,pods,apiservices" -o wide)
tol() { echo $(($1 / 25 + 10)); }

# policy FILE PROVIDERS_YAML METRICS_UTILIZATION_YAML THRESHOLDS TARGETS
policy() {
  cat >"$1" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
${2}
profiles:
- name: usage
  pluginConfig:
  - name: DefaultEvictor
  - name: LowNodeUtilization
    args:
      thresholds: $4
      targetThresholds: $5
${3}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
YAML
}
MS_PROVIDER=$'metricsProviders:\n- source: KubernetesMetrics'
MS_UTIL=$'      metricsUtilization:\n        source: KubernetesMetrics'
PROM_QUERY='instance:node_cpu:rate:sum'
PROM_UTIL=$'      metricsUtilization:\n        source: Prometheus\n        prometheus:\n          query: '"${PROM_QUERY}"

# deployment NODE: two pods bound to NODE (spec.nodeName: the scheduler would spread them), each
# requesting 500m and 256Mi; their replacements come back to NODE.
deployment() {
  jq -n --arg n "$1" '{apiVersion: "apps/v1", kind: "Deployment",
    metadata: {name: ("load-" + $n), labels: {app: "load"}},
    spec: {replicas: 2, selector: {matchLabels: {app: "load", node: $n}},
      template: {metadata: {labels: {app: "load", node: $n}},
        spec: {nodeName: $n, terminationGracePeriodSeconds: 0,
          containers: [{name: "c", image: "registry.k8s.io/pause:3.10",
            resources: {requests: {cpu: "500m", memory: "256Mi"}}}]}}}}' |
    kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null
}
# usage NODE1 NODE2 NODE3: the cpu each node uses (millicores), shared among its current pods, and
# waited for at metrics.k8s.io.
set_usage() {
  local i=1 n
  must "6 load pods Running" kd_wait_pods_ready "${KDS_NS}" app=load 6 90
  for n in node1 node2 node3; do
    must "set ${n} to ${!i}m" kd_usage_set_node "${n}" "${!i}m"
    i=$((i + 1))
  done
  i=1
  for n in node1 node2 node3; do
    must "metrics.k8s.io: ${n} at ${!i}m" kd_usage_wait_node_cpu "${n}" "${!i}" "$(tol "${!i}")" 60
    i=$((i + 1))
  done
  # PodMetrics come later than NodeMetrics (a pod needs two scrapes of its own): without them a pod's
  # usage is unknown and LowNodeUtilization by metrics-server leaves it where it is.
  must "metrics.k8s.io: PodMetrics for the 6 load pods, each half its node's usage" \
    kd_wait_for "PodMetrics of the load pods" 60 pod_metrics_match "$@"
}
# pod_metrics_match NODE1 NODE2 NODE3: every live load pod has PodMetrics at half its node's cpu.
pod_metrics_match() {
  local want=(x "$@") ns_name node cpu count=0
  while read -r ns_name node; do
    case "${node}" in node1) cpu="${want[1]}" ;; node2) cpu="${want[2]}" ;; *) cpu="${want[3]}" ;; esac
    kd_usage_pod_cpu_is "${ns_name%%/*}" "${ns_name#*/}" $((cpu / 2)) "$(tol $((cpu / 2)))" || return 1
    count=$((count + 1))
  done < <(kd_kubectl -n "${KDS_NS}" get pods -l app=load -o json |
    jq -r '.items[] | select(.metadata.deletionTimestamp == null) | "\(.metadata.namespace)/\(.metadata.name) \(.spec.nodeName)"')
  [ "${count}" = 6 ]
}
evictions() { kds_log_count "$1" 'msg="Evicted pod"'; }
evicted_from_node1() {
  local line
  line="$(grep -m1 'msg="Evicted pod"' "$(kds_log "$1")")" || return 1
  note "$1: ${line}"
  grep -q 'node=node1' <<<"${line}"
}
one_shot() { kds_run "$1" 120 --policy-config-file "$2" "${@:3}"; }

# ---------------------------------------------------------------------------
phase "cluster up --metrics-server (3 kwok nodes), two pods per node"
must "cluster.sh up --nodes 3 --metrics-server" quietly "${KDS_CLUSTER}" up --nodes 3 --metrics-server
kd_env_load
for n in node1 node2 node3; do deployment "${n}"; done
set_usage 3600 800 800
check "metrics.k8s.io lists the 3 nodes" kd_usage_wait_nodes 3 60

# ---------------------------------------------------------------------------
phase "1. metrics-server: by requests nothing, by usage one pod from node1"
policy "${WORK}/requests.yaml" "" "" "{cpu: 30}" "{cpu: 70}"
one_shot requests "${WORK}/requests.yaml"
check "by requests: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "by requests: no eviction (every node at 25% of requests)" [ "$(evictions requests)" = 0 ]
policy "${WORK}/ms.yaml" "${MS_PROVIDER}" "${MS_UTIL}" "{cpu: 30}" "{cpu: 70}"
one_shot ms "${WORK}/ms.yaml"
check "by usage: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "by usage: exactly one eviction" [ "$(evictions ms)" = 1 ]
check "by usage: the pod came from node1" evicted_from_node1 ms
check "the reason names node1's cpu usage by metrics-server" kds_log_has ms 'node node1 is overutilized by metrics-server usage \(cpu (89|9[0-9])'
note "run: $(ms_str "${KDS_RUN_MS}")"

# ---------------------------------------------------------------------------
phase "2. Prometheus: MetricResource thresholds, one pod from node1"
set_usage 3600 800 800
must "cluster.sh start-prometheus" quietly "${KDS_CLUSTER}" start-prometheus
kd_env_load
check "${PROM_QUERY}: node1 at 0.9" kd_wait_for "node1 at 0.9" 60 kd_prom_value_near "${PROM_QUERY}" node1 0.9 0.03
check "${PROM_QUERY}: node2 at 0.2" kd_wait_for "node2 at 0.2" 30 kd_prom_value_near "${PROM_QUERY}" node2 0.2 0.03
check "${PROM_QUERY}: node3 at 0.2" kd_wait_for "node3 at 0.2" 30 kd_prom_value_near "${PROM_QUERY}" node3 0.2 0.03
# kdesched asks for the value at its cycle's start in whole seconds, up to 1 s before now: right
# after Prometheus starts, the rule's value there can still be a warm-up one (a rate of two samples)
# although the value now is right. Wait until the values 3 s ago are right too.
prom_settled_at() {
  local t="$1" n want v
  for n in node1:0.9 node2:0.2 node3:0.2; do
    want="${n#*:}"
    v="$(curl -fsS -m 5 "${PROMETHEUS_URL}/api/v1/query" --data-urlencode "query=${PROM_QUERY}" \
      --data-urlencode "time=${t}" 2>/dev/null |
      jq -r --arg i "${n%%:*}" '.data.result[] | select(.metric.instance == $i) | .value[1]')" || return 1
    [ -n "${v}" ] && awk -v v="${v}" -v w="${want}" 'BEGIN { d = v - w; exit !(d <= 0.03 && -d <= 0.03) }' || return 1
  done
}
prom_settled() { prom_settled_at $(($(date +%s) - 3)); }
check "${PROM_QUERY}: all three values right 3 s ago too" kd_wait_for "settled values" 30 prom_settled
prom_provider() {
  printf 'metricsProviders:\n- source: Prometheus\n  prometheus:\n    url: %s\n%s' "$1" "${2:-}"
}
policy "${WORK}/prom.yaml" "$(prom_provider "${PROMETHEUS_URL}")" "${PROM_UTIL}" "{MetricResource: 30}" "{MetricResource: 70}"
one_shot prom "${WORK}/prom.yaml" -v=3
check "Prometheus: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "Prometheus: exactly one eviction (one per node without per-pod usage)" [ "$(evictions prom)" = 1 ]
check "Prometheus: the pod came from node1" evicted_from_node1 prom

# ---------------------------------------------------------------------------
phase "3. Prometheus behind a bearer token read from a Secret"
set_usage 3600 800 800
secret() {
  kd_kubectl -n kube-system create secret generic prometheus-token --dry-run=client -o yaml \
    --from-literal=prometheusAuthToken="$1" | kd_kubectl apply -f - >/dev/null
}
TOKEN="$(kd_kubectl -n "${KDS_NS}" create token default --duration=1h)"
secret "${TOKEN}"
printf '%s' "${TOKEN}" >"${WORK}/token"
must "start-prometheus --bearer-token-file" quietly "${KDS_CLUSTER}" start-prometheus --bearer-token-file "${WORK}/token"
kd_env_load
AUTH=$'    authToken:\n      secretReference: {namespace: kube-system, name: prometheus-token}'
policy "${WORK}/auth.yaml" "$(prom_provider "${PROMETHEUS_AUTH_URL}" "${AUTH}")" "${PROM_UTIL}" \
  "{MetricResource: 30}" "{MetricResource: 70}"
check "${PROM_QUERY} through the front: node1 at 0.9" kd_wait_for "node1 at 0.9" 60 \
  kd_prom_value_near "${PROM_QUERY}" node1 0.9 0.03
one_shot auth "${WORK}/auth.yaml"
check "with the Secret's token: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "with the Secret's token: one eviction, from node1" evicted_from_node1 auth
set_usage 3600 800 800
secret "not-the-token"
kds_free_port PORT
kds_start wrong --policy-config-file "${WORK}/auth.yaml" --descheduling-interval 5s --secure-port "${PORT}" --bind-address 127.0.0.1
check "a wrong token: two cycles finish" kds_wait_log wrong 'msg="cycle finished"' 30 2
check "a wrong token: no eviction" [ "$(evictions wrong)" = 0 ]
source_up() { kds_metrics "${PORT}" "${WORK}/m.txt" && [ "$(kds_metric_sum "${WORK}/m.txt" kdesched_usage_source_up "source=$1")" = "$2" ]; }
check "a wrong token: kdesched_usage_source_up{source=Prometheus} 0" source_up Prometheus 0
secret "${TOKEN}"
check "the right token again (re-read): one eviction from node1 within 30 s" kds_wait_log wrong 'msg="Evicted pod"' 30
check "kdesched_usage_source_up{source=Prometheus} back at 1" kd_wait_for "source up" 15 source_up Prometheus 1
kds_stop "${KDS_PID}"
must "cluster.sh stop-prometheus" quietly "${KDS_CLUSTER}" stop-prometheus

# ---------------------------------------------------------------------------
phase "4. metrics-server stopped under a running daemon, then started again"
set_usage 800 800 800
kds_free_port PORT
kds_start outage --policy-config-file "${WORK}/ms.yaml" --descheduling-interval 5s --secure-port "${PORT}" --bind-address 127.0.0.1
must "daemon: first cycle finished" kds_wait_log outage 'msg="cycle finished"' 60
check "kdesched_usage_source_up{source=KubernetesMetrics} 1" kd_wait_for "source up" 15 source_up KubernetesMetrics 1
must "cluster.sh stop-metrics-server" quietly "${KDS_CLUSTER}" stop-metrics-server
check "kdesched_usage_source_up{source=KubernetesMetrics} 0 within 20 s" kd_wait_for "source down" 20 source_up KubernetesMetrics 0
cycles="$(kds_log_count outage 'msg="cycle finished"')"
check "two more cycles finish while it is down" kds_wait_log outage 'msg="cycle finished"' 30 $((cycles + 2))
# One warning per request that fails (the NodeMetrics collection, the cycle's PodMetrics LIST), not
# one per failure.
warnings="$(kds_log_count outage 'level=warn msg="usage source failing.* source=KubernetesMetrics')"
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
check "a warning that the source is down, not repeated (${warnings})" between "${warnings}" 1 2
check "no eviction while it is down" [ "$(evictions outage)" = 0 ]
must "cluster.sh start-metrics-server" quietly "${KDS_CLUSTER}" start-metrics-server
check "kdesched_usage_source_up{source=KubernetesMetrics} back at 1 within 90 s" kd_wait_for "source up" 90 source_up KubernetesMetrics 1
check "a line that it answers again" kds_wait_log outage 'msg="usage source answers again".* source=KubernetesMetrics' 10
check "still no eviction (every node cool)" [ "$(evictions outage)" = 0 ]
kds_stop "${KDS_PID}"

# ---------------------------------------------------------------------------
phase "5. HighNodeUtilization by usage (kdesched only) drains the coolest node"
set_usage 1600 1600 200
HNU="${WORK}/hnu.yaml"
cat >"${HNU}" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
${MS_PROVIDER}
profiles:
- name: usage
  pluginConfig:
  - name: DefaultEvictor
  - name: HighNodeUtilization
    args:
      thresholds: {cpu: 20}
${MS_UTIL}
  plugins:
    balance:
      enabled: [HighNodeUtilization]
YAML
sed 's/^      metricsUtilization:$//; s/^        source: KubernetesMetrics$//' "${HNU}" >"${WORK}/hnu-requests.yaml"
one_shot hnu-requests "${WORK}/hnu-requests.yaml"
check "by requests (every node at 25%): exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "by requests: no eviction" [ "$(evictions hnu-requests)" = 0 ]
one_shot hnu "${HNU}"
check "by usage: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "by usage: two evictions" [ "$(evictions hnu)" = 2 ]
check "by usage: both from node3 (at 5%)" [ "$(kds_log_count hnu 'msg="Evicted pod".* node=node3 ')" = 2 ]
check "the reason names node3's usage by metrics-server" kds_log_has hnu 'node node3 is underutilized by metrics-server usage \(cpu [45](\.[0-9])?% <= 20%'
end_phase
