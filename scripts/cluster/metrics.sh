# shellcheck shell=bash
# The usage sources of the test control plane, sourced by cluster.sh (it uses cluster.sh's
# functions and variables: DIR, BIN, sign_cert, start_component, ...). Nothing here runs unless
# `cluster.sh up --metrics-server` or `cluster.sh start-prometheus` asks for it.
#
#   kwok's server   the fake nodes' kubelet endpoint, https://127.0.0.1:KWOK_PORT, with a serving
#                   certificate of the cluster CA. Every node advertises that port in
#                   status.daemonEndpoints.kubeletEndpoint (kwok's node-initialize stage does it when
#                   kwok runs with --node-port) and its resource metrics path in the annotation
#                   metrics.k8s.io/resource-metrics-path (/metrics/nodes/NODE/metrics/resource:
#                   kwok serves every node on one port, told apart by the path). kwok-usage.yaml
#                   defines the series.
#   metrics-server  sigs.k8s.io/metrics-server from build.sh, on https://127.0.0.1:METRICS_SERVER_PORT
#                   as the ServiceAccount kube-system/metrics-server (a TokenRequest token, its own
#                   RBAC from the module), scraping each node at InternalIP (127.0.0.1) and the
#                   node's status port every 10 s (its minimum), verifying kwok's certificate.
#   APIService      v1beta1.metrics.k8s.io -> Service kube-system/metrics-server of type
#                   ExternalName 127.0.0.1: the aggregator resolves an ExternalName service to
#                   ExternalName:APIService.spec.service.port without Endpoints (which may not hold
#                   a loopback address), and checks metrics-server's certificate against caBundle
#                   (the cluster CA) for the name metrics-server.kube-system.svc.
#   Prometheus      Debian's prometheus, scraping the same kwok endpoints every second (targets
#                   from the nodes' status, instance = node name), with the recording rule
#                   instance:node_cpu:rate:sum (cpu usage / allocatable, in [0,1]) for the query of
#                   upstream's README.
#   prometheus-auth Debian's nginx in front of Prometheus, requiring a bearer token (start-prometheus
#                   --bearer-token-file): Prometheus cannot require one itself.

MS_PORT_NAME=https
MS_SERVICE=metrics-server
MS_NAMESPACE=kube-system

# ms_enabled: the cluster was brought up with --metrics-server.
ms_enabled() { [ "${METRICS_SERVER:-0}" = 1 ]; }

# ms_pick_ports: the two ports of the usage chain, recorded in DIR/state by the caller.
ms_pick_ports() { pick_port KWOK_PORT; pick_port METRICS_SERVER_PORT; }

ms_gen_pki() {
  sign_cert kwok-serving "/CN=kwok-kubelet" \
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost'
  sign_cert metrics-server "/CN=metrics-server" \
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:${MS_SERVICE}.${MS_NAMESPACE}.svc,IP:127.0.0.1"
  chmod 600 "${DIR}/pki"/*.key
}

# ms_kwok_args: kwok's extra flags: its server on loopback only (--node-port alone would bind
# 0.0.0.0), the serving certificate, and the metric definitions beside the stages.
ms_kwok_args() {
  printf '%s\n' --node-port="${KWOK_PORT}" --server-address="127.0.0.1:${KWOK_PORT}" \
    --tls-cert-file="${DIR}/pki/kwok-serving.crt" --tls-private-key-file="${DIR}/pki/kwok-serving.key" \
    --config="${KD_CLUSTER_SCRIPTS}/kwok-usage.yaml"
}

# ms_write_kubeconfig: metrics-server's kubeconfig, with a ServiceAccount token (as in a pod). The
# token lasts 48 h; start-metrics-server writes a new one.
ms_write_kubeconfig() {
  local token
  token="$(kctl -n "${MS_NAMESPACE}" create token "${MS_SERVICE}" --duration=48h)" ||
    kd_die "TokenRequest for ${MS_NAMESPACE}/${MS_SERVICE} failed"
  write_kubeconfig "${DIR}/metrics-server.kubeconfig" metrics-server --token "${token}"
}

# ms_register: the Service and the APIService, once metrics-server serves (registered earlier, the
# aggregator's first checks fail and its retries back off).
ms_register() {
  kctl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Service
metadata:
  name: ${MS_SERVICE}
  namespace: ${MS_NAMESPACE}
spec:
  type: ExternalName
  externalName: 127.0.0.1
  ports:
  - name: ${MS_PORT_NAME}
    port: ${METRICS_SERVER_PORT}
    protocol: TCP
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.metrics.k8s.io
spec:
  service:
    name: ${MS_SERVICE}
    namespace: ${MS_NAMESPACE}
    port: ${METRICS_SERVER_PORT}
  group: metrics.k8s.io
  version: v1beta1
  caBundle: $(base64 -w0 <"${DIR}/pki/ca.crt")
  groupPriorityMinimum: 100
  versionPriority: 100
EOF
}

ms_serving() { curl -fsS --max-time 2 --cacert "${DIR}/pki/ca.crt" "https://127.0.0.1:${METRICS_SERVER_PORT}/livez" | grep -qx ok; }
ms_apiservice_available() {
  [ "$(kctl get apiservice v1beta1.metrics.k8s.io -o 'jsonpath={.status.conditions[?(@.type=="Available")].status}')" = True ]
}

# ms_up: RBAC, token, Service, APIService and the metrics-server process; returns once the
# aggregator reports the APIService Available (metrics for a node follow after two scrapes).
ms_up() {
  local t; t="$(kd_now_ms)"
  if [ ! -x "${BIN}/metrics-server" ] || [ ! -s "$(dirname "${BIN}")/share/metrics-server-rbac.yaml" ]; then
    kd_log "metrics-server missing in ${BIN}; running build.sh metrics-server (cold: minutes)"
    "${KD_CLUSTER_SCRIPTS}/build.sh" metrics-server
  fi
  kctl apply -f "$(dirname "${BIN}")/share/metrics-server-rbac.yaml" >/dev/null
  ms_write_kubeconfig
  start_component metrics-server "${BIN}/metrics-server" \
    --bind-address=127.0.0.1 --secure-port="${METRICS_SERVER_PORT}" \
    --tls-cert-file="${DIR}/pki/metrics-server.crt" --tls-private-key-file="${DIR}/pki/metrics-server.key" \
    --kubeconfig="${DIR}/metrics-server.kubeconfig" \
    --authentication-kubeconfig="${DIR}/metrics-server.kubeconfig" \
    --authorization-kubeconfig="${DIR}/metrics-server.kubeconfig" \
    --kubelet-preferred-address-types=InternalIP --kubelet-use-node-status-port \
    --kubelet-certificate-authority="${DIR}/pki/ca.crt" \
    --metric-resolution=10s --kubelet-request-timeout=5s
  wait_component metrics-server 60 ms_serving
  ms_register
  wait_component metrics-server 60 ms_apiservice_available
  kd_log "metrics-server on https://127.0.0.1:${METRICS_SERVER_PORT}, APIService v1beta1.metrics.k8s.io Available: $(kd_elapsed "${t}")"
}

# ---------------------------------------------------------------------------
# Prometheus

prom_ready() { curl -fsS --max-time 2 "http://127.0.0.1:${PROMETHEUS_PORT}/-/ready" >/dev/null; }

# prom_write_targets: one scrape target per node, as Kubernetes' node discovery would make it:
# InternalIP and the status port, the annotated metrics path, instance = the node's name. Debian's
# prometheus is built without kubernetes_sd_configs (Debian removed it for client-go's
# dependencies), so the nodes are written to a file_sd file, which Prometheus re-reads on change.
prom_write_targets() {
  local f="${DIR}/prometheus/nodes.json"
  kctl get nodes -o json | jq '[.items[]
    | {name: .metadata.name,
       ip: ([.status.addresses[]? | select(.type == "InternalIP") | .address][0]),
       port: .status.daemonEndpoints.kubeletEndpoint.Port,
       path: .metadata.annotations["metrics.k8s.io/resource-metrics-path"]}
    | select(.ip != null and .port != null and .port != 0 and .path != null)
    | {targets: ["\(.ip):\(.port)"], labels: {instance: .name, node: .name, __metrics_path__: .path}}]' \
    >"${f}.tmp"
  mv -f "${f}.tmp" "${f}"
}

prom_write_config() {
  local d="${DIR}/prometheus"
  mkdir -p "${d}"
  cat >"${d}/rules.yml" <<'EOF'
groups:
- name: kdesched-usage
  interval: 1s
  rules:
  # Upstream's README names this query; here it is the node's cpu usage over its allocatable cpu.
  - record: instance:node_cpu:rate:sum
    expr: >-
      sum by (instance) (rate(node_cpu_usage_seconds_total{job="kubelet-resource"}[5s]))
      / on (instance) sum by (instance) (kube_node_status_allocatable{job="kubelet-resource",resource="cpu"})
  - record: instance:node_memory_working_set_bytes:ratio
    expr: >-
      sum by (instance) (node_memory_working_set_bytes{job="kubelet-resource"})
      / on (instance) sum by (instance) (kube_node_status_allocatable{job="kubelet-resource",resource="memory"})
EOF
  cat >"${d}/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [${d}/rules.yml]
scrape_configs:
- job_name: kubelet-resource
  scheme: https
  tls_config: {ca_file: ${DIR}/pki/ca.crt}
  file_sd_configs:
  - files: [${d}/nodes.json]
    refresh_interval: 5s
EOF
  prom_write_targets
}

# ms_prometheus_start: Debian's prometheus against this cluster (component "prometheus").
ms_prometheus_start() {
  command -v prometheus >/dev/null || kd_die "prometheus not found (apt-get install prometheus)"
  ms_enabled || kd_die "start-prometheus needs a cluster brought up with --metrics-server (kwok's server)"
  if component_pid prometheus >/dev/null; then
    echo "cluster.sh: prometheus already running on http://127.0.0.1:${PROMETHEUS_PORT}"
    return 0
  fi
  if [ -z "${PROMETHEUS_PORT:-}" ]; then
    pick_port PROMETHEUS_PORT
    echo "PROMETHEUS_PORT=${PROMETHEUS_PORT}" >>"${DIR}/state"
  fi
  prom_write_config
  start_component prometheus "$(command -v prometheus)" \
    --config.file="${DIR}/prometheus/prometheus.yml" --storage.tsdb.path="${DIR}/prometheus/data" \
    --web.listen-address="127.0.0.1:${PROMETHEUS_PORT}" --log.level=warn
  wait_component prometheus 60 prom_ready
  write_env
  echo "cluster.sh: prometheus on http://127.0.0.1:${PROMETHEUS_PORT}"
}

# ms_stop NAME [--kill]: stops an optional component (metrics-server, prometheus); its pid file
# stays, so start-NAME relaunches it with the same command line.
ms_stop() {
  local pid
  pid="$(component_pid "$1")" || { echo "cluster.sh: $1 is not running"; return 0; }
  if [ "${2:-}" = --kill ]; then kill -KILL "${pid}"; STOP_TIMEOUT=0 stop_pids "${pid}" 2>/dev/null; else stop_pids "${pid}"; fi
  echo "cluster.sh: $1 (pid ${pid}) stopped"
}

ms_start_again() {
  [ -f "${DIR}/cmd/metrics-server.args" ] || kd_die "no metrics-server in this cluster (up --metrics-server)"
  if component_pid metrics-server >/dev/null; then echo "cluster.sh: metrics-server already running"; return 0; fi
  kd_wait_for "port ${METRICS_SERVER_PORT} released" 15 port_released "${METRICS_SERVER_PORT}" ||
    kd_die "metrics-server's port ${METRICS_SERVER_PORT} is still bound"
  ms_write_kubeconfig
  launch metrics-server
  wait_component metrics-server 60 ms_serving
  write_env
  echo "cluster.sh: metrics-server started (pid $(cat "${DIR}/pids/metrics-server.pid")); the aggregator marks" \
    "v1beta1.metrics.k8s.io Available again at its next check (within 30 s)"
}

# ---------------------------------------------------------------------------
# A bearer-token front for Prometheus (component "prometheus-auth")
#
# Prometheus cannot require a token on its API: its web config does TLS and basic auth only.
# Where a token is needed, a proxy stands in front of it (OpenShift's monitoring stack, for which
# upstream's authToken was made, uses kube-rbac-proxy/oauth-proxy). Here it is Debian's nginx,
# passing a request on only when it carries "Authorization: Bearer TOKEN".

prom_auth_ready() {
  [ "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:${PROMETHEUS_AUTH_PORT}/-/ready")" = 401 ]
}

# prom_auth_write_config TOKEN_FILE
prom_auth_write_config() {
  local d="${DIR}/prometheus-auth" token
  token="$(tr -d '\n' <"$1")"
  # The token goes into nginx's configuration as a quoted string.
  [[ "${token}" =~ ^[A-Za-z0-9._~+/=-]+$ ]] || kd_die "the token in $1 is empty or holds characters other than a JWT's"
  mkdir -p "${d}/tmp"
  cat >"${d}/nginx.conf.tmp" <<EOF
daemon off;
master_process on;
worker_processes 1;
pid ${d}/nginx.pid;
error_log ${DIR}/logs/prometheus-auth.log warn;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${d}/tmp/body;
  proxy_temp_path ${d}/tmp/proxy;
  fastcgi_temp_path ${d}/tmp/fastcgi;
  uwsgi_temp_path ${d}/tmp/uwsgi;
  scgi_temp_path ${d}/tmp/scgi;
  server {
    listen 127.0.0.1:${PROMETHEUS_AUTH_PORT};
    location / {
      if (\$http_authorization != "Bearer ${token}") { return 401; }
      proxy_pass http://127.0.0.1:${PROMETHEUS_PORT};
    }
  }
}
EOF
  mv -f "${d}/nginx.conf.tmp" "${d}/nginx.conf"
}

# ms_prometheus_auth_start TOKEN_FILE: Prometheus (if not running) and the front that requires
# the token in TOKEN_FILE; a running front is given the new token (SIGHUP: nginx reloads).
ms_prometheus_auth_start() {
  local file="$1" pid
  [ -f "${file}" ] || kd_die "token file '${file}' not found"
  command -v nginx >/dev/null || kd_die "nginx not found (apt-get install nginx-light)"
  component_pid prometheus >/dev/null || ms_prometheus_start
  if [ -z "${PROMETHEUS_AUTH_PORT:-}" ]; then
    pick_port PROMETHEUS_AUTH_PORT
    echo "PROMETHEUS_AUTH_PORT=${PROMETHEUS_AUTH_PORT}" >>"${DIR}/state"
  fi
  prom_auth_write_config "${file}"
  if pid="$(component_pid prometheus-auth)"; then
    kill -HUP "${pid}"
    echo "cluster.sh: prometheus-auth reloaded with the token of ${file}"
    return 0
  fi
  start_component prometheus-auth "$(command -v nginx)" -p "${DIR}/prometheus-auth" \
    -c "${DIR}/prometheus-auth/nginx.conf" -e "${DIR}/logs/prometheus-auth.log"
  wait_component prometheus-auth 30 prom_auth_ready
  write_env
  echo "cluster.sh: prometheus-auth on http://127.0.0.1:${PROMETHEUS_AUTH_PORT} (bearer token of ${file})"
}
