# shellcheck shell=bash
# Helpers for tests that need real usage: a cluster brought up with
# `cluster.sh up --metrics-server` (and `cluster.sh start-prometheus` for the kd_prom_* ones).
# Source it after lib.sh and load the cluster's env (kd_env_load) first:
#
#   source "${ROOT}/scripts/cluster/usage.sh"
#   kd_usage_set_node node1 3600m 6Gi               # node1 reports 3.6 cores, 6Gi
#   kd_usage_set_pod default web-1 900m 512Mi       # one pod's usage (each container's)
#   kd_usage_wait_node_cpu node1 3600 40 30         # metrics.k8s.io says 3600m +- 40m within 30 s
#   kd_prom_instance_value 'instance:node_cpu:rate:sum' node1   # 0.9
#
# How the usage is made (scripts/cluster/kwok-usage.yaml): kwok reports, for each container of a
# pod, the quantities in the pod's annotations kwok.x-k8s.io/usage-cpu and
# kwok.x-k8s.io/usage-memory (1m and 1Mi without them); a node reports the sum over its pods plus
# 1m cpu and 1Mi memory of its own. metrics-server scrapes every 10 s and serves the cpu rate
# between its last two scrapes. kwok integrates a cpu counter at each scrape (by anyone) with the
# usage current then, so a change shows at metrics-server's next scrape when it scrapes alone,
# and after up to two scrapes (about 20 s) while Prometheus also scrapes every second: wait for
# values (kd_usage_wait_*), never sleep.
#
# Quantities: cpu as Kubernetes writes them (3.6, 3600m, 250000000n); memory in bytes or with
# Ki/Mi/Gi/Ti or k/M/G/T. Results: cpu in millicores, memory in bytes (integers).

KD_USAGE_CPU_ANNOTATION=kwok.x-k8s.io/usage-cpu
KD_USAGE_MEMORY_ANNOTATION=kwok.x-k8s.io/usage-memory
# What kwok-usage.yaml adds to every node besides its pods.
KD_USAGE_NODE_SYSTEM_MILLI=1
KD_USAGE_NODE_SYSTEM_BYTES=1048576

# kd_cpu_milli QUANTITY: the cpu quantity in millicores (rounded).
kd_cpu_milli() {
  awk -v q="$1" 'BEGIN {
    if (!match(q, /^[0-9]+(\.[0-9]+)?/)) exit 1
    n = substr(q, 1, RLENGTH); s = substr(q, RLENGTH + 1)
    f = s == "" ? 1000 : s == "m" ? 1 : s == "u" ? 0.001 : s == "n" ? 0.000001 : -1
    if (f < 0) exit 1
    printf "%d\n", n * f + 0.5 }'
}

# kd_bytes QUANTITY: the memory quantity in bytes.
kd_bytes() {
  awk -v q="$1" 'BEGIN {
    if (!match(q, /^[0-9]+(\.[0-9]+)?/)) exit 1
    n = substr(q, 1, RLENGTH); s = substr(q, RLENGTH + 1)
    split("Ki Mi Gi Ti", bi, " "); split("k M G T", si, " "); f = s == "" ? 1 : -1
    for (i = 1; i <= 4; i++) { if (s == bi[i]) f = 1024 ^ i; if (s == si[i]) f = 1000 ^ i }
    if (f < 0) exit 1
    printf "%.0f\n", n * f }'
}

# kd_usage_set_pod NAMESPACE POD CPU [MEMORY]: the usage of each container of the pod.
kd_usage_set_pod() {
  local args=("${KD_USAGE_CPU_ANNOTATION}=$3")
  [ -z "${4:-}" ] || args+=("${KD_USAGE_MEMORY_ANNOTATION}=$4")
  kd_kubectl -n "$1" annotate --overwrite pod "$2" "${args[@]}" >/dev/null
}

# kd_usage_node_pods NODE: "namespace/name containers" of the pods bound to NODE that are not
# being deleted, one a line.
kd_usage_node_pods() {
  kd_kubectl get pods -A --field-selector "spec.nodeName=$1" -o json |
    jq -r '.items[] | select(.metadata.deletionTimestamp == null)
      | "\(.metadata.namespace)/\(.metadata.name) \(.spec.containers | length)"'
}

# kd_usage_set_node NODE CPU [MEMORY]: makes NODE report CPU (and MEMORY) by sharing it, less the
# node's own 1m/1Mi, evenly among the containers of the pods on it (at least 1m and 1Mi each:
# metrics-server drops a container that reports 0). Fails when no pod runs there. Pods bound
# later keep their own (default) usage.
kd_usage_set_node() {
  local node="$1" milli bytes=-1 lines=() line total=0 i=0 each rest per ns_name n cpu mem
  milli="$(kd_cpu_milli "$2")" || { kd_log "bad cpu quantity '$2'"; return 1; }
  if [ -n "${3:-}" ]; then bytes="$(kd_bytes "$3")" || { kd_log "bad memory quantity '$3'"; return 1; }; fi
  mapfile -t lines < <(kd_usage_node_pods "${node}")
  [ "${#lines[@]}" -gt 0 ] || { kd_log "no pod on ${node} to carry its usage"; return 1; }
  for line in "${lines[@]}"; do total=$((total + ${line##* })); done
  milli=$((milli - KD_USAGE_NODE_SYSTEM_MILLI))
  for line in "${lines[@]}"; do
    ns_name="${line% *}"; n="${line##* }"
    # Per container: the even share, the remainder to the first pod's containers.
    each=$((milli / total)); rest=$((milli - each * total)); per="${each}"
    [ "${i}" -gt 0 ] || per=$((each + rest / n))
    [ "${per}" -ge 1 ] || per=1
    cpu="${per}m"; mem=""
    if [ "${bytes}" -ge 0 ]; then
      per=$(((bytes - KD_USAGE_NODE_SYSTEM_BYTES) / total))
      [ "${per}" -ge 1048576 ] || per=1048576
      mem="${per}"
    fi
    kd_usage_set_pod "${ns_name%%/*}" "${ns_name#*/}" "${cpu}" "${mem}" || return 1
    i=$((i + 1))
  done
}

# ---------------------------------------------------------------------------
# reading metrics.k8s.io

# kd_metrics_raw PATH: GET /apis/metrics.k8s.io/v1beta1/PATH through the apiserver (the aggregator).
kd_metrics_raw() { kd_kubectl get --raw "/apis/metrics.k8s.io/v1beta1/$1" 2>/dev/null; }

# kd_usage_node_cpu NODE / kd_usage_node_memory NODE: what metrics.k8s.io reports now.
kd_usage_node_cpu() {
  local q; q="$(kd_metrics_raw "nodes/$1" | jq -r '.usage.cpu // empty')" && [ -n "${q}" ] && kd_cpu_milli "${q}"
}
kd_usage_node_memory() {
  local q; q="$(kd_metrics_raw "nodes/$1" | jq -r '.usage.memory // empty')" && [ -n "${q}" ] && kd_bytes "${q}"
}
# kd_usage_pod_cpu NAMESPACE POD: the sum over the pod's containers, in millicores.
kd_usage_pod_cpu() {
  local qs q sum=0
  qs="$(kd_metrics_raw "namespaces/$1/pods/$2" | jq -r '.containers[]?.usage.cpu')" || return 1
  [ -n "${qs}" ] || return 1
  for q in ${qs}; do sum=$((sum + $(kd_cpu_milli "${q}"))); done
  echo "${sum}"
}

# kd_within VALUE WANT TOLERANCE: |VALUE - WANT| <= TOLERANCE (integers).
kd_within() { [ -n "$1" ] && [ $(($1 - $2)) -le "$3" ] && [ $(($2 - $1)) -le "$3" ]; }

kd_usage_node_cpu_is() { kd_within "$(kd_usage_node_cpu "$1")" "$2" "$3"; }
kd_usage_pod_cpu_is() { kd_within "$(kd_usage_pod_cpu "$1" "$2")" "$3" "$4"; }

# kd_usage_wait_node_cpu NODE MILLI TOLERANCE_MILLI TIMEOUT: until metrics.k8s.io reports it.
kd_usage_wait_node_cpu() {
  kd_wait_for "metrics.k8s.io: $1 at $2m cpu (+-$3m)" "$4" kd_usage_node_cpu_is "$1" "$2" "$3"
}
# kd_usage_wait_pod_cpu NAMESPACE POD MILLI TOLERANCE_MILLI TIMEOUT
kd_usage_wait_pod_cpu() {
  kd_wait_for "metrics.k8s.io: $1/$2 at $3m cpu (+-$4m)" "$5" kd_usage_pod_cpu_is "$1" "$2" "$3" "$4"
}

# kd_usage_wait_nodes COUNT TIMEOUT: until metrics.k8s.io lists COUNT nodes (after up
# --metrics-server it lists none until metrics-server has scraped twice).
kd_usage_nodes_listed() { [ "$(kd_metrics_raw nodes | jq '.items | length')" -ge "$1" ]; }
kd_usage_wait_nodes() { kd_wait_for "metrics.k8s.io lists $1 nodes" "$2" kd_usage_nodes_listed "$1"; }

# kd_usage_apiservice: "STATUS REASON" of v1beta1.metrics.k8s.io's Available condition.
kd_usage_apiservice() {
  kd_kubectl get apiservice v1beta1.metrics.k8s.io -o \
    'jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason}'
}
kd_usage_apiservice_is() { [ "$(kd_usage_apiservice | cut -d' ' -f1)" = "$1" ]; }

# ---------------------------------------------------------------------------
# Prometheus (cluster.sh start-prometheus; PROMETHEUS_URL from the env)

# kd_prom_query QUERY: the instant query's JSON answer.
kd_prom_query() {
  curl -fsS -m 5 "${PROMETHEUS_URL:?start-prometheus first}/api/v1/query" --data-urlencode "query=$1"
}
# kd_prom_instance_value QUERY INSTANCE: the value of the sample with that instance label, or "".
kd_prom_instance_value() {
  kd_prom_query "$1" 2>/dev/null | jq -r --arg i "$2" '.data.result[] | select(.metric.instance == $i) | .value[1]'
}
# kd_prom_value_near QUERY INSTANCE WANT TOLERANCE: the sample is within WANT +- TOLERANCE.
kd_prom_value_near() {
  local v; v="$(kd_prom_instance_value "$1" "$2")"
  [ -n "${v}" ] && awk -v v="${v}" -v w="$3" -v t="$4" 'BEGIN { d = v - w; exit !(d <= t && -d <= t) }'
}
