#!/usr/bin/env bash
# The differential tester's fixed seed set for CI (scripts/cluster/ci.sh runs it), seeds
# 1..${CI_SEEDS} of every plugin and of the Mixed policy, twice:
#   1. defaults: every difference must disappear when exactly one named compat switch is turned
#      off (`kdesched: {compat: {<name>: upstream}}`), or be one of upstream's own random ties;
#   2. `kdesched: {compat: upstream}`: no difference at all but upstream's random ties.
# Anything else (or an error of either side) fails. The last line reads
# "test/differential/ci.sh: N passed, M failed" (passes that found nothing unexplained).
#
#   test/differential/ci.sh                  # kdesched: $KDESCHED or build/kdesched
#   CI_SEEDS=20 test/differential/ci.sh --kdesched /path/to/kdesched
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="${OUT:-${TMPDIR:-/tmp}/kdesched-differential-ci}"
seeds="${CI_SEEDS:-25}"
passed=0
failed=0
# The two passes are independent (each its own upstream harness process): they run side by side,
# one a core, and their output is printed one after the other.
logs="$(mktemp -d)"
trap 'rm -rf "${logs}"' EXIT
pids=()
modes=(defaults compat-upstream)
for mode in "${modes[@]}"; do
  extra=(--switches)
  [ "${mode}" = defaults ] || extra=(--compat upstream)
  "${here}/run.sh" --plugin existing,Mixed --start 1 --seeds "${seeds}" --budget 20 \
    --out "${out}/${mode}" --fail-on-unexplained -q "${extra[@]}" "$@" >"${logs}/${mode}.log" 2>&1 &
  pids+=("$!")
done
for i in "${!modes[@]}"; do
  mode="${modes[$i]}"
  rc=0
  wait "${pids[$i]}" || rc=$?
  echo "== differential: ${mode}, seeds 1-${seeds} of every plugin and Mixed"
  cat "${logs}/${mode}.log"
  if [ "${rc}" -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "differential (${mode}): unexplained differences or errors; cases in ${out}/${mode}" >&2
  fi
done
echo "test/differential/ci.sh: ${passed} passed, ${failed} failed"
[ "${failed}" -eq 0 ]
