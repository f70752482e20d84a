# shellcheck shell=bash disable=SC2034  # results are read by incluster.sh
# Helpers of test/e2e/incluster.sh (sourced after lib.sh): the chart installed on the real node,
# its pods seen from the node (processes, cgroups, projected files), the API server's audit log,
# and the node's leftovers.

IC_CHART="${ROOT}/helm/kdesched"
IC_REAL_NODE_VALUES=(--set-string 'nodeSelector.kdesched\.io/real-node=true'
  --set 'tolerations[0].key=kdesched.io/real-node' --set 'tolerations[0].operator=Exists'
  --set 'tolerations[0].effect=NoSchedule' --set image.pullPolicy=Never)

ic_helm() { "${KD_BIN_DIR}/helm" --kubeconfig "${KUBECONFIG}" "$@"; }

# ic_pods NAMESPACE SELECTOR: names of the non-terminating pods.
ic_pods() {
  kd_kubectl -n "$1" get pods -l "$2" -o json |
    jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'
}

# ic_ready_on_node NAMESPACE SELECTOR COUNT: COUNT pods, all Running, Ready and on the real node.
ic_ready_on_node() {
  kd_kubectl -n "$1" get pods -l "$2" -o json | jq -e --argjson n "$3" --arg node "${REAL_NODE_NAME}" '
    [.items[] | select(.metadata.deletionTimestamp == null)] as $p
    | ($p | length) == $n and all($p[]; .spec.nodeName == $node and .status.phase == "Running"
        and ([.status.conditions[]? | select(.type == "Ready") | .status][0] == "True"))' >/dev/null
}

# ic_lease_holder NAMESPACE NAME: the Lease's holderIdentity (empty when released or missing).
ic_lease_holder() {
  kd_kubectl -n "$1" get lease "$2" -o 'jsonpath={.spec.holderIdentity}' 2>/dev/null || true
}

# ic_container_pid NAMESPACE POD: the host PID of the pod's first container's main process.
ic_container_pid() {
  local id
  id="$(kd_kubectl -n "$1" get pod "$2" -o 'jsonpath={.status.containerStatuses[0].containerID}')"
  id="${id#containerd://}"
  [ -n "${id}" ] || return 1
  "${KD_BIN_DIR}/crictl" --runtime-endpoint "unix://${CONTAINERD_ADDRESS}" inspect "${id}" | jq -r '.info.pid'
}

# ic_memory_peak PID: the peak memory (bytes) of the container's memory cgroup (cgroup v1 here).
ic_memory_peak() {
  local path
  path="$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$1/cgroup")"
  [ -n "${path}" ] || return 1
  if [ -r "/sys/fs/cgroup/memory${path}/memory.max_usage_in_bytes" ]; then
    cat "/sys/fs/cgroup/memory${path}/memory.max_usage_in_bytes"
  else
    cat "/sys/fs/cgroup${path}/memory.peak"
  fi
}

# ic_logfmt_valid FILE: every line is logfmt (key=value pairs, values bare or double-quoted with
# escapes) and has ts, level and msg. Prints the first bad line.
ic_logfmt_valid() {
  python3 - "$1" <<'PY'
import re, sys
pair = re.compile(r'([A-Za-z_][A-Za-z0-9_.\-]*)=("(?:[^"\\]|\\.)*"|[^\s"=]*)(?:\s+|$)')
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if not line:
        continue
    n += 1
    pos, keys = 0, set()
    while pos < len(line):
        m = pair.match(line, pos)
        if not m or m.end() == pos:
            print("not logfmt:", line); sys.exit(1)
        keys.add(m.group(1)); pos = m.end()
    if not {"ts", "level", "msg"} <= keys:
        print("missing ts/level/msg:", line); sys.exit(1)
sys.exit(0 if n > 0 else 1)
PY
}

# The audit log: every request of the ServiceAccounts under test, and every request that failed
# authentication, at Metadata level (who, from where, which credential, the response code).
ic_audit_policy() {
  cat >"$1" <<'YAML'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  userGroups: ["system:nodes", "system:masters"]
- level: None
  users: ["system:kube-controller-manager", "system:kube-scheduler", "system:kube-proxy", "system:apiserver"]
- level: None
  users: ["system:serviceaccount:kube-system:deployment-controller",
          "system:serviceaccount:kube-system:endpointslice-controller",
          "system:serviceaccount:kube-system:endpoint-controller",
          "system:serviceaccount:kube-system:disruption-controller",
          "system:serviceaccount:kube-system:generic-garbage-collector",
          "system:serviceaccount:kube-system:resourcequota-controller",
          "system:serviceaccount:kube-system:namespace-controller"]
- level: Metadata
YAML
}

# ic_audit JQ_FILTER: the audit events (one JSON object a line) that pass the filter, as a JSON array.
ic_audit() { jq -cs "[.[] | select($1)]" "${IC_AUDIT_LOG}"; }

# ic_token_claims FILE: the JWT's payload (iat, exp, jti, ...) as JSON.
ic_token_claims() {
  local p
  p="$(cut -d. -f2 <"$1" | tr '_-' '/+')"
  while [ $(( ${#p} % 4 )) -ne 0 ]; do p+="="; done
  base64 -d <<<"${p}"
}

# ic_token_file NAMESPACE POD VOLUME [PLUGIN]: the token file of the pod's volume (PLUGIN projected,
# the default, or secret), as the kubelet keeps it on the node (the image has no shell to read it
# from inside).
ic_token_file() {
  local uid
  uid="$(kd_kubectl -n "$1" get pod "$2" -o 'jsonpath={.metadata.uid}')"
  printf '%s\n' "${KDESCHED_CLUSTER_DIR}/node/kubelet/pods/${uid}/volumes/kubernetes.io~${4:-projected}/$3/token"
}

# ic_machine_state: what a real node could leave behind on this machine (links, netns mounts,
# iptables rules, mounts under /tmp and /run, shims), for a before/after comparison.
ic_machine_state() {
  ip -o link show | awk -F': ' '{ print "link " $2 }' | sed 's/@.*//' || true
  iptables-save 2>/dev/null | grep -Ev '^(#|:)' | grep -E 'KUBE-|kdesched' | sed 's/^/iptables /' || true
  iptables-save 2>/dev/null | grep -E '^:KUBE-' | awk '{ print "chain " $1 }' || true
  awk '$3 == "nsfs" || index($2, "/tmp/") == 1 || $2 ~ /containerd|kubelet/ { print "mount " $2 }' /proc/self/mounts || true
  ps -eo comm= | grep -E '^(containerd|containerd-shim|kubelet|kube-proxy)' | sort -u | sed 's/^/process /' || true
  return 0
}

# ic_prom_targets NAMESPACE SERVICE PORT_NAME FILE: the Service's ready endpoints as a file_sd
# list, the targets the Prometheus Operator makes of the chart's ServiceMonitor (role endpoints,
# job = the Service's name). Debian's prometheus has no kubernetes_sd_configs (Debian removed it
# with client-go), so the discovery is done here from the EndpointSlices.
ic_prom_targets() {
  kd_kubectl -n "$1" get endpointslices -l "kubernetes.io/service-name=$2" -o json | jq --arg svc "$2" --arg port "$3" --arg ns "$1" '
    [.items[] | (.ports[] | select(.name == $port) | .port) as $p | .endpoints[]
      | select(.conditions.ready == true)
      | {targets: ["\(.addresses[0]):\($p)"], labels: {job: $svc, namespace: $ns, service: $svc, pod: .targetRef.name}}]' >"$4.tmp"
  mv -f "$4.tmp" "$4"
}

# ic_prometheus_start: Debian's prometheus scraping the chart's Service endpoints over HTTPS with
# insecureSkipVerify, as the chart's ServiceMonitor says. Sets PROM_URL.
ic_prometheus_start() {
  local d="${WORK}/prometheus" port
  mkdir -p "${d}"
  ic_prom_targets kube-system kdesched http-metrics "${d}/targets.json"
  cat >"${d}/prometheus.yml" <<YAML
global: {scrape_interval: 2s, scrape_timeout: 2s}
scrape_configs:
- job_name: kdesched
  scheme: https
  tls_config: {insecure_skip_verify: true}
  honor_labels: true
  file_sd_configs: [{files: ["${d}/targets.json"], refresh_interval: 2s}]
YAML
  kds_free_port port
  prometheus --config.file="${d}/prometheus.yml" --storage.tsdb.path="${d}/data" \
    --web.listen-address="127.0.0.1:${port}" >"${d}/prometheus.log" 2>&1 7>&- 8>&- &
  KDS_EXTRA_PIDS+=("$!")
  PROM_URL="http://127.0.0.1:${port}"
  kd_wait_for "prometheus ready" 30 curl -fsS "${PROM_URL}/-/ready"
}

# ic_prom_value QUERY: the instant value of a one-sample query (empty when none).
ic_prom_value() {
  curl -fsS "${PROM_URL}/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // empty'
}
ic_prom_query_equals() { [ "$(ic_prom_value "$1")" = "$2" ]; }
ic_prom_query_at_least() { local v; v="$(ic_prom_value "$1")"; [ -n "${v}" ] && awk -v v="${v}" -v m="$2" 'BEGIN { exit !(v >= m) }'; }

# ic_rolled_over: two Ready pods of the release on the node, none of them one of HA_PODS, and no
# old pod left (terminating or not).
ic_rolled_over() {
  ic_ready_on_node kube-system app.kubernetes.io/instance=kdesched 2 || return 1
  local p
  for p in $(kd_kubectl -n kube-system get pods -l app.kubernetes.io/instance=kdesched -o name); do
    printf '%s\n' "${HA_PODS[@]}" | grep -qx "${p#pod/}" && return 1
  done
  return 0
}

# ic_new_leader: the Lease is held by a pod that is not one of HA_PODS.
ic_new_leader() {
  local h
  h="$(ic_lease_holder kube-system descheduler)"
  [ -n "${h}" ] || return 1
  ! printf '%s\n' "${HA_PODS[@]}" | grep -qx "${h%%_*}"
}

# ic_release_gone RELEASE NAMESPACE: no object labelled with the release anywhere.
ic_release_gone() {
  local left
  left="$(kd_kubectl get all,configmaps,serviceaccounts,roles,rolebindings,clusterroles,clusterrolebindings,endpointslices,poddisruptionbudgets \
    -A -l "app.kubernetes.io/instance=$1" -o name 2>/dev/null)"
  [ -z "${left}" ] || { echo "${left}" >&2; return 1; }
}

# ic_no_containers NAMESPACE POD_PREFIX: the node runs no container of such pods (crictl).
ic_no_containers() {
  ! "${KD_BIN_DIR}/crictl" --runtime-endpoint "unix://${CONTAINERD_ADDRESS}" ps -a -o json |
    jq -e --arg ns "$1" --arg p "$2" '[.containers[] | select(.labels["io.kubernetes.pod.namespace"] == $ns
      and (.labels["io.kubernetes.pod.name"] | startswith($p)))] | length > 0' >/dev/null
}

# ic_log_names_verb FILE VERB RESOURCE: one log line names both (verb=VERB and resource=RESOURCE,
# quoted or not).
ic_log_names_verb() {
  grep -E "(^| )verb=\"?$2\"?( |$)" "$1" | grep -Eq "(^| )resource=\"?$3\"?( |$)"
}

# ic_handover_logs NEW_POD: what a slow Lease handover leaves to read: the first leader's last
# lines (LEADER_POD, followed into leader-follow.log while it ran; its pod is gone by now) and the
# new holder's election lines.
ic_handover_logs() {
  echo "        | first leader ${LEADER_POD}, its last 15 lines:"
  tail -n 15 "${WORK}/leader-follow.log" 2>/dev/null | sed 's/^/        |   /'
  echo "        | new holder $1, its first 40 lines:"
  kd_kubectl logs -n kube-system "$1" 2>&1 | head -n 40 | sed 's/^/        |   /'
}
