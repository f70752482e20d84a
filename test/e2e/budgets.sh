#!/usr/bin/env bash
# End-to-end test of disruption budgets (docs/budgets.md) on the real control plane
# (scripts/cluster/cluster.sh, 3 kwok nodes), with the order/payment violation in place:
#
#  1. a freeze (maxEvictions 0) whose window opened at this minute's tick and ends ~20 s from now
#     (schedule: this minute and hour, UTC; duration: to now + 20 s);
#  2. the live plan plans payment's eviction and refuses it with the budget's name and end, and
#     `--explain` lists the active budget;
#  3. the daemon (interval 1h, event triggers on) refuses it in its first cycle (logged, the
#     DeschedulingBlocked Event, kdesched_budget_remaining{budget} 0), then evicts payment within
#     3 s after the window's end: a triggered run the refusal scheduled for that moment, not the
#     next interval.
#
# Own cluster directory (${KDESCHED_BUDGETS_DIR:-/tmp/kdesched-budgets.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "budgets: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin budgets --cluster

STRATEGY=RemovePodsViolatingInterPodAntiAffinity
BUDGET=e2e-freeze
kds_require_tools
kds_no_budget_series() { ! grep -q "^kdesched_budget_remaining{budget=\"${BUDGET}\"}" "$1"; }

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes), order/payment violated"
kds_cluster_up 3
must "Deployments order and payment Running" kds_create_workload
must "order rolled onto payment's node" kds_violate

# ---------------------------------------------------------------------------
phase "1. a freeze whose window ends 20 s from now"
now_s="$(date -u +%s)"
tick_s=$((now_s - now_s % 60))
END_S=$((now_s + 20))
schedule="$(date -u -d "@${tick_s}" '+%-M %-H %-d %-m *')"
{
  cat "${KDS_POLICY}"
  cat <<EOP
kdesched:
  triggers: {enabled: true}
  budgets:
  - name: ${BUDGET}
    schedule: "${schedule}"
    duration: $((END_S - tick_s))s
    maxEvictions: 0
EOP
} >"${WORK}/policy.yaml"
end_rfc="$(date -u -d "@${END_S}" +%Y-%m-%dT%H:%M:%S+00:00)"
end_re="${end_rfc//+/\\+}"  # for grep -E
note "schedule \"${schedule}\" UTC, duration $((END_S - tick_s))s: the window ends at ${end_rfc}"

# ---------------------------------------------------------------------------
phase "2. the live plan refuses payment, naming the budget and its end"
KDS_RC=0
timeout 60 "${KDESCHED}" plan --kubeconfig "${KUBECONFIG}" --policy-config-file "${WORK}/policy.yaml" \
  --explain "${KDS_NS}/${PAYMENT_POD}" >"${WORK}/plan.out" 2>"${WORK}/plan.err" </dev/null || KDS_RC=$?
sed 's/^/        | /' "${WORK}/plan.out"
check "plan exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
check "payment refused by budget \"${BUDGET}\", active until ${end_rfc}, 0 of 0 left" grep -Eq \
  "^${KDS_NS} +${PAYMENT_POD} +${PAYMENT_NODE} +${STRATEGY} +budget \"${BUDGET}\" +active until ${end_re} \\(UTC\\): 0 of 0 evictions left" \
  "${WORK}/plan.out"
check "--explain lists the active budget" grep -Eq "^${BUDGET} +${end_re} \\(UTC\\) +0 +0 +0" "${WORK}/plan.out"

# ---------------------------------------------------------------------------
phase "3. the daemon refuses during the freeze, evicts right after it"
kds_free_port PORT
kds_start d1 --policy-config-file "${WORK}/policy.yaml" --descheduling-interval 1h --secure-port "${PORT}" \
  --bind-address 127.0.0.1
must "first cycle finished" kds_wait_log d1 'msg="cycle finished"' 30
check "the first cycle refused payment (refusal=budget)" \
  kds_log_has d1 "msg=\"eviction refused\" pod=${KDS_NS}/${PAYMENT_POD} .*refusal=budget "
check "the first cycle evicted nothing" kds_log_has d1 'msg="cycle finished" evicted=0 '
if [ "$(date -u +%s)" -lt "${END_S}" ]; then
  check "GET /metrics during the freeze" kds_metrics "${PORT}" "${WORK}/m1.txt"
  grep -E '^kdesched_budget_remaining' "${WORK}/m1.txt" | sed 's/^/       /'
  check "kdesched_budget_remaining{budget=\"${BUDGET}\"} 0" grep -q "^kdesched_budget_remaining{budget=\"${BUDGET}\"} 0\$" "${WORK}/m1.txt"
else
  fail "the freeze ended before the daemon's first cycle was seen (slow start?)"
fi
check "no eviction before the window's end" kds_log_lacks d1 'msg="Evicted pod"'
check "payment evicted after the freeze" \
  kds_wait_log d1 "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} node=${PAYMENT_NODE} plugin=${STRATEGY} " 40
ev_line="$(grep -m1 "msg=\"Evicted pod\" pod=${KDS_NS}/${PAYMENT_POD} " "$(kds_log d1)" || true)"
if [ -n "${ev_line}" ]; then
  delay=$(( $(kds_log_ts_ms "${ev_line}") - END_S * 1000 ))
  timing "window end to eviction" "${delay} ms"
  check "evicted 0-3 s after the window's end (${delay} ms)" [ "${delay}" -ge 0 -a "${delay}" -lt 3000 ]
fi
check "by a triggered run (the retry at the window's end)" kds_log_has d1 'msg="triggered run finished" evicted=1 '
check "GET /metrics after the freeze" kds_metrics "${PORT}" "${WORK}/m2.txt"
check "kdesched_budget_remaining{budget=\"${BUDGET}\"} gone" kds_no_budget_series "${WORK}/m2.txt"
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
end_phase
