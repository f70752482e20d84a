# bench/run.sh's `plan-rss` part (sourced by run.sh; uses its helpers, BUILD, RAW, WORK, POLICY, gen,
# wait_quiet, time_json).
#
# `kdesched plan` on generated snapshots (BENCH_PLAN_RSS_SIZES, default S2 S3) under /usr/bin/time,
# pinned to core 0, BENCH_PLAN_RSS_RUNS times each (default 3): peak RSS against the snapshot's
# size (the target: at most 2× at S3) and wall time. One line per run in
# raw/plan-rss-SIZE.json; the log prints the medians and the ratio peak RSS / input.

PLAN_RSS_SIZES="${BENCH_PLAN_RSS_SIZES:-S2 S3}"
PLAN_RSS_RUNS="${BENCH_PLAN_RSS_RUNS:-3}"

part_plan_rss() {
  local b
  for b in kdesched kdesched-gen; do [ -x "${BUILD}/${b}" ] || die "${BUILD}/${b} missing (see bench/README.md)"; done
  mkdir -p "${RAW}"
  local size snap bytes out t i
  for size in ${PLAN_RSS_SIZES}; do
    snap="$(gen "${size}")"
    bytes="$(stat -c %s "${snap}")"
    out="${RAW}/plan-rss-${size}.json"
    t="${WORK}/time.txt"
    : >"${out}.tmp"
    for i in $(seq 1 "${PLAN_RSS_RUNS}"); do
      wait_quiet "plan-rss ${size} run ${i}"
      /usr/bin/time -v -o "${t}" taskset -c 0 "${BUILD}/kdesched" plan --snapshot "${snap}" \
        --policy-config-file "${POLICY}" --now 2026-11-02T00:00:00Z -o json >"${WORK}/plan.json"
      printf '{"size":"%s","run":%s,"load1":%s,"input_bytes":%s,"plan_process":%s}\n' \
        "${size}" "${i}" "${LOAD}" "${bytes}" "$(time_json "${t}")" >>"${out}.tmp"
    done
    mv -f "${out}.tmp" "${out}"
    log "plan-rss ${size}: $(jq -s -c '
      def median: sort | .[length / 2 | floor];
      { input_mb: (.[0].input_bytes / 1e6),
        peak_rss_mb: ([.[].plan_process.max_rss_kb] | median * 1024 / 1e6),
        ratio: (([.[].plan_process.max_rss_kb] | median) * 1024 / .[0].input_bytes * 100 | round / 100),
        wall_s: ([.[].plan_process.wall_seconds] | median) }' "${out}")"
  done
}
