# bench/run.sh's `usage` part (sourced by run.sh; uses its helpers, BUILD, RAW, WORK, gen, wait_quiet).
#
# Balancing by measured usage against the same strategy by requests, at BENCH_USAGE_SIZE (S3, 150k
# pods): one snapshot with NodeMetrics and PodMetrics for every node and pod (kdesched-gen
# --metrics, usage derived from requests) and a Prometheus answer scoring each node. Each run is
# one plugins_bench --engine process pinned to core 0 (the engine part's set-up) running
# BENCH_USAGE_CYCLES cycles of one policy (bench/policies/usage-*.yaml); the usage runs get the
# usage `kdesched plan` builds from the same file. Rounds are interleaved: every round runs each
# variant once, in an order that rotates from round to round, so drifting background load hits
# both sides alike. Reports, per strategy, the median cycle CPU by usage / by requests, the
# spread of the per-round ratios, and the heap the usage keeps per pod (raw/usage-SIZE.json).

USAGE_SIZE="${BENCH_USAGE_SIZE:-S3}"
USAGE_ROUNDS="${BENCH_USAGE_ROUNDS:-5}"
USAGE_CYCLES="${BENCH_USAGE_CYCLES:-5}"

# usage_run VARIANT ROUND SNAPSHOT PROMETHEUS: one process; raw/usage-SIZE-VARIANT-ROUND.json.
usage_run() {
  local variant="$1" round="$2" snap="$3" prom="$4" out
  out="${RAW}/usage-${USAGE_SIZE}-${variant}-${round}.json"
  local args=(--engine --snapshot "${snap}" --policy "${BENCH}/policies/usage-${variant}.yaml" --cycles "${USAGE_CYCLES}")
  [ "${variant}" = lnu-prometheus ] && args+=(--prometheus-result "${prom}")
  {
    printf '{"size":"%s","variant":"%s","round":%s,"load1":%s,"engine":' "${USAGE_SIZE}" "${variant}" "${round}" "$(load1)"
    taskset -c 0 "${BUILD}/plugins_bench" "${args[@]}" | tr -d '\n'
    printf '}\n'
  } >"${out}.tmp"
  mv -f "${out}.tmp" "${out}"
  log "usage ${variant} round ${round}: $(jq -c '{load1, cycle_cpu: .engine.cycle_median_cpu_seconds, evictions: .engine.evictions, errors: .engine.plugin_errors, usage_b_pod: .engine.usage_heap_bytes_per_pod}' "${out}")"
}

# usage_summary: raw/usage-SIZE.json from the runs. Medians over rounds of each run's median
# cycle CPU; a round's ratio is its usage run over its requests run.
usage_summary() {
  jq -s '
    def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
                       else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    def cpu: .engine.cycle_median_cpu_seconds;
    (group_by(.variant) | map({key: .[0].variant, value: {
        runs: length, cycle_cpu_median: (map(cpu) | median), cycle_cpu_min: (map(cpu) | min),
        cycle_cpu_max: (map(cpu) | max), evictions: (map(.engine.evictions) | unique),
        plugin_errors: (map(.engine.plugin_errors | keys[]) | unique),
        usage_heap_bytes_per_pod: (map(.engine.usage_heap_bytes_per_pod) | unique),
        usage_node_samples: .[0].engine.usage_node_samples, usage_pod_samples: .[0].engine.usage_pod_samples,
        pods: .[0].engine.pods, nodes: .[0].engine.nodes, load1: map(.load1)}}) | from_entries) as $v
    | [.[] | {key: "\(.round)/\(.variant)", value: cpu}] | from_entries as $byRound
    | def ratio(u; r): {
        median_ratio: ($v[u].cycle_cpu_median / $v[r].cycle_cpu_median),
        round_ratios: [range(1; ($v[u].runs + 1)) | $byRound["\(.)/\(u)"] / $byRound["\(.)/\(r)"]]}
        | . + {round_ratio_min: (.round_ratios | min), round_ratio_max: (.round_ratios | max)};
    {variants: $v, ratios: {
       "lnu-metrics": ratio("lnu-metrics"; "lnu-requests"),
       "lnu-prometheus": ratio("lnu-prometheus"; "lnu-requests"),
       "hnu-metrics": ratio("hnu-metrics"; "hnu-requests")}}
  ' "${RAW}"/usage-"${USAGE_SIZE}"-*-*.json
}

part_usage() {
  need_builds
  mkdir -p "${RAW}"
  local snap prom round i n
  snap="$(gen "${USAGE_SIZE}" --metrics)"
  prom="${snap%.json}.prom.json"
  [ -s "${prom}" ] || die "${prom} missing (kdesched-gen --prometheus-answer)"
  log "usage ${USAGE_SIZE}: $(cat "${snap}.stats")"
  wait_quiet "usage ${USAGE_SIZE}"
  log "usage ${USAGE_SIZE}: ${USAGE_ROUNDS} rounds (load ${LOAD})"
  rm -f "${RAW}"/usage-"${USAGE_SIZE}"-*.json
  local lnu=(lnu-requests lnu-metrics lnu-prometheus) hnu=(hnu-requests hnu-metrics)
  for round in $(seq 1 "${USAGE_ROUNDS}"); do
    # LowNodeUtilization's three in rotated order, then HighNodeUtilization's two, swapped every round.
    for i in 0 1 2; do
      n=$(( (i + round - 1) % 3 ))
      usage_run "${lnu[n]}" "${round}" "${snap}" "${prom}"
    done
    for i in 0 1; do
      n=$(( (i + round - 1) % 2 ))
      usage_run "${hnu[n]}" "${round}" "${snap}" "${prom}"
    done
  done
  usage_summary >"${RAW}/usage-${USAGE_SIZE}.json.tmp"
  mv -f "${RAW}/usage-${USAGE_SIZE}.json.tmp" "${RAW}/usage-${USAGE_SIZE}.json"
  log "usage ${USAGE_SIZE}: $(jq -c '{ratios: (.ratios | map_values({median_ratio, round_ratio_min, round_ratio_max})), usage_b_pod: .variants["lnu-metrics"].usage_heap_bytes_per_pod}' "${RAW}/usage-${USAGE_SIZE}.json")"
}
