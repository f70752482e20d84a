# bench/run.sh's `steady` part (sourced by run.sh; uses its helpers, RAW, OUT, WORK): a descheduler
# daemon for BENCH_STEADY_MINUTES against a loaded BENCH_STEADY_SIZE cluster while bench/steady.py
# churns pods and nodes at BENCH_STEADY_RATE pod writes per second and probes the reaction with the
# order/payment violation; kdesched (event triggers on) and upstream, each on a fresh cluster loaded
# with the same file, the same interval, churn schedule and seed. raw/steady-IMPL.json per
# descheduler; OUT/steady.md and OUT/steady.png (bench/steady_report.py). Not in `all`.

STEADY_SIZE="${BENCH_STEADY_SIZE:-S2}"
STEADY_MINUTES="${BENCH_STEADY_MINUTES:-30}"
STEADY_RATE="${BENCH_STEADY_RATE:-50}"
STEADY_INTERVAL="${BENCH_STEADY_INTERVAL:-30s}"
STEADY_IMPLS="${BENCH_STEADY_IMPLS:-kdesched upstream}"
# Relabels cycle over this many values; 0 (the default) gives each relabel a value never used
# before, so the number of distinct label values grows through the run (as pod-template-hash and
# controller-uid do in a cluster); a bound shows the steady state without that growth.
STEADY_LABEL_VALUES="${BENCH_STEADY_LABEL_VALUES:-0}"
# The churn starts STEADY_WARMUP seconds after the first cycle. Idle is measured after the churn:
# once the daemon has settled (two intervals in which it neither evicted nor, kdesched, held an
# eviction back by anti-flapping; at most STEADY_SETTLE_MAX seconds of waiting), CPU over
# STEADY_IDLE seconds of periodic cycles with nothing to do. Before the churn it cannot be: the
# bench cluster has no ReplicaSet controller, so an evicted pod is not replaced and
# LowNodeUtilization finds the same room on the underutilized nodes at every cycle, and kdesched's
# owner cooldown (5 min) pauses that backlog's evictions, which a count of evictions alone took
# for the end of it (2026-12-07: 654 evictions in the "idle" window).
STEADY_WARMUP="${BENCH_STEADY_WARMUP:-70}"
STEADY_SETTLE_MAX="${BENCH_STEADY_SETTLE_MAX:-900}"
STEADY_IDLE="${BENCH_STEADY_IDLE:-120}"
# RSS and fd growth are judged over the last TAIL minutes (by default all but the first 10 minutes
# of a run of 30 or more, the second half of a shorter one).
# A command prefix for kdesched's daemon (not upstream's), e.g. "heaptrack -o /tmp/steady.heaptrack"
# for a heap profile by allocation site; CPU and RSS figures of such a run are the wrapper's.
STEADY_WRAP="${BENCH_STEADY_WRAP:-}"
STEADY_TAIL="${BENCH_STEADY_TAIL:-$(awk -v m="${STEADY_MINUTES}" 'BEGIN { print (m >= 30 ? m - 10 : m / 2) }')}"

# proc_cpu_ticks PID: user + system CPU time of the process, in clock ticks.
proc_cpu_ticks() {
  # Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# evicted_count LOG: eviction lines so far (kdesched logs upstream's "Evicted pod" message too).
evicted_count() { grep -cF 'Evicted pod' "$1" || true; }

# activity_count LOG [PORT]: evictions so far, plus, with kdesched's metrics port, the evictions
# anti-flapping held back (kdesched_evictions_suppressed_total, all reasons).
activity_count() {
  local n s=0
  n="$(evicted_count "$1")"
  if [ -n "${2:-}" ]; then
    s="$(curl -kfsS "https://127.0.0.1:$2/metrics" 2>/dev/null |
      awk '$1 ~ /^kdesched_evictions_suppressed_total/ { s += $2 } END { printf "%d", s }')"
  fi
  echo $((n + ${s:-0}))
}

# steady_idle NAME PID LOG [PORT]: waits until the daemon settles, then writes RAW/NAME.idle.json
# (CPU share over STEADY_IDLE seconds, how long the wait took, evictions during the window).
steady_idle() {
  local name="$1" pid="$2" logf="$3" port="${4:-}" start now last n quiet cpu0 cpu1 interval settled=false
  interval="$(awk -v d="${STEADY_INTERVAL}" 'BEGIN { v = d + 0; if (d ~ /m$/) v *= 60; print int(v) }')"
  start="$(date +%s)"
  last="$(activity_count "${logf}" "${port}")"
  quiet="$(date +%s)"
  while now="$(date +%s)"; [ $((now - start)) -lt "${STEADY_SETTLE_MAX}" ]; do
    n="$(activity_count "${logf}" "${port}")"
    if [ "${n}" != "${last}" ]; then
      last="${n}"
      quiet="${now}"
    elif [ $((now - quiet)) -ge $((2 * interval)) ]; then
      settled=true
      break
    fi
    sleep 5
  done
  last="$(evicted_count "${logf}")"
  log "${name}: settled=${settled} after $((now - start)) s (${last} evictions in all); idle for ${STEADY_IDLE} s"
  cpu0="$(proc_cpu_ticks "${pid}")"
  sleep "${STEADY_IDLE}"
  cpu1="$(proc_cpu_ticks "${pid}")"
  n="$(evicted_count "${logf}")"
  jq -n --argjson s "${STEADY_IDLE}" --argjson t0 "${cpu0}" --argjson t1 "${cpu1}" --argjson hz "$(getconf CLK_TCK)" \
    --argjson wait "$((now - start))" --argjson settled "${settled}" --argjson during "$((n - last))" \
    --arg interval "${STEADY_INTERVAL}" \
    '{seconds: $s, cpu_seconds: (($t1 - $t0) / $hz), cpu_share: (($t1 - $t0) / $hz / $s), interval: $interval,
      settled: $settled, settle_wait_seconds: $wait, evictions_during: $during}' >"${RAW}/${name}.idle.json"
}

# steady_run IMPL NDJSON NODES
steady_run() {
  local impl="$1" nd="$2" nodes="$3" name="steady-$1" dir="${WORK}/cluster-steady-$1" kc port cmd marker
  wait_quiet "${name}"
  log "${name}: cluster up, loading ${STEADY_SIZE} (load ${LOAD})"
  cluster_up "${name}"
  load_cluster "${name}" "${nd}" >"${RAW}/${name}.load.json"
  kc="$(user_kubeconfig "${name}" "bench-${impl}")"
  user_kubeconfig "${name}" bench-driver >/dev/null
  port="$(( 20000 + RANDOM % 10000 ))"
  if [ "${impl}" = upstream ]; then
    cmd=("$("${BENCH}/build-upstream.sh" --print-bin)" --v=1 --secure-port 0 --policy-config-file "${POLICY}")
    marker='"Total number of evictions/requests" extension point="Balance"'
  else
    # shellcheck disable=SC2206 # the wrapper is words on purpose
    cmd=(${STEADY_WRAP} "${BUILD}/kdesched" --secure-port "${port}" --bind-address 127.0.0.1
      --policy-config-file "${BENCH}/policies/steady-kdesched.yaml")
    marker='msg="cycle finished"'
  fi
  cmd+=(--kubeconfig "${kc}" --descheduling-interval "${STEADY_INTERVAL}"
    --client-connection-qps "${QPS}" --client-connection-burst "${BURST}")
  wait_quiet "${name} run"
  log "${name}: ${cmd[*]} (load ${LOAD})"
  "${cmd[@]}" >"${RAW}/${name}.log" 2>&1 &
  local dpid=$!
  PIDS+=("${dpid}")
  kd_wait_for "${name}: first cycle" 600 grep -qF "${marker}" "${RAW}/${name}.log" ||
    { tail -n 20 "${RAW}/${name}.log" >&2; die "${name}: no first cycle"; }
  log "${name}: first cycle done; the churn in ${STEADY_WARMUP} s, idle measured after it"
  sleep "${STEADY_WARMUP}"
  "${PY}" "${BENCH}/steady.py" --server "$(cluster_env "${name}" APISERVER_URL)" --ca "${dir}/pki/ca.crt" \
    --cert "${dir}/pki/admin.crt" --key "${dir}/pki/admin.key" \
    --driver-cert "${WORK}/users-${name}/bench-driver.crt" --driver-key "${WORK}/users-${name}/bench-driver.key" \
    --audit "${WORK}/audit-${name}.log" --evictor "bench-${impl}" --tag "${name}" --pods "${nd}" \
    --nodes "${nodes}" --pid "${dpid}" --minutes "${STEADY_MINUTES}" --rate "${STEADY_RATE}" \
    --tail-minutes "${STEADY_TAIL}" --label-values "${STEADY_LABEL_VALUES}" \
    --out "${RAW}/${name}.json" || log "${name}: steady.py failed"
  # Idle: no churn, no probes, the periodic cycles still running, nothing left to evict.
  steady_idle "${name}" "${dpid}" "${RAW}/${name}.log" "$([ "${impl}" = kdesched ] && echo "${port}")"
  log "${name}: idle: $(jq -c . "${RAW}/${name}.idle.json")"
  if [ "${impl}" = kdesched ]; then
    curl -kfsS "https://127.0.0.1:${port}/metrics" >"${RAW}/${name}.metrics" 2>/dev/null || true
  fi
  kill -TERM "${dpid}" 2>/dev/null || true
  wait "${dpid}" 2>/dev/null || true
  "${PY}" "${BENCH}/audit_summary.py" "${WORK}/audit-${name}.log" "bench-${impl}" >"${RAW}/${name}.audit.json" || true
  log "${name}: $(jq -c '.summary' "${RAW}/${name}.json" 2>/dev/null)"
  cluster_down "${name}"
}

part_steady() {
  need_builds
  "${BENCH}/build-upstream.sh" >&2
  mkdir -p "${RAW}" "${WORK}"
  local nd nodes impl
  nd="$(gen "${STEADY_SIZE}" --kwok --format ndjson)"
  nodes="$(size_args "${STEADY_SIZE}" | sed -n 's/.*--nodes \([0-9]*\).*/\1/p')"
  for impl in ${STEADY_IMPLS}; do steady_run "${impl}" "${nd}" "${nodes}"; done
  local py="${PY}"
  "${py}" -c "import matplotlib" 2>/dev/null || py=/usr/bin/python3
  "${py}" "${BENCH}/steady_report.py" "${RAW}" "${OUT}" >&2 || log "steady report failed"
}
