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
# The first cycle evicts the loaded cluster's planted backlog, which fills kdesched's default rate
# limit (30 evictions a minute) for a minute: the churn starts after it.
STEADY_WARMUP="${BENCH_STEADY_WARMUP:-70}"
# RSS and fd growth are judged over the last TAIL minutes (by default all but the first 10 minutes
# of a run of 30 or more, the second half of a shorter one).
STEADY_TAIL="${BENCH_STEADY_TAIL:-$(awk -v m="${STEADY_MINUTES}" 'BEGIN { print (m >= 30 ? m - 10 : m / 2) }')}"

# proc_cpu_ticks PID: user + system CPU time of the process, in clock ticks.
proc_cpu_ticks() {
  # Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
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
    cmd=("${BUILD}/kdesched" --secure-port "${port}" --bind-address 127.0.0.1
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
  log "${name}: first cycle done; churn in ${STEADY_WARMUP} s"
  # The warm-up is the idle measurement: no churn, no probes, the periodic cycles still running.
  local cpu0 cpu1
  cpu0="$(proc_cpu_ticks "${dpid}")"
  sleep "${STEADY_WARMUP}"
  cpu1="$(proc_cpu_ticks "${dpid}")"
  jq -n --argjson s "${STEADY_WARMUP}" --argjson t0 "${cpu0}" --argjson t1 "${cpu1}" --argjson hz "$(getconf CLK_TCK)" \
    '{seconds: $s, cpu_seconds: (($t1 - $t0) / $hz), cpu_share: (($t1 - $t0) / $hz / $s)}' >"${RAW}/${name}.idle.json"
  log "${name}: idle: $(jq -c . "${RAW}/${name}.idle.json")"
  "${PY}" "${BENCH}/steady.py" --server "$(cluster_env "${name}" APISERVER_URL)" --ca "${dir}/pki/ca.crt" \
    --cert "${dir}/pki/admin.crt" --key "${dir}/pki/admin.key" \
    --driver-cert "${WORK}/users-${name}/bench-driver.crt" --driver-key "${WORK}/users-${name}/bench-driver.key" \
    --audit "${WORK}/audit-${name}.log" --evictor "bench-${impl}" --tag "${name}" --pods "${nd}" \
    --nodes "${nodes}" --pid "${dpid}" --minutes "${STEADY_MINUTES}" --rate "${STEADY_RATE}" \
    --tail-minutes "${STEADY_TAIL}" --label-values "${STEADY_LABEL_VALUES}" \
    --out "${RAW}/${name}.json" || log "${name}: steady.py failed"
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
