#!/usr/bin/env bash
# kdesched benchmarks: scale, memory and reaction time, side by side with upstream descheduler.
#
# Usage: bench/run.sh [PART...]        PART: engine plugins side-by-side reaction profile usage chaos absorb
#                                      plan-rss steady report all
#                          (default: all = engine plugins side-by-side reaction profile report)
#
#   engine        kdesched's engine offline on generated snapshots S1 S2 S3 S3d: one process per
#                 size (plugins_bench --engine, pinned to one core) for decode MB/s, heap bytes per
#                 cached pod and cycle time; `kdesched plan` under /usr/bin/time for end-to-end wall
#                 time and peak RSS. Also decode on API-server-shaped objects (--wire).
#   plugins       plugins_bench (Google Benchmark): ns per pod per plugin at 3k/30k/150k pods.
#   side-by-side  upstream descheduler and kdesched, one-shot, same policy, same QPS/burst, real
#                 evictions, against the same kwok control plane loaded with S1 and S2; the
#                 cluster is torn down and reloaded between runs. Records wall time, CPU seconds,
#                 peak RSS, bytes read, API requests (audit log) and the evicted set; diffs the sets.
#   largest       the side by side at BENCH_LARGEST_SIZE (S3) with kwok leases renewed less often
#                 (not in all)
#   reaction      event-to-eviction time: the order/payment violation created N times in a running
#                 kdesched daemon with event triggers (interval 1h), and in upstream at a 10 s
#                 interval; times from the apiserver audit log (violating pod created -> Eviction POST).
#   profile       perf profiles of the engine (S3) and of a one-shot kdesched on S2, RSS over time.
#   usage         LowNodeUtilization/HighNodeUtilization by measured usage (metrics-server, and a
#                 Prometheus score) against the same by requests at S3, interleaved rounds pinned
#                 to one core: ratio of median cycle CPU, heap bytes per pod the usage keeps
#                 (bench/run_usage.sh; not in `all`).
#   chaos         the fault script (test/e2e/chaos.sh) as a soak: BENCH_CHAOS_SEEDS runs of
#                 BENCH_CHAOS_ROUNDS rounds, a row each in OUT/chaos.md (bench/run_chaos.sh; not in
#                 `all`).
#   absorb        pod watch events per second on one core: decode, store update, trigger mapping
#                 (absorb_bench; not in `all`).
#   steady        a daemon for BENCH_STEADY_MINUTES against a loaded cluster under churn (pod relabels
#                 and rolls, node taints) with order/payment probes: RSS, CPU, fds and event-to-
#                 eviction over time, kdesched and upstream (bench/run_steady.sh; not in `all`).
#   plan-rss      `kdesched plan`'s peak RSS against its input's size, and its wall time, at S2 and S3
#                 (bench/run_plan_rss.sh; not in `all`).
#   report        bench/results/<date>-<machine>.md and .png from the raw results.
#
# Environment (defaults in brackets):
#   BENCH_OUT            results directory [bench/results/<date>-<machine>]
#   BENCH_WORK           scratch for snapshots, clusters, audit logs [/tmp/kdesched-bench]
#   BENCH_BUILD_DIR      kdesched build with -DKDESCHED_BENCH=ON [build-bench]
#   BENCH_ENGINE_SIZES   [S1 S2 S3 S3d]      BENCH_SBS_SIZES [S1 S2]
#   BENCH_LARGEST_SIZE   the largest part's size [S3]
#   BENCH_SBS_IMPLS      side-by-side (and largest) runs, in order [upstream kdesched]; kdesched-list is kdesched
#                        with --watch-list=false (the paged LIST sync, as before watch-lists);
#                        kdesched-c<N> is kdesched with --eviction-concurrency N
#   BENCH_QPS/BURST      client QPS and burst for both deschedulers [50/100]
#   BENCH_REACTION_N     violations per reaction run [20]
#   BENCH_UPSTREAM_INTERVAL  upstream's interval in the reaction run [10s]
#   BENCH_MAX_LOAD       wait for the 1-min load average to drop below this before measuring [1.5]
#   BENCH_LOAD_WAIT      ... but at most this many seconds [900]
#   BENCH_RUN_TIMEOUT    a descheduler run is stopped after this many seconds (a result) [900]
#   BENCH_USAGE_SIZE/ROUNDS/CYCLES  the usage part's size, rounds and cycles per run [S3/5/5]
#   BENCH_CHAOS_SEEDS/ROUNDS  the chaos part's seeds and rounds per seed ["1 2 3"/10]
#   BENCH_PLAN_RSS_SIZES/RUNS  the plan-rss part's sizes and runs per size [S2 S3/3]
#   BENCH_STEADY_SIZE/MINUTES/RATE/INTERVAL/IMPLS/WARMUP/TAIL/LABEL_VALUES  the steady part
#                        [S2/30/50/30s/"kdesched upstream"/70 s/20 min]
#   BENCH_STEADY_SETTLE_MAX/IDLE  after the churn: the most seconds to wait for the daemon to settle,
#                        then the idle window's seconds [900/120]
#
# Time on 2 cores (2026-11-30): engine 30 s, plugins ~10 min, side-by-side 2.4 min for S1 and
# 17.5 min for S2, reaction 7 min, profile 5.5 min (see bench/README.md). Clusters are always torn
# down (EXIT trap).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"
BENCH="${ROOT}/bench"

machine_tag() {
  local cpu
  cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1 | tr -cs 'A-Za-z0-9' '-' | sed 's/-$//; s/^-//')"
  printf '%sc%sg-%s\n' "$(nproc)" "$(awk '/MemTotal/ { printf "%d", ($2 / 1048576) + 0.5 }' /proc/meminfo)" "${cpu}"
}

BUILD="${BENCH_BUILD_DIR:-${ROOT}/build-bench}"
OUT="${BENCH_OUT:-${BENCH}/results/$(date +%Y-%m-%d)-$(machine_tag)}"
RAW="${OUT}/raw"
WORK="${BENCH_WORK:-/tmp/kdesched-bench}"
QPS="${BENCH_QPS:-50}"
BURST="${BENCH_BURST:-100}"
ENGINE_SIZES="${BENCH_ENGINE_SIZES:-S1 S2 S3 S3d}"
SBS_SIZES="${BENCH_SBS_SIZES:-S1 S2}"
SBS_IMPLS="${BENCH_SBS_IMPLS:-upstream kdesched}"
LARGEST_SIZE="${BENCH_LARGEST_SIZE:-S3}"
REACTION_N="${BENCH_REACTION_N:-20}"
UPSTREAM_INTERVAL="${BENCH_UPSTREAM_INTERVAL:-10s}"
MAX_LOAD="${BENCH_MAX_LOAD:-1.5}"
LOAD_WAIT="${BENCH_LOAD_WAIT:-900}"
RUN_TIMEOUT="${BENCH_RUN_TIMEOUT:-900}"
POLICY="${BENCH}/policies/four-strategies.yaml"
CLUSTER_SH="${ROOT}/scripts/cluster/cluster.sh"
PY="${BENCH_PYTHON:-python3}"

log() { kd_log "bench: $*"; }
die() { kd_die "bench: $*"; }

# ---------------------------------------------------------------------------------------------
# cleanup: every cluster this run brought up, every process it started

CLUSTERS=()
PIDS=()
cleanup() {
  local rc=$? p d
  trap - EXIT INT TERM
  for p in "${PIDS[@]+"${PIDS[@]}"}"; do kill -TERM "${p}" 2>/dev/null || true; done
  for d in "${CLUSTERS[@]+"${CLUSTERS[@]}"}"; do
    [ -d "${d}" ] && KDESCHED_CLUSTER_DIR="${d}" "${CLUSTER_SH}" down >/dev/null 2>&1 || true
  done
  exit "${rc}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------------------------------------
# helpers

# size_args SIZE: kdesched-gen arguments of a named size.
size_args() {
  case "$1" in
    # Planted violations 0.5% of the pods (one eviction each); one idle node in 200 for
    # LowNodeUtilization: about 1% of the pods are evicted at S2.
    S1) echo "--nodes 100 --pods 3000 --namespaces 20 --violations 15 --idle-share 0.005" ;;
    S2) echo "--nodes 1000 --pods 30000 --namespaces 300 --violations 150 --idle-share 0.005" ;;
    S3) echo "--nodes 5000 --pods 150000 --namespaces 3000 --violations 750 --idle-share 0.005" ;;
    S3d) echo "--nodes 1364 --pods 150000 --namespaces 3000 --violations 750 --idle-share 0.005" ;;  # 110 pods per node
    # The reaction benchmark's background: S1 without violations or skew.
    R1) echo "--nodes 100 --pods 3000 --namespaces 20 --violations 0 --idle-share 0 --hot-share 0" ;;
    *) die "unknown size $1 (S1 S2 S3 S3d)" ;;
  esac
}

load1() { cut -d' ' -f1 /proc/loadavg; }

# wait_quiet LABEL: waits (at most LOAD_WAIT s) until the 1-min load average is below MAX_LOAD;
# sets LOAD to the load at the end either way. (Not a $(...) function: a signal must reach the
# main shell's trap within one sleep.)
LOAD=""
wait_quiet() {
  local deadline=$(( $(date +%s) + LOAD_WAIT )) l said=0
  while true; do
    l="$(load1)"
    if awk -v l="${l}" -v m="${MAX_LOAD}" 'BEGIN { exit !(l < m) }'; then break; fi
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      log "$1: load ${l} still >= ${MAX_LOAD} after ${LOAD_WAIT}s; measuring anyway (recorded)"
      break
    fi
    [ "${said}" = 1 ] || log "$1: waiting for the 1-min load average (${l}) to drop below ${MAX_LOAD}"
    said=1
    sleep 5
  done
  LOAD="$(load1)"
}

need_builds() {
  local b
  for b in kdesched kdesched-gen plugins_bench; do
    [ -x "${BUILD}/${b}" ] || die "${BUILD}/${b} missing; build: cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DKDESCHED_BENCH=ON -DKDESCHED_TESTS=OFF && ninja -C build-bench -j2 kdesched kdesched-gen plugins_bench"
  done
  [ -x /usr/bin/time ] || die "/usr/bin/time missing (apt-get install time)"
}

# gen SIZE [EXTRA...]: generated file path (cached in WORK by size and arguments).
gen() {
  local size="$1"; shift
  local args key f
  args="$(size_args "${size}") $*"
  key="$(echo "${args}" | tr -cs 'A-Za-z0-9' '_')"
  f="${WORK}/gen/${size}${key}.json"
  mkdir -p "${WORK}/gen"
  # With --metrics, the Prometheus answer scoring the same usage goes beside it (.prom.json).
  local prom=()
  case " $* " in *" --metrics "*) prom=(--prometheus-answer "${f%.json}.prom.json") ;; esac
  if [ ! -s "${f}" ]; then
    # shellcheck disable=SC2086
    "${BUILD}/kdesched-gen" ${args} "${prom[@]+"${prom[@]}"}" -o "${f}.tmp" 2>"${f}.stats" && mv -f "${f}.tmp" "${f}"
  fi
  echo "${f}"
}

# timev FILE KEY: a field of /usr/bin/time -v output.
timev() { sed -n "s/^[[:space:]]*$2: //p" "$1" | head -n 1; }
# wall seconds from "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.03"
timev_wall() {
  sed -n 's/^[[:space:]]*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$1" |
    awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'
}
# time_json FILE: {"wall_seconds":..,"user_seconds":..,"sys_seconds":..,"max_rss_kb":..}
time_json() {
  printf '{"wall_seconds":%s,"user_seconds":%s,"sys_seconds":%s,"max_rss_kb":%s,"exit_status":%s}' \
    "$(timev_wall "$1")" "$(timev "$1" 'User time (seconds)')" "$(timev "$1" 'System time (seconds)')" \
    "$(timev "$1" 'Maximum resident set size (kbytes)')" "$(timev "$1" 'Exit status' || echo null)"
}

# ---------------------------------------------------------------------------------------------
# engine

part_engine() {
  need_builds
  mkdir -p "${RAW}"
  local size snap wire out t l
  for size in ${ENGINE_SIZES}; do
    snap="$(gen "${size}")"
    wire="$(gen "${size}" --wire)"
    wait_quiet "engine ${size}"; l="${LOAD}"
    log "engine ${size}: $(cat "${snap}.stats") (load ${l})"
    out="${RAW}/engine-${size}.json"
    t="${WORK}/time.txt"
    # One core: the engine is single-threaded; pinning keeps other load off its core's schedule.
    /usr/bin/time -v -o "${t}" taskset -c 0 "${BUILD}/plugins_bench" --engine --snapshot "${snap}" --policy "${POLICY}" --cycles 5 \
      >"${WORK}/engine.json"
    {
      printf '{"size":"%s","gen":"%s","load1":%s,"engine":' "${size}" "$(size_args "${size}")" "${l}"
      cat "${WORK}/engine.json" | tr -d '\n'
      printf ',"engine_process":%s' "$(time_json "${t}")"
      /usr/bin/time -v -o "${t}" taskset -c 0 "${BUILD}/plugins_bench" --engine --snapshot "${wire}" --policy "${POLICY}" --cycles 1 \
        >"${WORK}/engine-wire.json"
      printf ',"engine_wire":'; tr -d '\n' <"${WORK}/engine-wire.json"
      printf ',"engine_wire_process":%s' "$(time_json "${t}")"
      /usr/bin/time -v -o "${t}" taskset -c 0 "${BUILD}/kdesched" plan --snapshot "${snap}" --policy-config-file "${POLICY}" \
        --now 2026-11-02T00:00:00Z -o json >"${WORK}/plan.json"
      printf ',"plan_process":%s' "$(time_json "${t}")"
      printf ',"plan_summary":%s}\n' "$(jq -c '.summary | {evictions, refused, pods, nodes, pdbs}' "${WORK}/plan.json")"
    } >"${out}.tmp"
    mv -f "${out}.tmp" "${out}"
    log "engine ${size}: $(jq -c '{decode_mb_s: .engine.decode_mb_per_s, wire_mb_s: .engine_wire.decode_mb_per_s, heap_b_pod: .engine.heap_bytes_per_pod, wire_heap_b_pod: .engine_wire.heap_bytes_per_pod, cycle_cpu: .engine.cycle_median_cpu_seconds, plan_wall: .plan_process.wall_seconds, plan_rss_kb: .plan_process.max_rss_kb, evictions: .plan_summary.evictions}' "${out}")"
  done
}

part_plugins() {
  need_builds
  mkdir -p "${RAW}"
  local l
  wait_quiet plugins; l="${LOAD}"
  log "plugins_bench (load ${l}) ..."
  taskset -c 0 "${BUILD}/plugins_bench" --benchmark_min_time=0.5 --benchmark_out="${RAW}/plugins_bench.json" \
    --benchmark_out_format=json --benchmark_context=load1="${l}" >"${RAW}/plugins_bench.txt"
  cat "${RAW}/plugins_bench.txt" >&2
}

# ---------------------------------------------------------------------------------------------
# control plane

# cluster_up NAME: a fresh control plane for the benchmark (no nodes yet), with the audit log of
# the bench-* users at WORK/audit-NAME.log. The ReplicaSet controller is off: the loaded pods are
# pre-bound and point to real ReplicaSets (so the garbage collector keeps them and the disruption
# controller finds their scale), but nothing recreates an evicted pod, and nothing races the
# loader creating pods for a ReplicaSet before its pods exist.
CLUSTER_UP_EXTRA=()  # more `cluster.sh up` arguments (the largest part's lease settings)
cluster_up() {
  local name="$1" dir="${WORK}/cluster-$1"
  local audit="${WORK}/audit-$1.log"
  rm -rf "${audit}" "${WORK}/users-$1"  # certificates of an earlier cluster of the same name
  CLUSTERS+=("${dir}")
  KDESCHED_CLUSTER_DIR="${dir}" "${CLUSTER_SH}" up --nodes 0 \
    --apiserver-arg=--audit-policy-file="${BENCH}/audit-policy.yaml" \
    --apiserver-arg=--audit-log-path="${audit}" \
    --apiserver-arg=--audit-log-maxsize=0 \
    --kcm-arg=--controllers=*,-replicaset-controller,-deployment-controller \
    --kcm-arg=--kube-api-qps=300 --kcm-arg=--kube-api-burst=600 \
    "${CLUSTER_UP_EXTRA[@]+"${CLUSTER_UP_EXTRA[@]}"}" >"${WORK}/up-${name}.log" 2>&1 ||
    { tail -n 30 "${WORK}/up-${name}.log" >&2; die "cluster ${name} did not come up"; }
}

cluster_down() {
  local name="$1" dir="${WORK}/cluster-$1"
  KDESCHED_CLUSTER_DIR="${dir}" "${CLUSTER_SH}" down >/dev/null 2>&1 || log "down ${name} failed"
}

# cluster_env NAME VAR: one value of the cluster's env file.
cluster_env() { sed -n "s/^$2=//p" "${WORK}/cluster-$1/env" | head -n 1; }

# user_kubeconfig NAME USER: a client certificate for USER (group system:masters) signed by the
# cluster CA, and a kubeconfig for it; prints the kubeconfig path.
user_kubeconfig() {
  local name="$1" user="$2" dir="${WORK}/cluster-$1" k="${WORK}/users-$1"
  mkdir -p "${k}"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${k}/${user}.key" \
    -out "${k}/${user}.csr" -subj "/O=system:masters/CN=${user}" >/dev/null 2>&1
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"${k}/${user}.ext"
  openssl x509 -req -in "${k}/${user}.csr" -CA "${dir}/pki/ca.crt" -CAkey "${dir}/pki/ca.key" -CAserial "${k}/ca.srl" \
    -CAcreateserial -days 2 -sha256 -extfile "${k}/${user}.ext" -out "${k}/${user}.crt" >/dev/null 2>&1
  cat >"${k}/${user}.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bench
  cluster:
    server: $(cluster_env "${name}" APISERVER_URL)
    certificate-authority-data: $(base64 -w0 <"${dir}/pki/ca.crt")
users:
- name: ${user}
  user:
    client-certificate-data: $(base64 -w0 <"${k}/${user}.crt")
    client-key-data: $(base64 -w0 <"${k}/${user}.key")
contexts:
- name: bench
  context: {cluster: bench, user: ${user}}
current-context: bench
EOF
  echo "${k}/${user}.kubeconfig"
}

# load_cluster NAME FILE: bench/load_cluster.py with the admin certificate; summary JSON on stdout.
load_cluster() {
  local dir="${WORK}/cluster-$1"
  "${PY}" "${BENCH}/load_cluster.py" --server "$(cluster_env "$1" APISERVER_URL)" --ca "${dir}/pki/ca.crt" \
    --cert "${dir}/pki/admin.crt" --key "${dir}/pki/admin.key" --concurrency 32 "$2"
}

kubectl_c() { "$(kd_bin_dir)/kubectl" --kubeconfig "${WORK}/cluster-$1/admin.kubeconfig" "${@:2}"; }

# run_measured OUTPREFIX TIMEOUT CMD...: runs CMD under /usr/bin/time -v and stops it after
# TIMEOUT seconds (a timeout is a result). Every 0.25 s it samples the process's TCP sockets
# (`ss -tinp`: bytes_received/bytes_sent per connection, TLS included), so OUTPREFIX.net ends with
# the bytes each connection carried (/proc/PID/io would miss Go's read() vs asio's recvmsg()).
# It also records the process's RSS at each sample (OUTPREFIX.rss: "seconds rss_kb"), which shows
# when the peak happens (cache sync or cycle).
# Writes OUTPREFIX.time, OUTPREFIX.log (stdout+stderr), OUTPREFIX.net ("received sent timedout").
run_measured() {
  local pre="$1" timeout="$2"; shift 2
  /usr/bin/time -v -o "${pre}.time" "$@" >"${pre}.log" 2>&1 &
  local tpid=$! cpid="" deadline=$(( $(date +%s) + timeout )) timedout=0
  PIDS+=("${tpid}")
  : >"${pre}.ss"
  : >"${pre}.rss"
  local t0; t0="$(kd_now_ms)"
  while kill -0 "${tpid}" 2>/dev/null; do
    if [ -z "${cpid}" ]; then
      cpid="$(pgrep -P "${tpid}" | head -n 1 || true)"
      # Under a wrapper (perf record -- CMD), measure the wrapped process.
      if [ -n "${cpid}" ] && [ "$(cat "/proc/${cpid}/comm" 2>/dev/null)" = perf ]; then
        sleep 0.2
        cpid="$(pgrep -P "${cpid}" | head -n 1 || true)"
      fi
    fi
    if [ -n "${cpid}" ]; then
      awk -v t="$(( $(kd_now_ms) - t0 ))" '/^VmRSS:/ { printf "%.1f %d\n", t / 1000, $2 }' "/proc/${cpid}/status" >>"${pre}.rss" 2>/dev/null || true
      ss -tinpH state established 2>/dev/null | awk -v pid="pid=${cpid}," '
        /users:\(\(/ { mine = index($0, pid) > 0; key = $3; next }
        mine { r = 0; t = 0
               if (match($0, /bytes_received:[0-9]+/)) r = substr($0, RSTART + 15, RLENGTH - 15)
               if (match($0, /bytes_sent:[0-9]+/)) t = substr($0, RSTART + 11, RLENGTH - 11)
               print key, r, t; mine = 0 }' >>"${pre}.ss" || true
    fi
    if [ "$(date +%s)" -ge "${deadline}" ] && [ "${timedout}" = 0 ]; then
      log "stopping ${pre##*/} after ${timeout}s (a timeout is a result)"
      timedout=1
      [ -n "${cpid}" ] && kill -TERM "${cpid}" 2>/dev/null || true
    fi
    sleep 0.25
  done
  wait "${tpid}" || true
  # Per connection (local address:port) the largest counters seen, summed.
  awk -v to="${timedout}" '{ if ($2 > r[$1]) r[$1] = $2; if ($3 > t[$1]) t[$1] = $3 }
    END { for (k in r) { R += r[k]; T += t[k] } printf "%d %d %d\n", R, T, to }' "${pre}.ss" >"${pre}.net"
  rm -f "${pre}.ss"
}

# ---------------------------------------------------------------------------------------------
# side by side

# count_pods NAME: the cluster's pods, counted page by page (`kubectl get pods -A -o name` held
# 10 GB at S3).
count_pods() {
  local page="${WORK}/count-$1.json" cont="" n=0
  while :; do
    kubectl_c "$1" get --raw "/api/v1/pods?limit=${DUMP_PAGE:-2000}${cont:+&continue=${cont}}" >"${page}"
    n=$(( n + $(jq '.items | length' "${page}") ))
    cont="$(jq -r '.metadata.continue // ""' "${page}")"
    [ -n "${cont}" ] || break
  done
  rm -f "${page}"
  echo "${n}"
}

# dump_state NAME STATE PODS: the cluster's nodes, pods, PDBs, namespaces and priority classes as
# concatenated typed lists, one per page of 2,000 (`kdesched plan` and plugins_bench read that),
# and "ns/name node owner" per pod. Page by page: at S3, `kubectl get -o json` of everything held
# 9 GB and was killed by the OOM killer beside a 9 GB API server.
dump_state() {
  local name="$1" state="$2" pods="$3" path page cont
  : >"${state}"; : >"${pods}"
  page="${WORK}/page-${name}.json"
  for path in /api/v1/nodes /api/v1/pods /apis/policy/v1/poddisruptionbudgets /api/v1/namespaces \
    /apis/scheduling.k8s.io/v1/priorityclasses; do
    cont=""
    while :; do
      kubectl_c "${name}" get --raw "${path}?limit=${DUMP_PAGE:-2000}${cont:+&continue=${cont}}" >"${page}"
      cat "${page}" >>"${state}"
      [ "${path}" = /api/v1/pods ] && jq -r '.items[] | "\(.metadata.namespace)/\(.metadata.name) \(.spec.nodeName) \(.metadata.ownerReferences[0].name)"' "${page}" >>"${pods}"
      cont="$(jq -r '.metadata.continue // ""' "${page}")"
      [ -n "${cont}" ] || break
    done
  done
  rm -f "${page}"
}


# sbs_run SIZE IMPL: one descheduler, one fresh cluster.
sbs_run() {
  local size="$1" impl="$2" name="sbs-$1-$2" nd kc pre l0 l1 before after netrx nettx timedout
  nd="$(gen "${size}" --kwok --format ndjson)"
  pre="${RAW}/${name}"
  wait_quiet "${name}"; l0="${LOAD}"
  log "${name}: cluster up (load ${l0})"
  local t0; t0="$(kd_now_ms)"
  cluster_up "${name}"
  log "${name}: loading $(cat "${nd}.stats")"
  load_cluster "${name}" "${nd}" >"${pre}.load.json"
  log "${name}: loaded in $(kd_elapsed "${t0}") total: $(cat "${pre}.load.json")"
  # The exact cluster state the descheduler will see, for `kdesched plan` (diff explanations) and
  # for decode throughput on real API-server JSON.
  dump_state "${name}" "${WORK}/state-${name}.json" "${WORK}/pods-${name}.txt"
  if [ "${SBS_STOP_SCHEDULER:-0}" = 1 ]; then
    # Pods are created bound and evicted ones are not recreated: kube-scheduler has nothing to do,
    # and at S3 its 1.6 GB cache is memory the machine needs.
    kill -TERM "$(cat "${WORK}/cluster-${name}/pids/kube-scheduler.pid")" 2>/dev/null || true
  fi
  before="$(wc -l <"${WORK}/pods-${name}.txt")"
  kc="$(user_kubeconfig "${name}" "bench-${impl}")"
  local cmd
  case "${impl}" in
    upstream) cmd=("$("${BENCH}/build-upstream.sh" --print-bin)" --v=1) ;;
    kdesched) cmd=("${BUILD}/kdesched") ;;
    kdesched-list) cmd=("${BUILD}/kdesched" --watch-list=false) ;;
    kdesched-c[0-9]*) cmd=("${BUILD}/kdesched" --eviction-concurrency "${impl#kdesched-c}") ;;
    *) die "unknown side-by-side impl ${impl} (upstream, kdesched, kdesched-list, kdesched-c<N>)" ;;
  esac
  cmd+=(--policy-config-file "${POLICY}" --kubeconfig "${kc}" --descheduling-interval 0
    --client-connection-qps "${QPS}" --client-connection-burst "${BURST}" --secure-port 0)
  wait_quiet "${name} run"; l1="${LOAD}"
  log "${name}: running ${impl} (load ${l1}): ${cmd[*]}"
  run_measured "${pre}" "${RUN_TIMEOUT}" "${cmd[@]}"
  sleep 2  # let the audit backend flush and kwok delete the evicted pods
  after="$(count_pods "${name}")"
  "${PY}" "${BENCH}/audit_summary.py" "${WORK}/audit-${name}.log" "bench-${impl}" --evicted-out "${pre}.evicted.txt" >"${pre}.audit.json"
  read -r netrx nettx timedout <"${pre}.net"
  {
    printf '{"size":"%s","impl":"%s","load1_before_up":%s,"load1_at_run":%s,"qps":%s,"burst":%s,' "${size}" "${impl}" "${l0}" "${l1}" "${QPS}" "${BURST}"
    printf '"process":%s,"net_bytes_received":%s,"net_bytes_sent":%s,"timed_out":%s,' "$(time_json "${pre}.time")" "${netrx}" "${nettx}" "${timedout}"
    printf '"pods_before":%s,"pods_after":%s,"state_json_bytes":%s,' "${before}" "${after}" "$(stat -c %s "${WORK}/state-${name}.json")"
    printf '"audit":%s,"load":%s}\n' "$(cat "${pre}.audit.json")" "$(cat "${pre}.load.json")"
  } >"${pre}.json"
  log "${name}: $(jq -c '{wall: .process.wall_seconds, cpu: (.process.user_seconds + .process.sys_seconds), rss_kb: .process.max_rss_kb, requests: .audit.requests, evicted: .audit.evicted_count, codes: .audit.eviction_codes, before: .pods_before, after: .pods_after}' "${pre}.json")"
  # What kdesched would do on exactly this state (plugin and reason per pod).
  "${BUILD}/kdesched" plan --snapshot "${WORK}/state-${name}.json" --policy-config-file "${POLICY}" -o json \
    >"${WORK}/plan-${name}.json" 2>"${WORK}/plan-${name}.err" || log "${name}: plan on the state dump failed: $(head -c 300 "${WORK}/plan-${name}.err")"
  jq -c '{evictions: [.evictions[] | {pod: "\(.namespace)/\(.name)", node, plugin}], summary: .summary | {evictions, refused, pods, nodes}}' \
    "${WORK}/plan-${name}.json" >"${pre}.plan.json" 2>/dev/null || true
  # Decode throughput on the real API-server JSON of this cluster (kdesched's engine, one core).
  taskset -c 0 "${BUILD}/plugins_bench" --engine --snapshot "${WORK}/state-${name}.json" --policy "${POLICY}" --cycles 3 \
    >"${pre}.state-engine.json" 2>/dev/null || true
  cluster_down "${name}"
}

part_side_by_side() {
  need_builds
  "${BENCH}/build-upstream.sh" >&2
  mkdir -p "${RAW}" "${WORK}"
  local size impl
  for size in ${SBS_SIZES}; do
    for impl in ${SBS_IMPLS}; do sbs_run "${size}" "${impl}"; done
    "${PY}" "${BENCH}/diff_sets.py" "${RAW}" "${size}" "${WORK}" >"${RAW}/diff-${size}.md" || log "diff ${size} failed"
    log "diff ${size}: $(head -n 3 "${RAW}/diff-${size}.md" | tr '\n' ' ')"
  done
}

# largest: the side by side at the biggest size this machine's control plane holds
# (BENCH_LARGEST_SIZE, S3: 5,000 nodes, 150,000 pods), upstream and kdesched each on a freshly
# loaded cluster, as side-by-side does. Not in `all` (~40 min per descheduler at S3).
# 5,000 kwok nodes renewing a 40 s lease every 10 s are 500 writes/s, which keeps the 2-core
# machine's load above BENCH_MAX_LOAD and slows the loader to ~120 pods/s; a 600 s lease (renewed
# every 150 s: 33 writes/s) with kube-controller-manager's node-monitor grace period raised to match
# keeps the nodes Ready and the machine quiet. kube-scheduler is stopped once the pods are loaded
# (they are bound; see dump_state for the memory). Both deschedulers see the same settings.
part_largest() {
  need_builds
  "${BENCH}/build-upstream.sh" >&2
  mkdir -p "${RAW}" "${WORK}"
  local impl size="${LARGEST_SIZE}"
  CLUSTER_UP_EXTRA=(--kwok-arg=--node-lease-duration-seconds=600 --kcm-arg=--node-monitor-grace-period=900s)
  SBS_STOP_SCHEDULER=1
  for impl in ${SBS_IMPLS}; do sbs_run "${size}" "${impl}"; done
  CLUSTER_UP_EXTRA=() SBS_STOP_SCHEDULER=0
  "${PY}" "${BENCH}/diff_sets.py" "${RAW}" "${size}" "${WORK}" >"${RAW}/diff-${size}.md" || log "diff ${size} failed"
  log "diff ${size}: $(head -n 3 "${RAW}/diff-${size}.md" | tr '\n' ' ')"
}

# ---------------------------------------------------------------------------------------------
# reaction

part_reaction() {
  need_builds
  "${BENCH}/build-upstream.sh" >&2
  mkdir -p "${RAW}" "${WORK}"
  local name=reaction nd l port kc dc
  # S1-sized background without planted violations: the daemons have a realistic cache but
  # nothing to do until the benchmark creates a violation (the reaction policies run the two
  # deschedule strategies; see bench/policies/reaction-*.yaml).
  nd="$(gen R1 --kwok --format ndjson)"
  wait_quiet reaction; l="${LOAD}"
  log "reaction: cluster up (load ${l})"
  cluster_up "${name}"
  load_cluster "${name}" "${nd}" >"${RAW}/reaction.load.json"
  dc="$(user_kubeconfig "${name}" bench-driver)"
  local dir="${WORK}/cluster-${name}" users="${WORK}/users-${name}"
  local variant policy impl interval jitter
  for variant in kdesched-defaults kdesched-fast upstream-interval; do
    case "${variant}" in
      kdesched-defaults) impl=kdesched; policy="${BENCH}/policies/reaction-kdesched.yaml"; interval=1h; jitter=1 ;;
      kdesched-fast) impl=kdesched; policy="${BENCH}/policies/reaction-kdesched-fast.yaml"; interval=1h; jitter=1 ;;
      # A random wait of up to one interval before each violation: uniform phase against the ticks.
      upstream-interval) impl=upstream; policy="${BENCH}/policies/reaction-upstream.yaml"; interval="${UPSTREAM_INTERVAL}"
        jitter="$(awk -v d="${UPSTREAM_INTERVAL}" 'BEGIN { n = d + 0; if (d ~ /m$/) n *= 60; print n }')" ;;
    esac
    [ -f "${users}/bench-${impl}.kubeconfig" ] && kc="${users}/bench-${impl}.kubeconfig" || kc="$(user_kubeconfig "${name}" "bench-${impl}")"
    port="$(( 20000 + RANDOM % 10000 ))"
    local cmd
    if [ "${impl}" = upstream ]; then
      cmd=("$("${BENCH}/build-upstream.sh" --print-bin)" --v=1 --secure-port 0)
    else
      cmd=("${BUILD}/kdesched" --secure-port "${port}" --bind-address 127.0.0.1)
    fi
    cmd+=(--policy-config-file "${policy}" --kubeconfig "${kc}" --descheduling-interval "${interval}"
      --client-connection-qps "${QPS}" --client-connection-burst "${BURST}")
    log "reaction ${variant}: ${cmd[*]}"
    "${cmd[@]}" >"${RAW}/reaction-${variant}.log" 2>&1 &
    local dpid=$!
    PIDS+=("${dpid}")
    # Wait for the first (empty) cycle: caches synced, nothing to do.
    local marker='msg="cycle finished"'
    [ "${impl}" = upstream ] && marker='"Total number of evictions/requests" extension point="Deschedule"'
    kd_wait_for "reaction ${variant}: first cycle" 120 grep -qF "${marker}" "${RAW}/reaction-${variant}.log" ||
      { tail -n 20 "${RAW}/reaction-${variant}.log" >&2; die "reaction ${variant}: no first cycle"; }
    kill -0 "${dpid}" 2>/dev/null || { tail -n 20 "${RAW}/reaction-${variant}.log" >&2; die "reaction ${variant}: descheduler exited"; }
    "${PY}" "${BENCH}/reaction.py" --server "$(cluster_env "${name}" APISERVER_URL)" --ca "${dir}/pki/ca.crt" \
      --cert "${users}/bench-driver.crt" --key "${users}/bench-driver.key" --audit "${WORK}/audit-${name}.log" \
      --evictor "bench-${impl}" --tag "${variant}" --n "${REACTION_N}" --nodes 100 --timeout 90 --jitter "${jitter}" \
      --load1 "$(load1)" >"${RAW}/reaction-${variant}.json" || log "reaction ${variant} failed"
    if [ "${impl}" = kdesched ]; then
      curl -kfsS "https://127.0.0.1:${port}/metrics" 2>/dev/null | grep -E '^kdesched_event_to_eviction_seconds|^kdesched_trigger_runs_total' \
        >"${RAW}/reaction-${variant}.metrics" || true
    fi
    kill -TERM "${dpid}" 2>/dev/null || true
    wait "${dpid}" 2>/dev/null || true
    log "reaction ${variant}: $(jq -c '{n, evicted, p50_seconds, p99_seconds, max_seconds}' "${RAW}/reaction-${variant}.json" 2>/dev/null)"
  done
  cluster_down "${name}"
}

# profile: where kdesched's time goes where targets are missed. perf (apt linux-perf) on (a) the
# engine alone on S3 (decode + index + cycles, one core) and (b) a real one-shot kdesched against
# a loaded S2 cluster (sync, cycle, evictions; kernel included), plus its RSS over time.
perf_top() {  # perf_top DATA OUT TITLE
  {
    echo "# $3"
    echo "## self time by shared object"
    perf report -i "$1" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -n 12
    echo "## self time by symbol (>= 0.7%)"
    perf report -i "$1" --no-children --sort dso,symbol --percent-limit 0.7 --stdio -g none 2>/dev/null |
      grep -E '^ +[0-9]' | cut -c1-220 | head -n 60
  } >"$2"
}

# absorb: pod watch events per second on one core, decode -> store -> trigger seeds
# (bench/absorb_bench.cpp), raw/absorb.json.
part_absorb() {
  [ -x "${BUILD}/absorb_bench" ] || die "absorb: build ${BUILD} with -DKDESCHED_BENCH=ON (target absorb_bench)"
  wait_quiet absorb
  taskset -c 0 "${BUILD}/absorb_bench" --benchmark_min_time=2 --benchmark_repetitions=3 \
    --benchmark_report_aggregates_only=true --benchmark_format=json >"${RAW}/absorb.json"
  log "absorb (median events/s on one core): $(jq -r '[.benchmarks[] | select(.aggregate_name == "median" and .items_per_second != null)
    | "\(.run_name) \(.items_per_second | floor)"] | join(", ")' "${RAW}/absorb.json")"
}

part_profile() {
  need_builds
  command -v perf >/dev/null || die "perf missing (apt-get install linux-perf)"
  mkdir -p "${RAW}"
  local snap
  snap="$(gen S3)"
  wait_quiet "profile engine"
  log "profile: engine S3 (load ${LOAD})"
  perf record -F 999 -g -o "${WORK}/perf-engine.data" taskset -c 0 "${BUILD}/plugins_bench" --engine --snapshot "${snap}" \
    --policy "${POLICY}" --cycles 3 >"${RAW}/profile-engine-S3.json" 2>/dev/null
  perf_top "${WORK}/perf-engine.data" "${RAW}/profile-engine-S3.txt" "plugins_bench --engine on S3 (decode, index, 3 cycles), load ${LOAD}"

  local name=profile-S2 nd kc pre="${RAW}/profile-S2-kdesched"
  nd="$(gen S2 --kwok --format ndjson)"
  wait_quiet "${name}"
  cluster_up "${name}"
  load_cluster "${name}" "${nd}" >"${RAW}/profile-S2.load.json"
  kc="$(user_kubeconfig "${name}" bench-kdesched)"
  wait_quiet "${name} run"
  log "profile: kdesched one-shot on S2 under perf (load ${LOAD})"
  run_measured "${pre}" "${RUN_TIMEOUT}" perf record -F 499 -g -o "${WORK}/perf-kdesched.data" -- \
    "${BUILD}/kdesched" --policy-config-file "${POLICY}" --kubeconfig "${kc}" --descheduling-interval 0 \
    --client-connection-qps "${QPS}" --client-connection-burst "${BURST}" --secure-port 0
  cluster_down "${name}"
  perf_top "${WORK}/perf-kdesched.data" "${pre}.txt" "kdesched one-shot on S2 (sync, cycle, evictions), load ${LOAD}"
  log "profile: ${pre}.txt, ${pre}.rss (peak $(sort -k2 -n "${pre}.rss" | tail -n 1))"
}

part_report() {
  mkdir -p "${OUT}"
  # matplotlib from apt lives in the system python.
  local py="${PY}"
  "${py}" -c "import matplotlib" 2>/dev/null || py=/usr/bin/python3
  "${py}" "${BENCH}/report.py" "${OUT}" >&2
}

# shellcheck source=bench/run_usage.sh
source "${BENCH}/run_usage.sh"
# shellcheck source=bench/run_chaos.sh
source "${BENCH}/run_chaos.sh"
# shellcheck source=bench/run_plan_rss.sh
source "${BENCH}/run_plan_rss.sh"
# shellcheck source=bench/run_steady.sh
source "${BENCH}/run_steady.sh"

# ---------------------------------------------------------------------------------------------

# Sourced (tests, ad-hoc experiments): the functions only.
[ "${BASH_SOURCE[0]}" = "$0" ] || return 0

parts=("$@")
[ "${#parts[@]}" -gt 0 ] || parts=(all)
mkdir -p "${WORK}" "${RAW}"
{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine=$(machine_tag)"
  echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
  echo "nproc=$(nproc)"
  echo "kdesched_commit=$(git -C "${ROOT}" rev-parse --short HEAD)$(git -C "${ROOT}" diff --quiet HEAD -- pkg cmd CMakeLists.txt || echo '+dirty')"
  echo "upstream=$("${BENCH}/build-upstream.sh" --print-bin)"
  echo "qps=${QPS} burst=${BURST}"
} >"${RAW}/env-$(date +%H%M%S).txt"
for p in "${parts[@]}"; do
  case "${p}" in
    engine) part_engine ;;
    plugins) part_plugins ;;
    side-by-side|sbs) part_side_by_side ;;
    largest) part_largest ;;
    reaction) part_reaction ;;
    report) part_report ;;
    profile) part_profile ;;
    usage) part_usage ;;
    chaos) part_chaos ;;
    absorb) part_absorb ;;
    plan-rss) part_plan_rss ;;
    steady) part_steady ;;
    all) part_engine; part_plugins; part_side_by_side; part_reaction; part_profile; part_report ;;
    -h|--help|help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown part ${p} (engine plugins side-by-side largest reaction profile usage chaos absorb plan-rss steady report all)" ;;
  esac
done
log "done; results in ${OUT}"
