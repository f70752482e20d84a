# shellcheck shell=bash
# The real node (`cluster.sh up --real-node`), sourced by cluster.sh (it uses cluster.sh's DIR, BIN,
# APISERVER_PORT, SERVICE_CIDR, ...): one node named kdesched-node beside the kwok nodes, on which
# a real kubelet runs real containers: containerd 2 + runc + the CNI bridge plugin + kubelet +
# kube-proxy, all at the versions in versions.env (kubelet and kube-proxy at the control plane's).
#
# Where things live, so that `down` can take all of it away again:
#   - processes: containerd, kubelet, kube-proxy (components like the control plane's, in
#     DIR/pids), containerd's shims (found by the socket path under DIR in their command line);
#   - files and mounts: everything under DIR/node (containerd's root and state, the network
#     namespaces: netns_mounts_under_state_dir, kubelet's root dir, pod logs);
#   - network: the bridge RN_BRIDGE with RN_IP/24 on this machine, the pods' veths on it, two
#     iptables rules tagged "kdesched-real-node" that stop anything leaving the bridge for another
#     interface, kube-proxy's KUBE-* chains, kubelet's KUBE-KUBELET-CANARY chains.
# Nothing is routed off the machine: pods get routes to the bridge subnet and the Service range
# only, the host's ip_forward is left as it is, and the FORWARD rules drop what would leave.
# One real node per machine (the bridge and subnet are fixed): a lock in /run says whose it is.

RN_NAME=kdesched-node
RN_BRIDGE=kdsbr0
RN_SUBNET=10.213.0.0/24
RN_IP=10.213.0.1
RN_TAINT=kdesched.io/real-node
RN_PAUSE_IMAGE=localhost/kdesched/pause:1
RN_LOCK=/run/kdesched-real-node.lock
RN_RULE_TAG=kdesched-real-node

# Paths outside DIR that the daemons create whatever they are told: containerd's shims put their
# sockets in /run/containerd/s, libcni caches results in /var/lib/cni, the kubelet's device-plugin
# socket is /var/lib/kubelet/device-plugins/kubelet.sock and its log links are in
# /var/log/containers. `down` removes those that did not exist before `up`.
RN_HOST_PATHS=(/run/containerd /var/lib/cni /var/lib/kubelet /var/log/containers)

rn_enabled() { [ "${REAL_NODE:-0}" = 1 ]; }
rn_sock() { printf '%s\n' "${DIR}/node/containerd.sock"; }
rn_ctr() { "${BIN}/ctr" --address "$(rn_sock)" --namespace k8s.io "$@"; }
rn_crictl() { "${BIN}/crictl" --runtime-endpoint "unix://$(rn_sock)" --timeout 20s "$@"; }

# The kube-apiserver flags a real node needs: its kubelet and pods reach it on the bridge address
# (the kubernetes Service's endpoint), and it reaches the kubelet (logs, exec) with a client cert.
rn_apiserver_args() {
  printf '%s\n' --bind-address=0.0.0.0 "--advertise-address=${RN_IP}" --endpoint-reconciler-type=lease \
    "--kubelet-client-certificate=${DIR}/pki/apiserver-kubelet-client.crt" \
    "--kubelet-client-key=${DIR}/pki/apiserver-kubelet-client.key" \
    "--kubelet-certificate-authority=${DIR}/pki/ca.crt" --kubelet-preferred-address-types=InternalIP
}

rn_check_host() {
  local b
  [ "$(id -u)" -eq 0 ] || kd_die "--real-node needs root (network namespaces, mounts, iptables)"
  for b in ip iptables conntrack gcc; do
    command -v "${b}" >/dev/null || kd_die "--real-node needs ${b} (apt-get install iproute2 iptables conntrack gcc)"
  done
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
    kd_die "--real-node needs the CNI plugins in /usr/lib/cni (apt-get install containernetworking-plugins)"
  grep -qw overlay /proc/filesystems || kd_die "--real-node needs overlayfs (containerd's snapshotter)"
  for b in "${KD_NODE_BINARIES[@]}"; do
    [ -x "${BIN}/${b}" ] || "${KD_CLUSTER_SCRIPTS}/build.sh" "${KD_NODE_BINARIES[@]}"
  done
  if [ -f "${RN_LOCK}" ]; then
    local owner; owner="$(cat "${RN_LOCK}")"
    if [ ! -f "${owner}/.kdesched-cluster" ]; then
      kd_log "removing a stale real-node lock (its cluster ${owner} is gone)"
    elif rn_owner_alive "${owner}"; then
      kd_die "the real node is in use by the cluster at ${owner} (cluster.sh down there first)"
    else
      # A killed run (its processes gone, SIGKILL or a lost session) leaves the bridge, mounts,
      # rules and the lock: its own `down` takes them away, as it would have.
      kd_log "the real node's owner ${owner} has no process left (a killed run): taking it down first"
      KDESCHED_CLUSTER_DIR="${owner}" "${KD_CLUSTER_SCRIPTS}/cluster.sh" down ||
        kd_die "could not take down the dead cluster at ${owner}"
    fi
  fi
  ! ip link show "${RN_BRIDGE}" >/dev/null 2>&1 || kd_die "bridge ${RN_BRIDGE} exists without a lock; remove it (ip link del ${RN_BRIDGE})"
  echo "${DIR}" >"${RN_LOCK}"
  mkdir -p "${DIR}/node"
  local p
  for p in "${RN_HOST_PATHS[@]}"; do [ -e "${p}" ] || echo "${p}" >>"${DIR}/node/created-paths"; done
  # kube-proxy's KUBE-FIREWALL (filter: INPUT/OUTPUT jump to it), which its --cleanup leaves:
  # `down` removes it unless it was here before (another kube-proxy's).
  iptables -w -S KUBE-FIREWALL >/dev/null 2>&1 || touch "${DIR}/node/created-kube-firewall"
}

# rn_owner_alive OWNER_DIR: true if any component of the cluster at OWNER_DIR still runs.
rn_owner_alive() {
  local f
  for f in "$1"/pids/*.pid; do
    [ -f "${f}" ] || continue
    (DIR="$1" && component_pid "$(basename "${f}" .pid)" >/dev/null) && return 0
  done
  return 1
}

rn_gen_pki() {
  local client='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
  sign_cert kubelet "/O=system:nodes/CN=system:node:${RN_NAME}" "${client}"
  sign_cert kubelet-serving "/CN=${RN_NAME}" \
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:${RN_IP},DNS:${RN_NAME}"
  sign_cert kube-proxy "/CN=system:kube-proxy" "${client}"
  sign_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "${client}"
  write_kubeconfig "${DIR}/kubelet.kubeconfig" "system:node:${RN_NAME}" kubelet
  write_kubeconfig "${DIR}/kube-proxy.kubeconfig" system:kube-proxy kube-proxy
}

# The bridge exists before the API server starts, so that the address it advertises is there.
rn_network_up() {
  ip link add "${RN_BRIDGE}" type bridge
  ip addr add "${RN_IP}/24" dev "${RN_BRIDGE}"
  ip link set "${RN_BRIDGE}" up
  iptables -w -I FORWARD -i "${RN_BRIDGE}" ! -o "${RN_BRIDGE}" -j DROP -m comment --comment "${RN_RULE_TAG}"
  iptables -w -I FORWARD -o "${RN_BRIDGE}" ! -i "${RN_BRIDGE}" -j DROP -m comment --comment "${RN_RULE_TAG}"
}

# The sandbox image: the static pause program as a one-layer OCI image, made here (no registry).
rn_pause_archive() {
  local w="${DIR}/node/pause-image" layer cfg man digest_of
  mkdir -p "${w}/root" "${w}/oci/blobs/sha256"
  gcc -static -Os -s -o "${w}/root/pause" "${KD_CLUSTER_SCRIPTS}/node/pause.c"
  tar -C "${w}/root" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "${w}/layer.tar" pause
  digest_of() { sha256sum "$1" | cut -d' ' -f1; }
  layer="$(digest_of "${w}/layer.tar")"
  cp "${w}/layer.tar" "${w}/oci/blobs/sha256/${layer}"
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "${layer}" >"${w}/config.json"
  cfg="$(digest_of "${w}/config.json")"
  cp "${w}/config.json" "${w}/oci/blobs/sha256/${cfg}"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "${cfg}" "$(stat -c %s "${w}/config.json")" "${layer}" "$(stat -c %s "${w}/layer.tar")" >"${w}/manifest.json"
  man="$(digest_of "${w}/manifest.json")"
  cp "${w}/manifest.json" "${w}/oci/blobs/sha256/${man}"
  printf '{"imageLayoutVersion":"1.0.0"}' >"${w}/oci/oci-layout"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "${man}" "$(stat -c %s "${w}/manifest.json")" "${RN_PAUSE_IMAGE}" "${RN_PAUSE_IMAGE##*:}" >"${w}/oci/index.json"
  tar -C "${w}/oci" -cf "${w}/pause.oci.tar" oci-layout index.json blobs
  printf '%s\n' "${w}/pause.oci.tar"
}

rn_containerd_up() {
  local n="${DIR}/node"
  mkdir -p "${n}/cni/net.d" "${n}/cni/ipam" "${n}/containerd" "${n}/runc" "${n}/opt"
  # Pods get routes to the bridge subnet (on-link) and the Service range only: no default route.
  cat >"${n}/cni/net.d/10-kdesched.conflist" <<JSON
{"cniVersion":"1.0.0","name":"kdesched","plugins":[
 {"type":"bridge","bridge":"${RN_BRIDGE}","isGateway":true,"ipMasq":false,"hairpinMode":true,
  "ipam":{"type":"host-local","dataDir":"${n}/cni/ipam","ranges":[[{"subnet":"${RN_SUBNET}","gateway":"${RN_IP}"}]],
          "routes":[{"dst":"${SERVICE_CIDR}"}]}},
 {"type":"loopback"}]}
JSON
  # restrict_oom_score_adj: this VM lacks CAP_SYS_RESOURCE, so the negative oom_score_adj the
  # kubelet gives a sandbox would be refused and no pod would start.
  cat >"${n}/containerd/config.toml" <<TOML
version = 3
root = "${n}/containerd/root"
state = "${n}/containerd/state"
[grpc]
  address = "$(rn_sock)"
[ttrpc]
  address = "$(rn_sock).ttrpc"
[plugins.'io.containerd.internal.v1.opt']
  path = "${n}/opt"
[plugins.'io.containerd.image-verifier.v1.bindir']
  bin_dir = "${n}/opt/image-verifier/bin"
[plugins.'io.containerd.nri.v1.nri']
  disable = true
[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "${RN_PAUSE_IMAGE}"
[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = "${BIN}/runc"
        Root = "${n}/runc"
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "${n}/cni/net.d"
TOML
  # The shim (containerd-shim-runc-v2) is found on PATH.
  start_component containerd env "PATH=${BIN}:${PATH}" "${BIN}/containerd" --config "${n}/containerd/config.toml" --log-level warn
  wait_component containerd 30 rn_ctr version
  rn_ctr images import --local "$(rn_pause_archive)" >/dev/null
}

# rn_import_image FILE: an OCI archive into the node's containerd (no registry: pods use it with
# imagePullPolicy Never or IfNotPresent).
rn_import_image() {
  rn_ctr images import --local --all-platforms "$1" | sed 's/^/  /' >&2
}

rn_kubelet_up() {
  local n="${DIR}/node"
  pick_port RN_KUBELET_PORT; pick_port RN_KUBELET_HEALTHZ_PORT
  printf 'RN_KUBELET_PORT=%s\nRN_KUBELET_HEALTHZ_PORT=%s\n' "${RN_KUBELET_PORT}" "${RN_KUBELET_HEALTHZ_PORT}" >>"${DIR}/state"
  mkdir -p "${n}/kubelet" "${n}/pod-logs" "${n}/volume-plugins"
  # cgroup v1 here: failCgroupV1 false; no QoS cgroup tree (cgroupsPerQOS false) and no node
  # allocatable enforcement, which would need the whole hierarchy to itself. Eviction thresholds
  # at 1% so a full test machine's disk does not evict the test's pods.
  cat >"${n}/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${RN_IP}
port: ${RN_KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${RN_KUBELET_HEALTHZ_PORT}
tlsCertFile: ${DIR}/pki/kubelet-serving.crt
tlsPrivateKeyFile: ${DIR}/pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: ${DIR}/pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$(rn_sock)
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
localStorageCapacityIsolation: false
podLogsDir: ${n}/pod-logs
volumePluginDir: ${n}/volume-plugins
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
maxPods: 30
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
registerWithTaints:
- {key: ${RN_TAINT}, value: "true", effect: NoSchedule}
YAML
  start_component kubelet "${BIN}/kubelet" --config="${n}/kubelet.yaml" \
    --kubeconfig="${DIR}/kubelet.kubeconfig" --root-dir="${n}/kubelet" --cert-dir="${n}/kubelet/pki" \
    --hostname-override="${RN_NAME}" --node-ip="${RN_IP}" \
    --node-labels="kdesched.io/real-node=true,topology.kubernetes.io/zone=zone-real" --v=1
}

rn_proxy_up() {
  local n="${DIR}/node"
  pick_port RN_PROXY_HEALTHZ_PORT; pick_port RN_PROXY_METRICS_PORT
  printf 'RN_PROXY_HEALTHZ_PORT=%s\n' "${RN_PROXY_HEALTHZ_PORT}" >>"${DIR}/state"
  # conntrack values 0: leave the host's conntrack sysctls alone; no localhost NodePorts (they
  # would set route_localnet on every interface).
  cat >"${n}/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: ${DIR}/kube-proxy.kubeconfig}
mode: iptables
hostnameOverride: ${RN_NAME}
clusterCIDR: ${RN_SUBNET}
healthzBindAddress: 127.0.0.1:${RN_PROXY_HEALTHZ_PORT}
metricsBindAddress: 127.0.0.1:${RN_PROXY_METRICS_PORT}
nodePortAddresses: ["${RN_IP}/32"]
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false, syncPeriod: 30s, minSyncPeriod: 1s}
YAML
  start_component kube-proxy "${BIN}/kube-proxy" --config="${n}/kube-proxy.yaml" --v=1
}

rn_proxy_healthy() { curl -fsS --max-time 2 "http://127.0.0.1:${RN_PROXY_HEALTHZ_PORT}/healthz" >/dev/null; }
rn_node_ready() {
  [ "$(kctl get node "${RN_NAME}" -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
# The kubernetes Service answers from inside a pod's network: its rules are programmed.
rn_service_programmed() { iptables -w -t nat -S KUBE-SERVICES 2>/dev/null | grep -q -- "-d ${SERVICE_IP}/32"; }

# rn_up IMAGE_ARCHIVE...: containerd (with the images), kubelet, kube-proxy; waits until the node
# is Ready and the kubernetes Service is programmed.
rn_up() {
  local t f
  t="$(kd_now_ms)"
  rn_containerd_up
  for f in "$@"; do rn_import_image "${f}"; done
  rn_kubelet_up
  rn_proxy_up
  wait_component_relaunch kube-proxy 60 rn_proxy_healthy
  wait_component kube-proxy 60 rn_service_programmed
  wait_component kubelet 120 rn_node_ready
  kd_log "real node ${RN_NAME} (${RN_IP}) ready: $(kd_elapsed "${t}")"
}

# rn_down: the pods first (each sandbox's CNI DEL takes its veth, address and netns), then the
# daemons, then whatever is left: shims, mounts, chains, the bridge, the rules, the lock.
rn_down() {
  local pid c
  pid="$(component_pid kubelet)" && stop_pids "${pid}"
  if component_pid containerd >/dev/null; then
    rn_crictl stopp $(rn_crictl pods -q 2>/dev/null) >/dev/null 2>&1 || true
    rn_crictl rmp -fa >/dev/null 2>&1 || true
  fi
  pid="$(component_pid kube-proxy)" && stop_pids "${pid}"
  [ ! -x "${BIN}/kube-proxy" ] || "${BIN}/kube-proxy" --cleanup >>"${DIR}/logs/kube-proxy.log" 2>&1 || true
  pid="$(component_pid containerd)" && stop_pids "${pid}"
  rn_stop_shims
  rn_unmount_all
  for c in filter nat mangle; do
    iptables -w -t "${c}" -F KUBE-KUBELET-CANARY 2>/dev/null && iptables -w -t "${c}" -X KUBE-KUBELET-CANARY 2>/dev/null
  done
  iptables -w -t mangle -X KUBE-IPTABLES-HINT 2>/dev/null || true
  if [ -f "${DIR}/node/created-kube-firewall" ]; then
    for c in INPUT OUTPUT; do while iptables -w -D "${c}" -j KUBE-FIREWALL 2>/dev/null; do :; done; done
    iptables -w -F KUBE-FIREWALL 2>/dev/null && iptables -w -X KUBE-FIREWALL 2>/dev/null
  fi
  while iptables -w -D FORWARD -i "${RN_BRIDGE}" ! -o "${RN_BRIDGE}" -j DROP -m comment --comment "${RN_RULE_TAG}" 2>/dev/null; do :; done
  while iptables -w -D FORWARD -o "${RN_BRIDGE}" ! -i "${RN_BRIDGE}" -j DROP -m comment --comment "${RN_RULE_TAG}" 2>/dev/null; do :; done
  ! ip link show "${RN_BRIDGE}" >/dev/null 2>&1 || ip link del "${RN_BRIDGE}"
  find /var/log/containers -maxdepth 1 -lname "${DIR}/*" -delete 2>/dev/null || true
  local p known
  while read -r p; do
    for known in "${RN_HOST_PATHS[@]}"; do [ "${p}" != "${known}" ] || rm -rf -- "${p}"; done
  done < <(cat "${DIR}/node/created-paths" 2>/dev/null)
  [ "$(cat "${RN_LOCK}" 2>/dev/null)" != "${DIR}" ] || rm -f "${RN_LOCK}"
}

# Shims whose containers survived (a crash of containerd or a sandbox crictl could not remove):
# their command line names our socket; their containers go when the shim's runc deletes them,
# so kill every process of each remaining container's cgroup first.
rn_stop_shims() {
  local pid pids=()
  for pid in $(pgrep -f "containerd-shim-runc-v2 .*${DIR}/" 2>/dev/null); do pids+=("${pid}"); done
  [ "${#pids[@]}" -eq 0 ] && return 0
  kd_log "stopping ${#pids[@]} leftover shim(s) and their containers"
  for pid in "${pids[@]}"; do
    pkill -KILL -P "${pid}" 2>/dev/null || true
    kill -KILL "${pid}" 2>/dev/null || true
  done
  sleep 0.5
}

rn_unmount_all() {
  local m
  # Deepest first; lazy, as a container's rootfs may still be held by an exiting process.
  while read -r m; do
    umount -l "${m}" 2>/dev/null || true
  done < <(awk -v d="${DIR}/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

# rn_leftovers: prints what of the real node is still on the machine (empty: nothing).
rn_leftovers() {
  ip link show "${RN_BRIDGE}" >/dev/null 2>&1 && echo "bridge ${RN_BRIDGE}"
  # Each category on its own: under `set -e -o pipefail` a grep that finds nothing would end the
  # function there, and the categories after it would go unchecked.
  ip -o link show type veth 2>/dev/null | grep -F "master ${RN_BRIDGE}" | sed 's/^/veth /' || true
  iptables-save 2>/dev/null | grep -E "${RN_RULE_TAG}|KUBE-" | sed 's/^/iptables /' || true
  awk -v d="${DIR}/" 'index($2, d) == 1 { print "mount " $2 }' /proc/self/mounts
  pgrep -af "containerd-shim-runc-v2 .*${DIR}/" | sed 's/^/process /' || true
  [ ! -f "${RN_LOCK}" ] || echo "lock ${RN_LOCK}"
  local p
  for p in "${RN_HOST_PATHS[@]}"; do
    [ ! -e "${p}" ] || [ -n "$(find "${p}" -mindepth 1 -print -quit 2>/dev/null)" ] || continue
    find "${p}" -mindepth 1 2>/dev/null | sed 's/^/file /'
  done
  return 0
}
