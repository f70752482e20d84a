# bench/run.sh's `chaos` part (sourced by run.sh; uses its log, RAW, OUT): the fault script of
# test/e2e/chaos.sh run long, as a soak. CI runs one seed of 7 rounds (each fault kind once); this
# runs BENCH_CHAOS_SEEDS (each a different schedule) of BENCH_CHAOS_ROUNDS rounds each: with 10,
# each of the 7 fault kinds once and 3 of them again, in another order per seed. Each run's whole output is kept in
# raw/chaos-SEED.log; OUT/chaos.md gets one row per seed: the checks passed and failed, the faults
# by kind, the invariants' counts (eviction POSTs, daemon processes, leader terms, stale episodes),
# the wall time, and the replay command of a failed seed. Not in `all`.

CHAOS_SEEDS="${BENCH_CHAOS_SEEDS:-1 2 3}"
CHAOS_ROUNDS="${BENCH_CHAOS_ROUNDS:-10}"

part_chaos() {
  local bin seed log t0 secs rc results=() failed=0
  bin="${BUILD}/kdesched"
  [ -x "${bin}" ] || bin="${ROOT}/build/kdesched"
  [ -x "${bin}" ] || die "chaos: no kdesched binary (${BUILD}/kdesched or build/kdesched)"
  for seed in ${CHAOS_SEEDS}; do
    log="${RAW}/chaos-${seed}.log"
    log "chaos seed ${seed}, ${CHAOS_ROUNDS} rounds (log ${log})"
    t0="$(date +%s)"
    rc=0
    KDESCHED_BIN="${bin}" FAULT_SEED="${seed}" FAULT_ROUNDS="${CHAOS_ROUNDS}" \
      bash "${ROOT}/test/e2e/chaos.sh" >"${log}" 2>&1 || rc=$?
    secs=$(( $(date +%s) - t0 ))
    [ "${rc}" = 0 ] || failed=$((failed + 1))
    results+=("$(chaos_row "${seed}" "${log}" "${secs}" "${rc}")")
    log "chaos seed ${seed}: exit ${rc} in ${secs} s; $(grep -E '^chaos: ' "${log}" | tail -n 1)"
  done
  {
    echo "# Fault soak: test/e2e/chaos.sh, ${CHAOS_ROUNDS} rounds per seed"
    echo
    echo "Machine: $(machine_tag); kdesched ${bin}; $(date -u +%Y-%m-%dT%H:%MZ)."
    echo "Command: \`BENCH_CHAOS_SEEDS='${CHAOS_SEEDS}' BENCH_CHAOS_ROUNDS=${CHAOS_ROUNDS} bench/run.sh chaos\`"
    echo
    echo "| seed | checks | faults | counts | wall | exit |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${results[@]}"
    echo
    echo "Failed seeds: ${failed} (replay one: \`FAULT_SEED=N FAULT_ROUNDS=${CHAOS_ROUNDS} test/e2e/chaos.sh\`)."
  } >"${OUT}/chaos.md"
  log "chaos: ${OUT}/chaos.md"
  [ "${failed}" = 0 ] || die "chaos: ${failed} seed(s) failed; see ${OUT}/chaos.md"
}

# chaos_row SEED LOG SECONDS RC: the table row of one run, from the lines chaos.sh prints.
chaos_row() {
  local checks faults counts
  checks="$(sed -n 's/^chaos: \(.*\)$/\1/p' "$2" | tail -n 1)"
  faults="$(sed -n 's/.*seed [0-9]*: faults \([0-9]* ([^)]*)\).*/\1/p' "$2" | tail -n 1)"
  counts="$(sed -n 's/^ *counts: //p' "$2" | tail -n 1)"
  printf '| %s | %s | %s | %s | %s s | %s |\n' "$1" "${checks:-?}" "${faults:-?}" "${counts:-?}" "$3" "$4"
}
