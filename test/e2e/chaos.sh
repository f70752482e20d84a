#!/usr/bin/env bash
# Faults with invariants, on the real control plane with the apiserver's audit log
# (pods/eviction requests) on.
#
# Two kdesched daemons (A, B: each its own ServiceAccount, so the audit log tells them apart) run
# with leader election (lease 4 s), triggers and a 5 s interval, policy test/e2e/manifests/
# chaos-policy.yaml (anti-affinity + node affinity, maxNoOfPodsToEvictPerNode 1, PerNamespace 2,
# Total 2). Workload on 4 kwok nodes: order/payment, web (4 replicas, PDB maxUnavailable 1, rolled
# during the run), pinned (3 replicas, required node affinity zone-pin=on, no PDB) and
# locked (2 replicas, required node affinity lock=on, PDB minAvailable 2: never a budget).
#
# A seed (printed; FAULT_SEED=N replays it) draws the order of FAULT_ROUNDS faults (default 7: each
# kind once; more rounds repeat them), the gaps between them and the rounds after which violations
# are planted: order moved beside payment, the zone-pin and lock labels moved to other nodes, web
# rolled; in the last round order is moved beside payment again while the fault lasts, so that a
# violation outlives the faults. Faults: apiserver SIGKILL and restart; apiserver SIGSTOP for 7 s
# (longer than the lease: the leader exits 1 "leadership lost", and this script restarts it as a
# Deployment would); etcd compacted and the apiserver killed (watches from old resourceVersions get
# 410); the pods rule of the ClusterRole cut (with an apiserver restart, so the pods watch re-opens
# and gets 403) and restored after 8 s; a node NotReady for 6 s; etcd killed and down for 5 s (the
# apiserver stays up and answers what reaches etcd with errors; lease renewals fail); a 429 storm
# for 8 s (the apiserver runs with --max-requests-inflight=60 --max-mutating-requests-inflight=30;
# the storm puts the daemons and a client flooding LISTs in one APF priority level of one seat that
# rejects instead of queuing, manifests/chaos-storm-apf.yaml, so APF sheds kdesched's requests with
# 429 for real).
#
# Then chaos_check.py, from the audit log and the daemons' logs: (1) no eviction from a daemon that
# was not the leader or whose cache was stale; (2) no pod evicted twice; (3) no run over the limits;
# (4) no locked pod evicted; (5) every planted pod evicted within 30 s of the last fault's end;
# (6) no two processes led at once. And here: every daemon exit was the designed "leadership lost"
# (exit 1), the last two run, peak RSS below 100 MB. Last, the checker is fed doctored inputs (a
# double eviction, an eviction by a non-leader, a second leader) and must fail.
#
# Own cluster directory (${KDESCHED_CHAOS_DIR:-/tmp/kdesched-chaos.PID}); kdesched is
# ${KDESCHED_BIN:-build/kdesched}. Prints "chaos: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin chaos --cluster
kds_require_tools

SEED="${FAULT_SEED:-$(( $(date +%s%N) % 1000000 ))}"
ROUNDS="${FAULT_ROUNDS:-7}"
RSS_LIMIT_KB=$((100 * 1024))
SETTLE_S=30
POLICY="${KDS_MANIFESTS}/chaos-policy.yaml"
AUDIT="${WORK}/audit.log"
echo "FAULT_SEED=${SEED} FAULT_ROUNDS=${ROUNDS} (replay: FAULT_SEED=${SEED} FAULT_ROUNDS=${ROUNDS} test/e2e/chaos.sh)"

# The schedule, all drawn up front from the seed: "FAULT GAP_MS" lines, and "plant WHAT" lines
# after the fault they follow. Every fault kind comes once before any repeats.
python3 - "${SEED}" "${ROUNDS}" >"${WORK}/schedule" <<'PY'
import random, sys
r = random.Random(int(sys.argv[1])); n = int(sys.argv[2])
kinds = ["kill", "pause", "compact", "rbac", "flap", "etcd", "storm"]
order = []
while len(order) < n:
    k = kinds[:]; r.shuffle(k); order += k
order = order[:n]
# Violations are planted after rounds 1..n-1 (before the last fault), so that they meet faults.
plants = {"order": r.randint(1, max(1, n - 1)), "relabel": r.randint(1, max(1, n - 1)),
          "roll1": r.randint(1, n), "roll2": r.randint(1, n)}
for i, k in enumerate(order, 1):
    print(k, r.randint(2000, 8000), r.choice(["node1", "node2", "node3", "node4"]))
    for what, at in sorted(plants.items()):
        if at == i:
            print("plant", what, "-")
PY
note "schedule: $(tr '\n' ';' <"${WORK}/schedule")"

# ---------------------------------------------------------------------------
phase "cluster up (4 kwok nodes, audit log of pods/eviction)"
must "cluster.sh up --nodes 4 with the audit log" quietly "${KDS_CLUSTER}" up --nodes 4 \
  --apiserver-arg=--audit-policy-file="${KDS_MANIFESTS}/chaos-audit-policy.yaml" \
  --apiserver-arg=--audit-log-path="${AUDIT}" --apiserver-arg=--audit-log-maxsize=0 \
  --apiserver-arg=--max-requests-inflight=60 --apiserver-arg=--max-mutating-requests-inflight=30
kd_env_load

phase "ServiceAccounts kdesched-a and -b (deploy/rbac.yaml's ClusterRole, leases in ${KDS_NS})"
must "deploy/rbac.yaml applied" quietly kd_kubectl apply -f "${ROOT}/deploy/rbac.yaml"
for s in a b; do
  kd_kubectl -n kube-system create serviceaccount "kdesched-${s}" >/dev/null
  kd_kubectl create clusterrolebinding "kdesched-${s}" --clusterrole=kdesched \
    --serviceaccount="kube-system:kdesched-${s}" >/dev/null
done
kd_kubectl -n "${KDS_NS}" create role kdesched-leases --verb=get,create,update \
  --resource=leases.coordination.k8s.io >/dev/null
for s in a b; do
  kd_kubectl -n "${KDS_NS}" create rolebinding "kdesched-${s}-leases" --role=kdesched-leases \
    --serviceaccount="kube-system:kdesched-${s}" >/dev/null
  must "token kubeconfig of kdesched-${s}" kds_sa_kubeconfig "kdesched-${s}" kube-system "${WORK}/${s}.kubeconfig"
done
kd_kubectl get clusterrole kdesched -o json |
  jq 'del(.metadata.resourceVersion, .metadata.managedFields, .metadata.uid, .metadata.creationTimestamp)' \
    >"${WORK}/role.json"
# The storm client (fault "storm"): may list what it floods the apiserver with.
kd_kubectl -n kube-system create serviceaccount chaos-storm >/dev/null
kd_kubectl create clusterrolebinding chaos-storm --clusterrole=view \
  --serviceaccount=kube-system:chaos-storm >/dev/null
STORM_TOKEN="$(kd_kubectl -n kube-system create token chaos-storm --duration=2h)"
SA_A=system:serviceaccount:kube-system:kdesched-a
can() { kd_kubectl auth can-i "$1" pods --all-namespaces --as="${SA_A}" >/dev/null 2>&1; }
cannot() { ! can "$1"; }
must "kdesched-a may watch pods" kd_wait_for "RBAC visible" 15 can watch

phase "workload: order/payment, web, pinned, locked"
kd_kubectl label node node1 node2 zone-pin=on >/dev/null
kd_kubectl label node node1 lock=on >/dev/null
must "order and payment Running" kds_create_workload
must "web, pinned, locked and their PDBs applied" kds_apply chaos-workload.yaml
must "web 4 Ready" kd_wait_pods_ready "${KDS_NS}" app=web 4 90
must "pinned 3 Ready" kd_wait_pods_ready "${KDS_NS}" app=pinned 3 90
must "locked 2 Ready" kd_wait_pods_ready "${KDS_NS}" app=locked 2 90
LOCKED_UIDS="$(kd_kubectl -n "${KDS_NS}" get pods -l app=locked -o 'jsonpath={.items[*].metadata.uid}')"

# ---------------------------------------------------------------------------
# daemons: start_daemon X starts the next process of daemon X (logs WORK/X<n>.log)
declare -A GEN=() CUR=()
INSTANCES=()   # "name user log" lines for the checker
EXITS=0; BAD_EXITS=()
PEAK_RSS_KB=0
start_daemon() {
  local s="$1" port n
  n=$(( ${GEN[$s]:-0} + 1 )); GEN[$s]="${n}"
  kds_free_port port
  kds_start "${s}${n}" --kubeconfig "${WORK}/${s}.kubeconfig" --policy-config-file "${POLICY}" \
    --descheduling-interval 5s --leader-elect --leader-elect-lease-duration 4s \
    --leader-elect-renew-deadline 3s --leader-elect-retry-period 1s \
    --leader-elect-resource-namespace "${KDS_NS}" --secure-port "${port}" --bind-address 127.0.0.1 \
    --logging-format json
  CUR[$s]="${s}${n}"
  INSTANCES+=("${s}${n} system:serviceaccount:kube-system:kdesched-${s} $(kds_log "${s}${n}")")
}
pid_of() { cat "${WORK}/$1.pid"; }
# supervise: a daemon that exited is restarted (as its Deployment would); the exit is designed only
# when it is exit 1 after "leadership lost". Samples RSS.
supervise() {
  local s name pid rss
  for s in a b; do
    name="${CUR[$s]}"; pid="$(pid_of "${name}")"
    if kds_alive "${pid}"; then
      rss="$(awk '/^VmRSS:/ { print $2 }' "/proc/${pid}/status" 2>/dev/null || echo 0)"
      [ "${rss:-0}" -le "${PEAK_RSS_KB}" ] || PEAK_RSS_KB="${rss}"
      continue
    fi
    KDS_RC=0; wait "${pid}" 2>/dev/null || KDS_RC=$?
    EXITS=$((EXITS + 1))
    if [ "${KDS_RC}" = 1 ] && kds_log_has "${name}" '"msg":"leadership lost'; then
      note "${name} exited 1 after losing leadership (designed); restarting"
    else
      BAD_EXITS+=("${name} exit ${KDS_RC}")
      note "${name} exited ${KDS_RC}, not as designed: $(tail -n 2 "$(kds_log "${name}")" | cut -c1-300)"
    fi
    start_daemon "${s}"
  done
}
leader_up() { grep -hq '"msg":"became leader"' "${WORK}"/a*.log "${WORK}"/b*.log 2>/dev/null; }

phase "two daemons, leader election, triggers"
start_daemon a
start_daemon b
must "one of them becomes leader" kd_wait_for "a leader" 30 leader_up
must "the leader finished a cycle" kd_wait_for "a cycle" 30 bash -c \
  "grep -hq '\"msg\":\"cycle finished\"' '${WORK}'/a*.log '${WORK}'/b*.log"

# ---------------------------------------------------------------------------
# faults and plants
PAUSES=()      # "start_ms end_ms"
PLANTED=()     # "ns/pod at_ms"
FAULTS=0
declare -A FAULT_COUNT=()
apiserver_ready() { "${KDS_CLUSTER}" wait-ready 60 >/dev/null; }
cut_pods_rule() {
  jq '.rules |= map(select(.resources != ["pods"]))' "${WORK}/role.json" >"${WORK}/role-cut.json" &&
    kd_kubectl replace -f "${WORK}/role-cut.json" >/dev/null && kd_wait_for "RBAC cut visible" 15 cannot watch
}
restore_pods_rule() {
  kd_kubectl replace -f "${WORK}/role.json" >/dev/null && kd_wait_for "RBAC restored" 15 can watch
}

# storm: the daemons share a one-seat, rejecting APF level with a client that floods it with LISTs
# (64 at a time); the apiserver restarts (SIGTERM) into the storm, so every watch of the daemons
# re-opens into it, and the storm lasts 8 s more. Counts the client's 429s (STORM_429S: a storm
# that sheds nothing is no fault) and keeps each storm level's UID (STORM_LEVELS), by which the
# daemons' throttled requests are told from others.
STORM_429S=0
STORM_LEVELS=()
# storm_in_force FLOWSCHEMA_UID: the apiserver classifies the storm client's requests under the
# storm's FlowSchema (APF's response header): its config controller has the objects.
storm_in_force() {
  curl -sS -o /dev/null -D - --max-time 2 --cacert "${CA_FILE}" -H "Authorization: Bearer ${STORM_TOKEN}" \
    "${APISERVER_URL}/api/v1/namespaces/default/pods?limit=1" 2>/dev/null | tr -d '\r' |
    grep -qix "x-kubernetes-pf-flowschema-uid: $1"
}
storm() {
  local flood n fs p keep=()
  kd_kubectl apply -f "${KDS_MANIFESTS}/chaos-storm-apf.yaml" >/dev/null || return 1
  fs="$(kd_kubectl get flowschema chaos-storm -o 'jsonpath={.metadata.uid}')"
  STORM_LEVELS+=("$(kd_kubectl get prioritylevelconfiguration chaos-storm -o 'jsonpath={.metadata.uid}')")
  kd_wait_for "the storm's FlowSchema in force" 15 storm_in_force "${fs}" || return 1
  curl -sS -Z --parallel-max 64 --cacert "${CA_FILE}" -H "Authorization: Bearer ${STORM_TOKEN}" \
    -o /dev/null -w '%{http_code}\n' "${APISERVER_URL}/api/v1/pods?limit=500&storm=[1-1000000]" \
    >"${WORK}/storm.codes" 2>/dev/null 7>&- 8>&- &
  flood=$!
  KDS_EXTRA_PIDS+=("${flood}")  # stopped at exit if the test ends inside the storm
  "${KDS_CLUSTER}" restart-apiserver >/dev/null
  apiserver_ready
  # Until the new apiserver's APF config controller has synced, everything falls in catch-all.
  kd_wait_for "the storm's FlowSchema in force after the restart" 15 storm_in_force "${fs}" ||
    note "storm: the FlowSchema was not seen in force within 15 s of the restart"
  in_fault
  sleep 8
  kill "${flood}" 2>/dev/null || true
  wait "${flood}" 2>/dev/null || true
  for p in "${KDS_EXTRA_PIDS[@]}"; do [ "${p}" = "${flood}" ] || keep+=("${p}"); done
  KDS_EXTRA_PIDS=("${keep[@]+"${keep[@]}"}")
  kd_kubectl delete -f "${KDS_MANIFESTS}/chaos-storm-apf.yaml" >/dev/null
  n="$(grep -c '^429$' "${WORK}/storm.codes" || true)"
  STORM_429S=$((STORM_429S + n))
  note "storm: $(wc -l <"${WORK}/storm.codes") requests, ${n} answered 429"
}

# in_fault: with IN_FAULT=1 (the last round), order is moved beside payment while the fault lasts,
# so one violation is still there when the faults end.
in_fault() {
  [ "${IN_FAULT}" = 1 ] || return 0
  plant order-now || fail "planting order during the last fault"
}
IN_FAULT=0
fault() {
  local kind="$1" node="$2" t0
  t0="$(kd_now_ms)"
  case "${kind}" in
    kill) "${KDS_CLUSTER}" restart-apiserver --kill >/dev/null; apiserver_ready; in_fault ;;
    pause)
      in_fault
      "${KDS_CLUSTER}" pause-apiserver >/dev/null
      sleep 7
      "${KDS_CLUSTER}" resume-apiserver >/dev/null
      PAUSES+=("${t0} $(kd_now_ms)") ;;
    compact) "${KDS_CLUSTER}" compact-etcd --restart-apiserver >/dev/null; apiserver_ready; in_fault ;;
    rbac)
      cut_pods_rule
      "${KDS_CLUSTER}" restart-apiserver >/dev/null
      apiserver_ready
      in_fault
      sleep 8
      restore_pods_rule ;;
    flap)
      # Before the flap: an order pod pinned to a NotReady node would never turn Ready.
      in_fault
      "${KDS_CLUSTER}" node-notready "${node}" >/dev/null
      sleep 6
      "${KDS_CLUSTER}" node-ready "${node}" >/dev/null ;;
    etcd) "${KDS_CLUSTER}" restart-etcd --kill --down 5 >/dev/null; apiserver_ready; in_fault ;;
    storm) storm ;;
  esac
  apiserver_ready
  kd_env_load
  FAULTS=$((FAULTS + 1)); FAULT_COUNT[$kind]=$(( ${FAULT_COUNT[$kind]:-0} + 1 ))
  note "fault ${FAULTS}: ${kind}${node:+ (${node})} $(kd_elapsed "${t0}")"
}

# payment_bound: sets PAYMENT_POD and PAYMENT_NODE when exactly one payment pod is bound.
payment_bound() { PAYMENT_POD="$(pod_of payment)" && PAYMENT_NODE="$(node_of "${PAYMENT_POD}")" && [ -n "${PAYMENT_NODE}" ]; }
plant() {
  local p
  case "$1" in
    order)
      kds_violate || return 1
      PLANTED+=("${KDS_NS}/${PAYMENT_POD} $(kd_now_ms)")
      note "planted: order beside payment ${PAYMENT_POD} on ${PAYMENT_NODE}" ;;
    order-now)
      # The same without waiting for order's rollout, which may take long while the fault lasts.
      kd_wait_for "one payment pod, bound" 60 payment_bound || return 1
      KDS_ROLL=$((KDS_ROLL + 1))
      kds_patch_order "${PAYMENT_NODE}" "nginx:1.25.${KDS_ROLL}" || return 1
      PENDING="${PAYMENT_POD} ${PAYMENT_NODE}"
      note "planted: order moving beside payment ${PAYMENT_POD} on ${PAYMENT_NODE}" ;;
    relabel)
      # pinned's pods are all on node1/node2: the label moves to node3/node4; lock moves to node2.
      for p in $(kd_kubectl -n "${KDS_NS}" get pods -l app=pinned -o json |
        jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'); do
        PLANTED+=("${KDS_NS}/${p} $(kd_now_ms)")
      done
      kd_kubectl label node node3 node4 zone-pin=on >/dev/null
      kd_kubectl label node node1 node2 zone-pin- >/dev/null
      kd_kubectl label node node2 lock=on >/dev/null
      kd_kubectl label node node1 lock- >/dev/null
      note "planted: zone-pin moved to node3/node4 (pinned pods violate)," \
        "lock to node2 (locked pods violate, no budget)" ;;
    roll1 | roll2)
      kd_kubectl -n "${KDS_NS}" set image deployment/web web="nginx:1.25.${1#roll}" >/dev/null
      note "web rolling to nginx:1.25.${1#roll}" ;;
  esac
}

phase "faults (seed ${SEED}, ${ROUNDS} rounds)"
T_FAULTS0="$(kd_now_ms)"
ROUND=0
while read -r kind arg node; do
  if [ "${kind}" = plant ]; then
    # A plant the control plane could not make (after many restarts its controllers lag) is not
    # kdesched's failure; the checker still wants at least one planted pod.
    plant "${arg}" || note "not planted: ${arg} (the control plane did not get there in time)"
    continue
  fi
  sleep "$(awk -v m="${arg}" 'BEGIN { printf "%.3f", m / 1000 }')"
  supervise
  ROUND=$((ROUND + 1)); [ "${ROUND}" -lt "${ROUNDS}" ] || IN_FAULT=1
  fault "${kind}" "$([ "${kind}" = flap ] && echo "${node}" || true)"
  supervise
done <"${WORK}/schedule"
FAULTS_END="$(kd_now_ms)"
timing "faults phase (${FAULTS} faults)" "$(kd_elapsed "${T_FAULTS0}")"

# ---------------------------------------------------------------------------
phase "settle: every planted violation evicted within ${SETTLE_S} s"
# The plant of the last round counts from when order got there: after an apiserver restart the
# controller-manager's Deployment controller was seen to take 40 s and more to roll order.
PENDING="${PENDING:-}"
if [ -n "${PENDING}" ]; then
  read -r pp pn <<<"${PENDING}"
  arrived() { kds_order_on "${pn}" || ! kds_pod_intact "${pp}"; }
  if kd_wait_for "order beside ${pp} on ${pn}" 60 arrived; then
    PLANTED+=("${KDS_NS}/${pp} $(kd_now_ms)")
    note "order reached ${pn} (or ${pp} is gone) $(kd_elapsed "${FAULTS_END}") after the faults"
  else
    note "order never reached ${pn} within 60 s: the last round's plant is not counted"
  fi
fi
# The violations as the cluster shows them: payment beside order, pinned off zone-pin nodes.
violations_left() {
  local pods
  pods="$(kd_kubectl -n "${KDS_NS}" get pods -o json)" || return 0
  jq -r --arg nodes "$(kd_kubectl get nodes -l zone-pin=on -o 'jsonpath={.items[*].metadata.name}')" '
    [.items[] | select(.metadata.deletionTimestamp == null and .spec.nodeName != null)] as $p
    | ([$p[] | select(.metadata.labels.app == "order") | .spec.nodeName]) as $orders
    | [$p[] | select((.metadata.labels.app == "payment" and (.spec.nodeName as $n | $orders | index($n)))
        or (.metadata.labels.app == "pinned" and (.spec.nodeName as $n | ($nodes | split(" ")) | index($n) | not)))
      | .metadata.name] | join(" ")' <<<"${pods}"
}
none_left() { supervise; [ -z "$(violations_left)" ]; }
check "no violation left within ${SETTLE_S} s of the last fault" \
  kd_wait_for "violations evicted" $((SETTLE_S + 5)) none_left
note "left: $(violations_left); planted: ${#PLANTED[@]}"
timing "last fault end to no violation left" "$(kd_elapsed "${FAULTS_END}")"
# A few more cycles: a double eviction or a late one would show in them.
sleep 6
supervise

# ---------------------------------------------------------------------------
phase "invariants from the audit log and the daemons' logs"
write_run() {
  printf '%s\n' "${INSTANCES[@]}" >"${WORK}/instances.txt"
  printf '%s\n' "${PAUSES[@]+"${PAUSES[@]}"}" >"${WORK}/pauses.txt"
  printf '%s\n' "${PLANTED[@]+"${PLANTED[@]}"}" >"${WORK}/planted.txt"
  jq -n --arg audit "${AUDIT}" --argjson fend "${FAULTS_END}" --argjson settle "${SETTLE_S}" \
    --arg locked "${KDS_NS}/locked-" --rawfile inst "${WORK}/instances.txt" \
    --rawfile pauses "${WORK}/pauses.txt" --rawfile planted "${WORK}/planted.txt" '
    def rows($s): $s | split("\n") | map(select(length > 0) | split(" "));
    {audit: $audit, faults_end_ms: $fend, settle_s: $settle, locked: $locked,
     limits: {node: 1, namespace: 2, total: 2},
     instances: [rows($inst)[] | {name: .[0], user: .[1], log: .[2]}],
     pauses: [rows($pauses)[] | map(tonumber)],
     planted: [rows($planted)[] | {pod: .[0], at_ms: (.[1] | tonumber)}]}' >"$1"
}
write_run "${WORK}/run.json"
python3 "${ROOT}/test/e2e/chaos_check.py" "${WORK}/run.json" >"${WORK}/check.out" 2>&1 || true
sed 's/^/     /' "${WORK}/check.out"
INVARIANTS=(sender-was-fresh-leader no-double-eviction per-cycle-limits no-eviction-without-budget
  planted-evicted-in-time leader-terms-disjoint)
for inv in "${INVARIANTS[@]}"; do
  line="$(grep -E "^(PASS|FAIL) ${inv}:" "${WORK}/check.out" || true)"
  check "invariant ${inv}" [ "${line%% *}" = PASS ]
done
locked_uids() { kd_kubectl -n "${KDS_NS}" get pods -l app=locked -o 'jsonpath={.items[*].metadata.uid}'; }
locked_intact() { [ "$(locked_uids)" = "${LOCKED_UIDS}" ]; }
check "the locked pods are the ones of the start" locked_intact
check "every daemon exit was designed (${EXITS} exits; bad: ${BAD_EXITS[*]:-none})" [ "${#BAD_EXITS[@]}" = 0 ]
check "both current daemons run (${CUR[a]}, ${CUR[b]})" bash -c "kill -0 $(pid_of "${CUR[a]}") && kill -0 $(pid_of "${CUR[b]}")"
check "the storms were real: ${STORM_429S} requests of the storm client answered 429" \
  [ "${FAULT_COUNT[storm]:-0}" = 0 -o "${STORM_429S}" -gt 0 ]
throttled=0
for uid in "${STORM_LEVELS[@]+"${STORM_LEVELS[@]}"}"; do
  n="$(cat "${WORK}"/a*.log "${WORK}"/b*.log | grep '"msg":"kube request throttled"' |
    grep -c "\"priority_level\":\"${uid}\"" || true)"
  throttled=$((throttled + n))
done
check "the daemons' requests were shed by the storm's level: ${throttled} throttled and retried" \
  [ "${FAULT_COUNT[storm]:-0}" = 0 -o "${throttled}" -gt 0 ]
check "peak RSS $((PEAK_RSS_KB / 1024)) MB < $((RSS_LIMIT_KB / 1024)) MB" [ "${PEAK_RSS_KB}" -gt 0 -a "${PEAK_RSS_KB}" -lt "${RSS_LIMIT_KB}" ]
faults_line=""; for k in "${!FAULT_COUNT[@]}"; do faults_line+="${k} ${FAULT_COUNT[$k]}, "; done
note "seed ${SEED}: faults ${FAULTS} (${faults_line%, }); planted pods ${#PLANTED[@]}; daemon processes ${#INSTANCES[@]}"
note "$(grep '^counts:' "${WORK}/check.out" || true)"

# ---------------------------------------------------------------------------
phase "the checker can fail: doctored audit lines"
# A second 201 for the first evicted pod, and a POST by kdesched-a at a time none of its processes
# led (before its first line).
doctor() {
  local first
  first="$(jq -c 'select(.objectRef.subresource == "eviction" and .stage == "ResponseComplete"
    and .responseStatus.code == 201)' "${AUDIT}" | head -n 1)"
  [ -n "${first}" ] || return 1
  cp "${AUDIT}" "${WORK}/audit-doctored.log"
  jq -c '.auditID = "doctored-twice"' <<<"${first}" >>"${WORK}/audit-doctored.log"
  jq -c --arg u "${SA_A}" '.auditID = "doctored-early" | .user.username = $u
    | .requestReceivedTimestamp = "2000-01-01T00:00:00.000000Z"' <<<"${first}" >>"${WORK}/audit-doctored.log"
  # And a second leader: one more process whose log is the first leader's "became leader" and
  # then that leader's last line, so it leads as long as the first leader did.
  local leader_log
  leader_log="$(grep -l '"msg":"became leader"' "${WORK}/a1.log" "${WORK}/b1.log" | head -n 1)"
  { grep -m1 '"msg":"became leader"' "${leader_log}"; tail -n 1 "${leader_log}"; } >"${WORK}/x1-doctored.log"
  jq --arg a "${WORK}/audit-doctored.log" --arg log "${WORK}/x1-doctored.log" \
    '.audit = $a | .instances += [{name: "x1", user: "doctored", log: $log}]' \
    "${WORK}/run.json" >"${WORK}/run-doctored.json"
  ! python3 "${ROOT}/test/e2e/chaos_check.py" "${WORK}/run-doctored.json" >"${WORK}/check-doctored.out" 2>&1
}
check "the checker fails on the doctored audit log" doctor
check "...naming the double eviction" grep -q '^FAIL no-double-eviction:' "${WORK}/check-doctored.out"
check "...and the second leader" grep -q '^FAIL leader-terms-disjoint:' "${WORK}/check-doctored.out"
check "...and the eviction by a non-leader" grep -q '^FAIL sender-was-fresh-leader:.*2000-01-01\|^FAIL sender-was-fresh-leader:.*946684800000' "${WORK}/check-doctored.out"
end_phase
