#!/usr/bin/env bash
# The small-cluster one-shot, side by side with upstream: the order/payment story on 3 kwok nodes
# (test/e2e's workload and policy), one eviction per run, as a CronJob runs it. Each round makes
# the violation again, then runs one descheduler until it exits; the two alternate, so drift in
# the machine's load falls on both. Prints each run's wall time (start to exit, as measured by
# the script) and the medians, and keeps every log (kdesched at -v=4 with millisecond stamps).
#
# Usage: bench/small.sh [ROUNDS]        (default 5; about 20 s per round)
#   KDESCHED_BIN   kdesched [build-bench/kdesched, else build/kdesched]
#   The upstream binary comes from bench/build-upstream.sh (built on first use).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-5}"
if [ -z "${KDESCHED_BIN:-}" ]; then
  KDESCHED_BIN="${ROOT}/build-bench/kdesched"
  [ -x "${KDESCHED_BIN}" ] || KDESCHED_BIN="${ROOT}/build/kdesched"
fi
export KDESCHED_BIN
UPSTREAM="$("${ROOT}/bench/build-upstream.sh" --print-bin)"
[ -x "${UPSTREAM}" ] || "${ROOT}/bench/build-upstream.sh" >/dev/null
# shellcheck source=test/e2e/lib.sh
source "${ROOT}/test/e2e/lib.sh"
export KDS_KEEP_WORK="${KDS_KEEP_WORK:-1}"
e2e_begin small-bench --cluster
kds_require_tools

phase "cluster up (3 kwok nodes), order and payment"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload

declare -A WALLS=([kdesched]="" [upstream]="")
one_run() {  # IMPL ROUND
  local impl="$1" round="$2" bin="${KDESCHED_BIN}" extra=(-v 4)
  [ "${impl}" = upstream ] && bin="${UPSTREAM}" && extra=(--v=4)
  must "violation made (${impl}, round ${round})" kds_violate
  KDESCHED="${bin}" kds_run "${impl}-${round}" 60 --descheduling-interval 0 --secure-port 0 "${extra[@]}"
  check "${impl} round ${round}: exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
  check "${impl} round ${round}: payment evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}" "${PAYMENT_UID}"
  WALLS[${impl}]+="${KDS_RUN_MS} "
  note "${impl} round ${round}: ${KDS_RUN_MS} ms (log $(kds_log "${impl}-${round}"))"
  kd_wait_for "replacement" 90 kds_replacement_elsewhere "${PAYMENT_POD}" "${PAYMENT_NODE}" || true
}

phase "${ROUNDS} rounds, alternating"
for r in $(seq 1 "${ROUNDS}"); do
  if [ $((r % 2)) = 1 ]; then one_run kdesched "${r}"; one_run upstream "${r}"; else one_run upstream "${r}"; one_run kdesched "${r}"; fi
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mk="$(median <<<"${WALLS[kdesched]}")"; mu="$(median <<<"${WALLS[upstream]}")"
note "wall ms, kdesched: ${WALLS[kdesched]}(median ${mk}); upstream: ${WALLS[upstream]}(median ${mu}); ratio $(awk -v a="${mk}" -v b="${mu}" 'BEGIN { printf "%.2f", a / b }')"
true
