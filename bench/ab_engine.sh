#!/usr/bin/env bash
# bench/ab_engine.sh A_PLUGINS_BENCH B_PLUGINS_BENCH [SNAPSHOT]: the engine's cycle CPU of two
# builds in interleaved pairs (A B, B A, ...) on one core, for a change that must not cost time.
# Prints each run's fastest cycle CPU seconds, then per build the median over the runs, and B/A.
#
# SNAPSHOT: a generated snapshot (default: S3 from bench/plan_identity.sh's cache,
# /tmp/kdesched-identity/S3.json). Env: BENCH_AB_PAIRS (5), BENCH_AB_CYCLES (5), BENCH_AB_CORE (0),
# BENCH_AB_POLICY (bench/policies/four-strategies.yaml, the engine benchmark's policy).
# Measure on a quiet machine: no build beside it.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 A_PLUGINS_BENCH B_PLUGINS_BENCH [SNAPSHOT]" >&2; exit 2; }
A="$1" B="$2"
SNAP="${3:-/tmp/kdesched-identity/S3.json}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
POLICY="${BENCH_AB_POLICY:-${ROOT}/bench/policies/four-strategies.yaml}"
PAIRS="${BENCH_AB_PAIRS:-5}" CYCLES="${BENCH_AB_CYCLES:-5}" CORE="${BENCH_AB_CORE:-0}"
[ -s "${SNAP}" ] || { echo "${SNAP} missing (bench/plan_identity.sh generates it)" >&2; exit 2; }

run() {  # run BINARY: the run's fastest cycle's CPU seconds (the least disturbed by the machine)
  taskset -c "${CORE}" "$1" --engine --snapshot "${SNAP}" --policy "${POLICY}" --cycles "${CYCLES}" 2>/dev/null |
    python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])["cycle_min_cpu_seconds"])'
}

as=() bs=()
for i in $(seq 1 "${PAIRS}"); do
  if [ $((i % 2)) = 1 ]; then a="$(run "${A}")"; b="$(run "${B}")"; else b="$(run "${B}")"; a="$(run "${A}")"; fi
  as+=("${a}") bs+=("${b}")
  echo "pair ${i}: A ${a} s  B ${b} s"
done
python3 - "${as[*]}" "${bs[*]}" <<'EOF'
import statistics, sys
a = [float(x) for x in sys.argv[1].split()]
b = [float(x) for x in sys.argv[2].split()]
ma, mb = statistics.median(a), statistics.median(b)
ratios = sorted(y / x for x, y in zip(a, b))
print(f"median of the runs' fastest cycle CPU: A {ma:.4f} s, B {mb:.4f} s; B/A {mb / ma:.4f} (pairs' ratios {ratios[0]:.4f}..{ratios[-1]:.4f})")
EOF
