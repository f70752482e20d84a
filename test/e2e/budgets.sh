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
#     next interval;
#  4. pacing: 10 replicas of "paced", Ready 3 s after scheduling (a kwok stage), all breaking their
#     required node affinity at once, a budget with maxUnavailablePerOwner 20%: a WATCH of the
#     pods never shows more than 2 unavailable, all 10 end fixed, the audit log (pods/eviction) has
#     10 Evictions, each pod once.
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

# kds_slow_ready_stage FILE: a kwok stage that makes pods labelled kdesched-e2e-ready=slow Ready
# READY_DELAY_MS after they are scheduled, not at once: kwok's pod-ready stage (the cached
# kwok-stages.yaml) under another name, with that label in its selector, a delay, and weight 1, so
# kwok always picks it over the default stage (weight 0) that matches these pods too.
READY_DELAY_MS=3000
kds_slow_ready_stage() {
  awk '/^# sigs\.k8s\.io\/kwok@.*\/pod\/fast\/pod-ready\.yaml$/ { on = 1; next } on && /^---$/ { exit } on' \
    "$(dirname "$(kd_bin_dir)")/share/kwok-stages.yaml" |
    sed -e 's/^  name: pod-ready$/  name: pod-ready-slow/' \
      -e "s/^spec:\$/spec:\n  weight: 1\n  delay:\n    durationMilliseconds: ${READY_DELAY_MS}/" \
      -e 's/^  selector:$/  selector:\n    matchLabels:\n      kdesched-e2e-ready: slow/' >"$1"
  if ! grep -q '^  name: pod-ready-slow$' "$1" || ! grep -q 'kdesched-e2e-ready: slow' "$1"; then
    die "could not derive the slow-ready stage from kwok's pod-ready stage"
  fi
}

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes, slow-ready pods, audit of evictions), order/payment violated"
kds_slow_ready_stage "${WORK}/kwok-slow-ready.yaml"
AUDIT="${WORK}/audit.log"
must "cluster.sh up --nodes 3 with the slow-ready stage and the audit log" quietly "${KDS_CLUSTER}" up --nodes 3 \
  --kwok-arg "--config=${WORK}/kwok-slow-ready.yaml" \
  --apiserver-arg=--audit-policy-file="${KDS_MANIFESTS}/chaos-audit-policy.yaml" \
  --apiserver-arg=--audit-log-path="${AUDIT}" --apiserver-arg=--audit-log-maxsize=0
kd_env_load
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

# ---------------------------------------------------------------------------
# The pacing story: 10 replicas of "paced" (required node affinity e2e-pace=on, Ready
# READY_DELAY_MS after scheduling) all on node1; the label then moves to node2 and node3, so every
# pod violates RemovePodsViolatingNodeAffinity at once. A budget with maxUnavailablePerOwner 20%
# (2 of 10) is the only pacing: no owner cooldown and no rollout grace. Anti-flapping's backoff
# keeps its defaults: draining siblings off one node is not flapping (only a replacement breaking
# the same rule on the same node is), so it must not stop the drain after 3.
PACED=10
PACE_BUDGET=e2e-pacing
phase "4. pacing: 10 replicas, all violating, maxUnavailablePerOwner 20%"
kd_kubectl label node node1 e2e-pace=on --overwrite >/dev/null
kd_kubectl -n "${KDS_NS}" apply -f - >/dev/null <<EOD
apiVersion: apps/v1
kind: Deployment
metadata: {name: paced}
spec:
  replicas: ${PACED}
  selector: {matchLabels: {app: paced}}
  template:
    metadata:
      labels: {app: paced, kdesched-e2e-ready: slow}
    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions: [{key: e2e-pace, operator: In, values: ["on"]}]
      containers:
      - {name: paced, image: "nginx:1.25"}
EOD
must "${PACED} paced pods Ready on node1" kd_wait_pods_ready "${KDS_NS}" app=paced "${PACED}" 60
cat >"${WORK}/pacing.yaml" <<EOP
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: default
  pluginConfig:
  - name: DefaultEvictor
    args: {nodeFit: true}
  - name: RemovePodsViolatingNodeAffinity
    args: {nodeAffinityType: [requiredDuringSchedulingIgnoredDuringExecution]}
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeAffinity]
kdesched:
  triggers: {enabled: true, rolloutGrace: 0s}
  antiFlapping: {ownerCooldown: 0s}
  budgets:
  - name: ${PACE_BUDGET}
    maxUnavailablePerOwner: "20%"
    scope:
      labelSelector: {matchLabels: {app: paced}}
EOP

# outstanding WATCH REPLICAS: in the watch's order of events (one stream, no clocks compared), once
# all REPLICAS pods were available: the unavailable count after each event (REPLICAS minus the
# pods Ready and not terminating, as the Deployment controller counts) and the most of it;
# prints MAX_OUTSTANDING=, TERMINATED= (pods seen terminating) and the timeline in WORK/outstanding.txt.
outstanding() {
  python3 - "$1" "$2" "${WORK}/outstanding.txt" <<'PY'
import json, sys
repl, pods, started, peak, gone, lines = int(sys.argv[2]), {}, False, 0, set(), []
t0 = None
for l in open(sys.argv[1]):
    e = json.loads(l)
    t0 = t0 or e["t"]
    if e["type"] == "DELETED":
        pods.pop(e["name"], None)
    else:
        pods[e["name"]] = e["ready"] and not e["deleting"]
    if e["deleting"]:
        gone.add(e["name"])
    avail = sum(pods.values())
    started = started or avail == repl
    if started:
        peak = max(peak, repl - avail)
        lines.append(f"+{(e['t'] - t0) / 1000:7.3f}s {e['type']:8} {e['name']:26} node={e['node'] or '-':6} "
                     f"ready={e['ready']!s:5} deleting={e['deleting']!s:5} -> {repl - avail} unavailable")
open(sys.argv[3], "w").write("\n".join(lines) + "\n")
print(f"MAX_OUTSTANDING={peak if started else -1}")
print(f"TERMINATED={len(gone)}")
PY
}
# paced_fixed: PACED pods, all Ready, none terminating, each on node2 or node3.
paced_fixed() {
  kd_kubectl -n "${KDS_NS}" get pods -l app=paced -o json | jq -e --argjson n "${PACED}" '
    [.items[] | select(.metadata.deletionTimestamp == null)] | length == $n and
    all(.[]; (.spec.nodeName == "node2" or .spec.nodeName == "node3") and
      ([.status.conditions[]? | select(.type == "Ready") | .status][0] == "True"))' >/dev/null
}
# audit_evictions: "POD CODE" for each Eviction of a paced pod in the audit log.
audit_evictions() {
  jq -r 'select(.stage == "ResponseComplete" and .objectRef.subresource == "eviction"
    and (.objectRef.name | startswith("paced-"))) | "\(.objectRef.name) \(.responseStatus.code)"' "${AUDIT}" 2>/dev/null
}

kds_watch_pods paced
must "the watcher saw the ${PACED} pods" kd_wait_for "watcher" 10 \
  bash -c "[ \"\$(grep -c '\"ready\": true' '${WORK}/watch-paced.jsonl')\" -ge ${PACED} ]"
kd_kubectl label node node2 node3 e2e-pace=on --overwrite >/dev/null
kd_kubectl label node node1 e2e-pace- >/dev/null
PACE_T0="$(kd_now_ms)"
kds_free_port PORT
kds_start d2 --policy-config-file "${WORK}/pacing.yaml" --descheduling-interval 2s --secure-port "${PORT}" \
  --bind-address 127.0.0.1
check "all ${PACED} pods replaced onto node2/node3, Ready" kd_wait_for "paced fixed" 60 paced_fixed
PACE_MS=$(( $(kd_now_ms) - PACE_T0 ))
timing "pacing: label moved to all ${PACED} pods fixed" "$(ms_str "${PACE_MS}")"
check "GET /metrics after the pacing" kds_metrics "${PORT}" "${WORK}/m3.txt"
refused="$(kds_metric_sum "${WORK}/m3.txt" kdesched_evictions_refused_total reason=budget)"
kds_stop "${KDS_PID}" TERM 15 || true
check "daemon: SIGTERM exit 0 (got ${KDS_RC})" [ "${KDS_RC}" = 0 ]
kill -TERM "${WATCH_PID}" 2>/dev/null || true
wait "${WATCH_PID}" 2>/dev/null || true
MAX_OUTSTANDING=-1 TERMINATED=-1
eval "$(outstanding "${WORK}/watch-paced.jsonl" "${PACED}")"
refused_pods="$( { grep "msg=\"eviction refused\" pod=${KDS_NS}/paced-" "$(kds_log d2)" |
  grep -F "by=\"budget \\\"${PACE_BUDGET}\\\"\" refusal=budget " || true; } | sed -E 's/.* pod=([^ ]+) .*/\1/' | sort -u | wc -l)"
evicted="$(kds_log_count d2 "msg=\"Evicted pod\" pod=${KDS_NS}/paced-")"
timing "pacing: most evicted pods' replacements not Ready at once" "${MAX_OUTSTANDING}"
timing "pacing: refusals by budget (kdesched_evictions_refused_total)" "${refused}"
timing "pacing: pods refused by budget ${PACE_BUDGET} (log)" "${refused_pods}"
note "evicted (log) ${evicted}, pods seen terminating (watch) ${TERMINATED}; timeline:"
sed 's/^/        | /' "${WORK}/outstanding.txt" | tail -n 60
check "never more than 2 of ${PACED} unavailable (watch: most ${MAX_OUTSTANDING})" \
  [ "${MAX_OUTSTANDING}" -ge 1 -a "${MAX_OUTSTANDING}" -le 2 ]
check "the cap bound: ${refused} refusals by a budget, ${refused_pods} pods refused by \"${PACE_BUDGET}\"" \
  [ "${refused}" -gt 0 -a "${refused_pods}" -gt 0 ]
check "${PACED} pods evicted, each once (log ${evicted}, watch ${TERMINATED})" [ "${evicted}" = "${PACED}" -a "${TERMINATED}" = "${PACED}" ]
audit_evictions | awk '{ n[$2]++ } END { for (c in n) printf "       audit: %d Evictions of paced pods answered %s\n", n[c], c }'
check "audit: ${PACED} Evictions of paced pods, all 201, no pod twice" \
  [ "$(audit_evictions | awk '$2 == 201 {print $1}' | sort -u | wc -l)" = "${PACED}" -a "$(audit_evictions | wc -l)" = "${PACED}" ]
end_phase
