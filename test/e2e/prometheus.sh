#!/usr/bin/env bash
# A real Prometheus (Debian's `prometheus`) scrapes kdesched as upstream's ServiceMonitor implies:
# scheme https, insecure_skip_verify (the serving certificate is self-signed, as upstream's).
#
#  1. order/payment with the violation standing; a daemon (1h) starts on a free port over HTTPS and
#     evicts payment in its first cycle.
#  2. Prometheus (scrape every 1 s) reports the target up, and its HTTP API answers
#     descheduler_pods_evicted_total{result="success"} >= 1 and process_resident_memory_bytes > 0.
#  3. `promtool check metrics` on the exposition: printed; only upstream's own lint is tolerated
#     (the deprecated counter descheduler_pods_evicted without _total, and descheduler_build_info's
#     camelCase label names AppVersion, GoVersion, ...).
#
# Own cluster directory (${KDESCHED_PROMETHEUS_DIR:-/tmp/kdesched-prometheus.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "prometheus: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin prometheus --cluster
kds_require_tools
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  die "prometheus and promtool are needed (Debian package prometheus; scripts/install-deps.sh)"

# prom_value QUERY: the first sample's value of an instant query, or "" when there is none.
prom_value() {
  curl -fsS -m 3 "http://127.0.0.1:${PROM_PORT}/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    jq -r '.data.result[0].value[1] // empty'
}
prom_at_least() { local v; v="$(prom_value "$1")"; [ -n "${v}" ] && awk -v v="${v}" -v m="$2" 'BEGIN { exit !(v >= m) }'; }

phase "cluster up (3 kwok nodes), order beside payment"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload
must "order moved onto payment's node" kds_violate

phase "1. the daemon serves HTTPS and evicts the standing violation"
kds_free_port PORT
kds_start d --descheduling-interval 1h --secure-port "${PORT}" --bind-address 127.0.0.1
check "payment ${PAYMENT_POD} evicted in the first cycle" kds_wait_log d "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " 30
check "/healthz over HTTPS" bash -c "[ \"\$(curl -ks -m 3 https://127.0.0.1:${PORT}/healthz)\" = ok ]"
check "no answer over plain HTTP" bash -c "! curl -s -m 3 -o /dev/null http://127.0.0.1:${PORT}/healthz"

phase "2. Prometheus scrapes it over HTTPS"
kds_free_port PROM_PORT
cat >"${WORK}/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: descheduler
    scheme: https
    tls_config: {insecure_skip_verify: true}
    static_configs: [{targets: ["127.0.0.1:${PORT}"]}]
YAML
prometheus --config.file="${WORK}/prometheus.yml" --storage.tsdb.path="${WORK}/tsdb" \
  --web.listen-address="127.0.0.1:${PROM_PORT}" >"${WORK}/prometheus.log" 2>&1 </dev/null 7>&- 8>&- &
KDS_EXTRA_PIDS+=("$!")
KDS_LOGS+=("${WORK}/prometheus.log")
check "target up" kd_wait_for "scrape" 30 prom_at_least 'up{job="descheduler"}' 1
check "descheduler_pods_evicted_total{result=\"success\"} >= 1 from Prometheus" \
  kd_wait_for "evictions series" 20 prom_at_least 'sum(descheduler_pods_evicted_total{result="success"})' 1
check "process_resident_memory_bytes > 0 from Prometheus" \
  kd_wait_for "process series" 20 prom_at_least 'process_resident_memory_bytes{job="descheduler"}' 1
note "resident memory: $(prom_value 'process_resident_memory_bytes{job="descheduler"}') bytes; evictions: $(prom_value 'sum(descheduler_pods_evicted_total{result="success"})')"

phase "3. promtool check metrics"
must "GET /metrics" kds_metrics "${PORT}" "${WORK}/metrics.txt"
promtool check metrics <"${WORK}/metrics.txt" >"${WORK}/lint.txt" 2>&1 || true
sed 's/^/       /' "${WORK}/lint.txt"
check "promtool: nothing beyond upstream's own lint (descheduler_pods_evicted, descheduler_build_info)" \
  bash -c "! grep -Ev '^(descheduler_pods_evicted counter|descheduler_build_info label names)' '${WORK}/lint.txt' | grep -q ."
