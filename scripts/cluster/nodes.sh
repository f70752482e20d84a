# shellcheck shell=bash
# The test control plane's kwok nodes, sourced by cluster.sh (it uses cluster.sh's variables and
# kctl): node specs (the format is in cluster.sh's header), creating nodes, and making one
# NotReady and Ready again through kwok's stages.

# default_spec N [FIRST]: nodeFIRST..node(FIRST+N-1) (FIRST defaults to 1),
# zones a/b/c round robin.
default_spec() {
  local i first="${2:-1}" zones=(zone-a zone-b zone-c)
  for ((i = first; i < first + $1; i++)); do
    printf 'node%d topology.kubernetes.io/zone=%s cpu=4,memory=8Gi,pods=110 -\n' "${i}" "${zones[$(((i - 1) % 3))]}"
  done
}

# node_json NAME LABELS CAPACITY TAINTS: a kwok-managed Node object.
node_json() {
  jq -cn --arg name "$1" --arg labels "${2:--}" --arg cap "${3:--}" --arg taints "${4:--}" \
    --arg metrics "${METRICS_SERVER:-0}" '
    def kv: if . == "-" or . == "" then {} else
      [split(",")[] | select(length > 0) | (index("=")) as $i
        | if $i == null then {key: ., value: ""} else {key: .[:$i], value: .[$i + 1:]} end]
      | from_entries end;
    def taint: (index(":")) as $c
      | if $c == null then error("taint \(.) needs :Effect") else . end
      | .[:$c] as $kv | .[$c + 1:] as $effect | ($kv | index("=")) as $e
      | if $e == null then {key: $kv, effect: $effect}
        else {key: $kv[:$e], value: $kv[$e + 1:], effect: $effect} end;
    ({cpu: "4", memory: "8Gi", pods: "110"} + ($cap | kv)) as $capacity
    | {apiVersion: "v1", kind: "Node",
       metadata: {name: $name,
         annotations: ({"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"}
           + if $metrics == "1" then {"metrics.k8s.io/resource-metrics-path":
               "/metrics/nodes/\($name)/metrics/resource"} else {} end),
         labels: ({"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "type": "kwok"}
                  + ($labels | kv) + {"kubernetes.io/hostname": $name})},
       spec: (if $taints == "-" or $taints == "" then {}
              else {taints: [$taints | split(",")[] | select(length > 0) | taint]} end),
       status: {allocatable: $capacity, capacity: $capacity}}'
}

# create_nodes SPEC_FILE: creates every node of the spec.
create_nodes() {
  local spec="$1" name labels cap taints extra count=0
  local all=""
  while read -r name labels cap taints extra; do
    case "${name}" in ''|'#'*) continue ;; esac
    [ -z "${extra}" ] || kd_die "node spec line for ${name}: too many columns"
    all+="$(node_json "${name}" "${labels}" "${cap}" "${taints}")"$'\n'
    count=$((count + 1))
  done <"${spec}"
  [ "${count}" -gt 0 ] || return 0
  jq -s '{apiVersion: "v1", kind: "List", items: .}' <<<"${all}" | kctl create -f - >/dev/null
  kd_log "created ${count} kwok node(s)"
}

# parse_nodes_args ARGS...: sets NODE_SPEC (a file) from --nodes/--node-spec.
parse_node_arg() {
  case "$1" in
    --nodes)
      [[ "$2" =~ ^[0-9]+$ ]] || kd_die "--nodes needs a number"
      default_spec "$2" >"${DIR}/nodes.spec" ;;
    --node-spec)
      [ -f "$2" ] || kd_die "node spec file '$2' not found"
      cp "$2" "${DIR}/nodes.spec" ;;
  esac
}


cmd_node_notready() {
  load_state
  [ -n "${1:-}" ] || kd_die "usage: cluster.sh node-notready NAME"
  # kwok's node-not-ready stage (loaded from the pinned kwok module) sets
  # Ready=False on nodes with this label and then heartbeats stop (the
  # heartbeat stage only runs for Ready nodes); the node lifecycle
  # controller then adds the node.kubernetes.io/not-ready taints.
  kctl label node "$1" node-not-ready.stage.kwok.x-k8s.io=true --overwrite >/dev/null
  kd_wait_for "node $1 Ready=False" 30 node_ready_is "$1" False || kd_die "node $1 did not become NotReady"
  echo "cluster.sh: node $1 is NotReady"
}

cmd_node_ready() {
  load_state
  [ -n "${1:-}" ] || kd_die "usage: cluster.sh node-ready NAME"
  kctl label node "$1" node-not-ready.stage.kwok.x-k8s.io- >/dev/null
  kd_wait_for "node $1 Ready=True" 30 node_ready_is "$1" True || kd_die "node $1 did not become Ready"
  echo "cluster.sh: node $1 is Ready"
}

node_ready_is() {
  [ "$(kctl get node "$1" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}')" = "$2" ]
}
