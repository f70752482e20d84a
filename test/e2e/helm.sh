#!/usr/bin/env bash
# The Helm chart, the plain manifests, the Dockerfile and the chart's RBAC, proven on the real
# test control plane (scripts/cluster/cluster.sh: etcd, kube-apiserver, controller-manager,
# scheduler, kwok nodes).
#
#  1. Offline: test/helm/run.sh (helm lint, helm template per kind and per values file against
#     test/helm/golden, refused values, rendered-object properties, deploy/ drift) and
#     test/e2e/dockerfile.sh (the runtime stage's packages cover every shared library of the
#     built binary).
#  2. helm install into the cluster: CronJob (release kdesched, kube-system), Deployment with
#     2 replicas + leader election (release kdesched-ha, kube-system) and Job (release
#     kdesched-once, namespace ops); the objects are checked, kwok runs their pods.
#     Upstream descheduler 0.36's values.yaml (from the Go module cache) installs as shipped with
#     nameOverride: descheduler (upstream's object names, kdesched's image), and with every
#     commented option on as a Deployment (upstream's args; the Lease's Role in kube-system).
#  3. The CronJob path: order/payment (payment's required anti-affinity against order violated,
#     as in smoke.sh). kdesched runs once exactly as the CronJob would: the live CronJob's
#     container args, the live ConfigMap's policy.yaml at the mount path, and the chart
#     ServiceAccount's identity (TokenRequest). No container engine exists here, so the locally
#     built binary stands in for the image. It evicts payment, records an Event, exits 0.
#  4. RBAC proof: `kubectl auth can-i --list` of both ServiceAccounts is printed; then every
#     verb of every rule of the ClusterRole and the leader-election Role is removed from the
#     live object, one at a time, and the run must fail with a permission error that names the
#     verb and the resource (and not evict); the rule is restored and the next one cut.
#     Informer verbs are cut on the one-shot path (list, with --watch-list=false: by watch-list a
#     one-shot run needs only watch, as upstream's informers with client-go's WatchListClient, and
#     the LIST is its fallback where the API server serves no watch-lists) and on the Deployment
#     path (watch). A policy with priorityThreshold.name (helm upgrade
#     -f test/helm/values-priority.yaml) proves the PriorityClass get rule.
#  5. helm uninstall removes everything; cluster down.
#
# The HA release is installed with the chart's default serving (HTTPS, no plainHttp): its probe
# paths are answered over HTTPS on the run's port (curl -k, the certificate is self-signed).
#
# Two additions to the rendered args, both only because of where the binary runs:
# --secure-port=<free port> (the host may have 10258 in use), and --cache-sync-timeout=8 on the
# runs that are expected to fail at the first LIST (the default waits 120 s). The mount path
# /policy-dir is mapped to a local copy of the ConfigMap.
#
# Environment:
#   KDESCHED_BIN           the kdesched binary (default: build it in ${KDESCHED_HELM_BUILD_DIR})
#   KDESCHED_HELM_BUILD_DIR  default <repo>/build-helm (cmake -G Ninja, target kdesched, -j2)
#   KDESCHED_HELM_DIR      the cluster directory (default /tmp/kdesched-helm.PID)
#   KDESCHED_HELM_KEEP_LOGS=DIR  copy every kdesched run's log there
#
# A failed check is reported and the test goes on (a failed setup step stops it); prints each
# phase's duration and a final "helm: N passed, N failed" line (test/e2e/lib.sh). The cluster is
# torn down in every case.
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
e2e_begin helm --cluster
KDS_STATE_ON_FAILURE=(-A "nodes,pods,jobs,cronjobs,deployments,leases" -o wide)
CHART="${ROOT}/helm/kdesched"
BUILD_DIR="${KDESCHED_HELM_BUILD_DIR:-${ROOT}/build-helm}"
SYS=kube-system

# KDESCHED_HELM_KEEP_LOGS=DIR: every kdesched run's log and the sub-tests' output, kept.
keep_logs() {
  [ -n "${KDESCHED_HELM_KEEP_LOGS:-}" ] || return 0
  mkdir -p "${KDESCHED_HELM_KEEP_LOGS}" && cp -r "${WORK}"/runs "${WORK}"/*.txt "${KDESCHED_HELM_KEEP_LOGS}/" 2>/dev/null
}
KDS_AT_EXIT+=(keep_logs)

# ---------------------------------------------------------------------------
# helpers

# sa_kubeconfig SA NAMESPACE FILE: a kubeconfig holding a TokenRequest token of the ServiceAccount,
# the cluster CA and the server URL: what in-cluster config gives a pod of that ServiceAccount.
sa_kubeconfig() {
  local sa="$1" ns="$2" file="$3" token
  token="$(kd_kubectl -n "${ns}" create token "${sa}" --duration=2h)" || return 1
  cat >"${file}" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: ${APISERVER_URL}
    certificate-authority-data: $(base64 -w0 <"${CA_FILE}")
users:
- name: ${sa}
  user:
    token: ${token}
contexts:
- name: ${sa}
  context: {cluster: test, user: ${sa}, namespace: ${ns}}
current-context: ${sa}
EOF
}

# workload KIND NAME NAMESPACE DIR: reads the live workload's pod spec; copies every ConfigMap
# it mounts to DIR/<mountPath>; sets CMD (the container's command) and ARGS (its args, with the
# mount paths mapped into DIR).
workload() {
  local kind="$1" name="$2" ns="$3" dir="$4" spec mp cm key
  spec="$(kd_kubectl -n "${ns}" get "${kind}" "${name}" -o json |
    jq '.spec | if .jobTemplate then .jobTemplate.spec.template.spec else .template.spec end')" || return 1
  mapfile -t CMD < <(jq -r '.containers[0].command[]?' <<<"${spec}")
  mapfile -t ARGS < <(jq -r '.containers[0].args[]?' <<<"${spec}")
  while read -r mp cm; do
    [ -n "${mp}" ] || continue
    mkdir -p "${dir}${mp}"
    while read -r key; do
      [ -n "${key}" ] || continue
      kd_kubectl -n "${ns}" get configmap "${cm}" -o json | jq -j --arg k "${key}" '.data[$k]' >"${dir}${mp}/${key}"
    done < <(kd_kubectl -n "${ns}" get configmap "${cm}" -o json | jq -r '.data | keys[]')
    local i
    for i in "${!ARGS[@]}"; do ARGS[i]="${ARGS[i]//${mp}\//${dir}${mp}/}"; done
  done < <(jq -r '. as $s | .containers[0].volumeMounts[]? | . as $m
      | ($s.volumes[] | select(.name == $m.name) | .configMap.name // empty) as $cm | "\($m.mountPath) \($cm)"' <<<"${spec}")
}

# run_kdesched NAME SECONDS KUBECONFIG ARGS...: runs the binary as the identity in KUBECONFIG with a
# metrics port of its own, stops it with SIGTERM after SECONDS (RUN_PROBE, if set, runs meanwhile);
# sets RUN_RC (124: still running when stopped), RUN_LOG and RUN_PORT.
RUN_N=0
run_kdesched() {
  local name="$1" secs="$2" kc="$3" id t0; shift 3
  RUN_N=$((RUN_N + 1))
  id="runs/$(printf '%02d' "${RUN_N}")-${name}"
  kds_free_port RUN_PORT
  t0="$(kd_now_ms)"
  kds_start "${id}" --kubeconfig "${kc}" "$@" "--secure-port=${RUN_PORT}"
  RUN_LOG="$(kds_log "${id}")"
  echo "     \$ KUBECONFIG=<${name} identity> kdesched $* --secure-port=${RUN_PORT}" >"${RUN_LOG}.cmd"
  if [ -n "${RUN_PROBE:-}" ]; then "${RUN_PROBE}"; fi
  if kds_wait_until "${KDS_PID}" $((t0 + secs * 1000)); then
    RUN_RC="${KDS_RC}"
  else
    kds_stop "${KDS_PID}" TERM 15 || true
    RUN_RC=124
  fi
}
# logged REGEX: the last run's log matches (extended regex).
logged() { grep -Eq -- "$1" "${RUN_LOG}"; }
# The eviction log line, upstream's msg="Evicted pod".
EVICTED='msg="Evicted pod"'
# show_lines REGEX: prints the last run's matching lines (first 2), indented.
show_lines() { grep -E -m 2 -- "$1" "${RUN_LOG}" | cut -c1-400 | sed 's/^/        | /' || true; }

# ---------------------------------------------------------------------------
phase "chart offline tests (test/helm/run.sh)"
"${ROOT}/scripts/cluster/build.sh" kubectl helm kwok etcd kube-apiserver kube-controller-manager kube-scheduler >/dev/null
HELM="$(kd_bin_dir)/helm"
export HELM
e2e_sub_test helm-chart "${ROOT}/test/helm/run.sh"

phase "build kdesched"
if [ -n "${KDESCHED_BIN:-}" ]; then
  KDESCHED="${KDESCHED_BIN}"
else
  if [ ! -f "${BUILD_DIR}/build.ninja" ]; then
    cmake -S "${ROOT}" -B "${BUILD_DIR}" -G Ninja -DKDESCHED_TESTS=OFF >"${WORK}/cmake.log" 2>&1 ||
      { cat "${WORK}/cmake.log" >&2; die "cmake configure"; }
  fi
  ninja -C "${BUILD_DIR}" -j2 kdesched >"${WORK}/ninja.log" 2>&1 || { tail -n 40 "${WORK}/ninja.log" >&2; die "ninja kdesched"; }
  KDESCHED="${BUILD_DIR}/kdesched"
fi
must "kdesched binary ${KDESCHED} ($("${KDESCHED}" version 2>/dev/null))" "${KDESCHED}" version

phase "Dockerfile runtime packages (test/e2e/dockerfile.sh)"
e2e_sub_test dockerfile "${ROOT}/test/e2e/dockerfile.sh" "${KDESCHED}"

# ---------------------------------------------------------------------------
phase "cluster up (3 kwok nodes)"
kds_cluster_up 3
must "3 nodes Ready" quietly "${KDS_CLUSTER}" wait-ready 30

phase "order and payment, anti-affinity violated"
kds_apply_workload
must "payment Running" kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
must "order Running" kd_wait_pods_ready "${KDS_NS}" app=order 1 90
PAYMENT_POD="$(pod_of payment)"; PAYMENT_NODE="$(node_of "${PAYMENT_POD}")"
kds_patch_order "${PAYMENT_NODE}" nginx:1.25
kd_kubectl -n "${KDS_NS}" rollout status deployment/order --timeout=90s >/dev/null || die "order rollout"
must "order rolled out" kd_wait_pods_ready "${KDS_NS}" app=order 1 60
ORDER_NODE="$(node_of "$(pod_of order)")"
must "order on payment's node ${PAYMENT_NODE} (payment ${PAYMENT_POD})" test "${ORDER_NODE}" = "${PAYMENT_NODE}"

# ---------------------------------------------------------------------------
phase "helm install: CronJob (release kdesched, kube-system)"
must "helm install kdesched ./helm/kdesched -n kube-system" \
  quietly "${HELM}" install kdesched "${CHART}" -n "${SYS}" --wait --timeout 2m
"${HELM}" template kdesched "${CHART}" -n "${SYS}" >"${WORK}/kdesched.rendered.yaml"
live_rules() { kd_kubectl get "$@" -o json | jq -c '[.rules[] | {apiGroups, resources, resourceNames, verbs}] | sort'; }
rendered_rules() {  # rendered_rules FILE KIND
  python3 -c 'import sys, yaml, json
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == sys.argv[2]:
        print(json.dumps(sorted([{"apiGroups": r.get("apiGroups"), "resources": r.get("resources"), "resourceNames": r.get("resourceNames"), "verbs": r["verbs"]} for r in d["rules"]], key=lambda r: json.dumps(r, sort_keys=True)), separators=(",", ":"), sort_keys=True))' "$1" "$2"
}
same_rules() { [ "$(live_rules "$1" "$2" ${3:+-n "$3"} | jq -cS 'sort_by(tojson)')" = "$(rendered_rules "$4" "$5" | jq -cS 'sort_by(tojson)')" ]; }
check "ServiceAccount kube-system/kdesched" quietly kd_kubectl -n "${SYS}" get serviceaccount kdesched
check "ConfigMap kube-system/kdesched holds a descheduler/v1alpha2 policy.yaml" \
  bash -c "'${KD_BIN_DIR}/kubectl' --kubeconfig '${KUBECONFIG}' -n ${SYS} get configmap kdesched -o jsonpath='{.data.policy\.yaml}' | grep -q 'apiVersion: \"descheduler/v1alpha2\"'"
check "live ClusterRole kdesched == rendered rules" same_rules clusterrole kdesched "" "${WORK}/kdesched.rendered.yaml" ClusterRole
check "ClusterRoleBinding kdesched -> ServiceAccount kube-system/kdesched" test \
  "$(kd_kubectl get clusterrolebinding kdesched -o jsonpath='{.roleRef.name} {.subjects[0].kind} {.subjects[0].namespace}/{.subjects[0].name}')" \
  = "kdesched ServiceAccount kube-system/kdesched"
cron_ok() {
  kd_kubectl -n "${SYS}" get cronjob kdesched -o json | jq -e '.spec.schedule == "*/2 * * * *" and .spec.concurrencyPolicy == "Forbid"
    and (.spec.suspend | not) and .spec.jobTemplate.spec.template.spec.serviceAccountName == "kdesched"
    and .spec.jobTemplate.spec.template.spec.restartPolicy == "Never"
    and .spec.jobTemplate.spec.template.spec.priorityClassName == "system-cluster-critical"' >/dev/null
}
check "CronJob kdesched: */2 * * * *, Forbid, SA kdesched, restartPolicy Never, system-cluster-critical" cron_ok
check "no Role without leader election" bash -c "! '${KD_BIN_DIR}/kubectl' --kubeconfig '${KUBECONFIG}' -n ${SYS} get role kdesched-leader-election 2>/dev/null"
kd_kubectl -n "${SYS}" create job kdesched-manual --from=cronjob/kdesched >/dev/null
manual_pod_ok() {
  kd_kubectl -n "${SYS}" get pods -l job-name=kdesched-manual -o json | jq -e '.items | length == 1 and
    (.[0].spec.serviceAccountName == "kdesched") and (.[0].spec.priority == 2000000000)
    and (.[0].spec.containers[0].args[0] == "--policy-config-file=/policy-dir/policy.yaml")
    and (.[0].spec.securityContext.runAsUser == 65532)' >/dev/null
}
check "a Job created from the CronJob's template is admitted: its pod has SA kdesched, priority 2000000000, uid 65532" \
  kd_wait_for "manual job pod" 30 manual_pod_ok

phase "helm install: Deployment, 2 replicas + leader election (release kdesched-ha)"
HA_SET=(--set kind=Deployment --set replicas=2 --set leaderElection.enabled=true
        --set podDisruptionBudget.enabled=true --set service.enabled=true)
must "helm install kdesched-ha ./helm/kdesched -n kube-system ${HA_SET[*]}" \
  quietly "${HELM}" install kdesched-ha "${CHART}" -n "${SYS}" "${HA_SET[@]}" --wait --timeout 2m
"${HELM}" template kdesched-ha "${CHART}" -n "${SYS}" "${HA_SET[@]}" >"${WORK}/ha.rendered.yaml"
check "2 kdesched-ha pods Running and Ready (kwok)" kd_wait_pods_ready "${SYS}" app.kubernetes.io/instance=kdesched-ha 2 60
check "Deployment args: interval 5m, cmdOptions, --leader-elect=true (Lease: the flags' default, kube-system/descheduler)" test \
  "$(kd_kubectl -n "${SYS}" get deployment kdesched-ha -o jsonpath='{.spec.template.spec.containers[0].args}')" \
  = '["--policy-config-file=/policy-dir/policy.yaml","--descheduling-interval=5m","--v=3","--leader-elect=true"]'
check "Deployment probes: scheme HTTPS (/healthz, /readyz)" test \
  "$(kd_kubectl -n "${SYS}" get deployment kdesched-ha -o jsonpath='{.spec.template.spec.containers[0].livenessProbe.httpGet.scheme} {.spec.template.spec.containers[0].readinessProbe.httpGet.scheme}')" \
  = "HTTPS HTTPS"
check "live Role kdesched-ha-leader-election == rendered rules" \
  same_rules role kdesched-ha-leader-election "${SYS}" "${WORK}/ha.rendered.yaml" Role
check "RoleBinding -> ServiceAccount kube-system/kdesched-ha" test \
  "$(kd_kubectl -n "${SYS}" get rolebinding kdesched-ha-leader-election -o jsonpath='{.subjects[0].namespace}/{.subjects[0].name}')" = "kube-system/kdesched-ha"
pdb_ok() { kd_kubectl -n "${SYS}" get pdb kdesched-ha -o json | jq -e '.spec.minAvailable == 1 and .status.currentHealthy == 2' >/dev/null; }
check "PodDisruptionBudget kdesched-ha (minAvailable 1, 2 healthy)" kd_wait_for "pdb status" 30 pdb_ok
check "headless Service kdesched-ha on 10258" test \
  "$(kd_kubectl -n "${SYS}" get service kdesched-ha -o jsonpath='{.spec.clusterIP} {.spec.ports[0].name} {.spec.ports[0].port}')" = "None http-metrics 10258"

phase "helm install: Job (release kdesched-once, namespace ops)"
must "helm install kdesched-once ./helm/kdesched -n ops --create-namespace --set kind=Job" \
  quietly "${HELM}" install kdesched-once "${CHART}" -n ops --create-namespace --set kind=Job
check "Job ops/kdesched-once: 1 completion, SA kdesched-once" test \
  "$(kd_kubectl -n ops get job kdesched-once -o jsonpath='{.spec.completions} {.spec.template.spec.serviceAccountName}')" = "1 kdesched-once"
job_pod() { [ "$(kd_kubectl -n ops get pods -l job-name=kdesched-once -o name | wc -l)" -eq 1 ]; }
check "the Job's pod was created" kd_wait_for "job pod" 30 job_pod
check "ClusterRoleBinding kdesched-once -> ServiceAccount ops/kdesched-once" test \
  "$(kd_kubectl get clusterrolebinding kdesched-once -o jsonpath='{.subjects[0].namespace}/{.subjects[0].name}')" = "ops/kdesched-once"
must "helm uninstall kdesched-once" quietly "${HELM}" uninstall kdesched-once -n ops --wait --timeout 60s
once_gone() {
  ! kd_kubectl get clusterrole kdesched-once >/dev/null 2>&1 && ! kd_kubectl get clusterrolebinding kdesched-once >/dev/null 2>&1 &&
    ! kd_kubectl -n ops get job kdesched-once >/dev/null 2>&1 && ! kd_kubectl -n ops get configmap kdesched-once >/dev/null 2>&1
}
check "uninstall removed the Job, ConfigMap, ClusterRole and ClusterRoleBinding" kd_wait_for "uninstall" 30 once_gone

# ---------------------------------------------------------------------------
phase "helm install with upstream descheduler 0.36's values files"
UPSTREAM_CHART="$("${ROOT}/test/helm/upstream-chart.sh")" || die "upstream's chart (test/helm/upstream-chart.sh)"
must "helm install descheduler -f <upstream>/values.yaml --set nameOverride=descheduler (as shipped: CronJob)" \
  quietly "${HELM}" install descheduler "${CHART}" -n "${SYS}" -f "${UPSTREAM_CHART}/values.yaml" --set nameOverride=descheduler --wait --timeout 2m
up_objects() {
  local k
  for k in cronjob/descheduler configmap/descheduler serviceaccount/descheduler; do kd_kubectl -n "${SYS}" get "${k}" >/dev/null || return 1; done
  kd_kubectl get clusterrole descheduler >/dev/null && kd_kubectl get clusterrolebinding descheduler >/dev/null
}
check "upstream's object names: CronJob, ConfigMap, ServiceAccount, ClusterRole(Binding) descheduler" up_objects
check "upstream's repository falls back to kdesched's image, HTTPS liveness probe" test \
  "$(kd_kubectl -n "${SYS}" get cronjob descheduler -o jsonpath='{.spec.jobTemplate.spec.template.spec.containers[0].image} {.spec.jobTemplate.spec.template.spec.containers[0].livenessProbe.httpGet.scheme}')" \
  = "ghcr.io/kdesched/kdesched:v$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "${CHART}/Chart.yaml") HTTPS"
must "helm uninstall descheduler" quietly "${HELM}" uninstall descheduler -n "${SYS}" --wait --timeout 60s
must "helm install descheduler-all -n ops -f <upstream>/values.yaml -f test/helm/upstream-all-options.yaml --set kind=Deployment" \
  quietly "${HELM}" install descheduler-all "${CHART}" -n ops --create-namespace -f "${UPSTREAM_CHART}/values.yaml" \
  -f "${ROOT}/test/helm/upstream-all-options.yaml" --set kind=Deployment --set nameOverride=descheduler --timeout 2m
check "every option on: Deployment ops/descheduler-all with upstream's leader-election args" test \
  "$(kd_kubectl -n ops get deployment descheduler-all -o jsonpath='{.spec.template.spec.containers[0].args}')" \
  = '["--policy-config-file=/policy-dir/policy.yaml","--descheduling-interval=5m","--v=3","--leader-elect=true","--leader-elect-lease-duration=15s","--leader-elect-renew-deadline=10s","--leader-elect-retry-period=2s","--leader-elect-resource-lock=leases","--leader-elect-resource-name=descheduler","--leader-elect-resource-namespace=kube-system"]'
check "every option on: the Lease's Role is in kube-system, bound to ops/descheduler-all" test \
  "$(kd_kubectl -n "${SYS}" get rolebinding descheduler-all-leader-election -o jsonpath='{.subjects[0].namespace}/{.subjects[0].name}')" = "ops/descheduler-all"
must "helm uninstall descheduler-all" quietly "${HELM}" uninstall descheduler-all -n ops --wait --timeout 60s

# ---------------------------------------------------------------------------
phase "CronJob path: rendered args + ServiceAccount identity, one cycle"
must "TokenRequest for kube-system/kdesched -> kubeconfig" sa_kubeconfig kdesched "${SYS}" "${WORK}/kdesched.kubeconfig"
must "TokenRequest for kube-system/kdesched-ha -> kubeconfig" sa_kubeconfig kdesched-ha "${SYS}" "${WORK}/ha.kubeconfig"
workload cronjob kdesched "${SYS}" "${WORK}/cron" || die "reading the live CronJob"
CRON_ARGS=("${ARGS[@]}")
echo "     CronJob command: ${CMD[*]}; args: ${CRON_ARGS[*]}"
check "the CronJob's command is the image's /bin/descheduler" test "${CMD[*]}" = /bin/descheduler
check "policy.yaml copied from the live ConfigMap" test -s "${WORK}/cron/policy-dir/policy.yaml"
run_kdesched cronjob 120 "${WORK}/kdesched.kubeconfig" "${CRON_ARGS[@]}"
echo "     exit ${RUN_RC}; $(grep -c . "${RUN_LOG}") log lines"
show_lines '[Ee]victed pod|cycle finished|cannot record event'
check "one cycle, exit 0" test "${RUN_RC}" -eq 0
check "log: evicted payment ${PAYMENT_POD} (RemovePodsViolatingInterPodAntiAffinity)" \
  logged "${EVICTED} pod=${KDS_NS}/${PAYMENT_POD} .*(plugin|strategy)=RemovePodsViolatingInterPodAntiAffinity.*result=success"
check "payment ${PAYMENT_POD} evicted" kd_wait_for "payment evicted" 30 kds_pod_evicted "${PAYMENT_POD}"
check "replacement payment Running" kd_wait_pods_ready "${KDS_NS}" app=payment 1 90
NEW_PAYMENT="$(pod_of payment)"
check "replacement ${NEW_PAYMENT} on $(node_of "${NEW_PAYMENT}"), not beside order on ${ORDER_NODE}" \
  test -n "${NEW_PAYMENT}" -a "$(node_of "${NEW_PAYMENT}")" != "${ORDER_NODE}"
# kdesched's Events about POD (core/v1 view: source.component, or reportingComponent for events.k8s.io ones).
EVENTS_OF='[.items[] | select(.involvedObject.name == $p and (((.source.component // "") + " " + (.reportingComponent // "")) | test("kdesched|descheduler")))]'
event_for() { kd_kubectl -n "${KDS_NS}" get events -o json | jq -e --arg p "$1" "${EVENTS_OF} | length > 0" >/dev/null; }
EVENT_DESC="Event recorded on ${PAYMENT_POD} by kdesched (reason $(kd_kubectl -n "${KDS_NS}" get events -o json | jq -r --arg p "${PAYMENT_POD}" "${EVENTS_OF} | map(.reason) | first // \"none\""))"
check "${EVENT_DESC}" event_for "${PAYMENT_POD}"
check "order untouched" test "$(node_of "$(pod_of order)")" = "${ORDER_NODE}"

# ---------------------------------------------------------------------------
phase "RBAC: what the ServiceAccounts may do (kubectl auth can-i --list)"
for sa in kdesched kdesched-ha; do
  for ns in "${KDS_NS}" "${SYS}"; do
    echo "     --- kubectl auth can-i --list --as=system:serviceaccount:${SYS}:${sa} -n ${ns}"
    kd_kubectl auth can-i --list --as="system:serviceaccount:${SYS}:${sa}" -n "${ns}" | tee "${WORK}/can-i-${sa}-${ns}.txt" | sed 's/^/       /'
  done
done
cani() {  # cani SA ARGS...: kubectl auth can-i as the ServiceAccount (exit 0 = yes)
  local sa="$1"; shift
  kd_kubectl auth can-i --as="system:serviceaccount:${SYS}:${sa}" "$@" >/dev/null 2>&1
}
no() { ! cani "$@"; }
check "kdesched may not delete pods (any namespace)" no kdesched delete pods -A
check "kdesched may not read secrets" no kdesched get secrets -A
check "kdesched may not list secrets" no kdesched list secrets -A
check "kdesched may not get single pods (informers list + watch only)" no kdesched get pods -A
check "kdesched may not patch/update pods" no kdesched patch pods -A
check "kdesched may not touch leases (no leader election in this release)" no kdesched get leases -n "${SYS}"
check "kdesched-ha may not update another Lease than its own" no kdesched-ha update leases.coordination.k8s.io/other -n "${SYS}"
check "kdesched-ha may not create leases outside ${SYS}" no kdesched-ha create leases.coordination.k8s.io -n "${KDS_NS}"
check "kdesched may create pods/eviction" cani kdesched create pods --subresource=eviction -A
events_k8s_io() { cani kdesched create events.events.k8s.io -n "${KDS_NS}" && cani kdesched update events.events.k8s.io -n "${KDS_NS}"; }
check "kdesched may create and update events.k8s.io Events (upstream's rule)" events_k8s_io
check "kdesched may not create core/v1 events" no kdesched create events -n "${KDS_NS}"

# The remaining runs need a violation every time: payment is pinned (nodeName) beside order, so
# each eviction's replacement violates the anti-affinity again.
kd_kubectl -n "${KDS_NS}" patch deployment payment --type=strategic -p "$(jq -cn --arg n "${ORDER_NODE}" '{spec: {template: {spec: {nodeName: $n}}}}')" >/dev/null
kd_kubectl -n "${KDS_NS}" rollout status deployment/payment --timeout=90s >/dev/null || die "payment rollout"
must "payment pinned beside order on ${ORDER_NODE}" kd_wait_pods_ready "${KDS_NS}" app=payment 1 60
pinned() { [ "$(node_of "$(pod_of payment)")" = "${ORDER_NODE}" ]; }
must "payment now on ${ORDER_NODE}" pinned

# cut_verb KIND NAME NAMESPACE RESOURCE VERB [named]: removes VERB from the live rule on RESOURCE (the
# rule with resourceNames when "named"), dropping the rule when no verb is left; the original is
# kept in ${WORK}/orig.json for restore.
cut_verb() {
  local kind="$1" name="$2" ns="$3" res="$4" verb="$5" named="${6:-}"
  kd_kubectl get "${kind}" "${name}" ${ns:+-n "${ns}"} -o json |
    jq 'del(.metadata.resourceVersion, .metadata.managedFields, .metadata.uid, .metadata.creationTimestamp, .metadata.generation)' >"${WORK}/orig.json"
  jq --arg r "${res}" --arg v "${verb}" --argjson named "$([ -n "${named}" ] && echo true || echo false)" '
    (.rules | map((.resources == [$r]) and ((.verbs | index($v)) != null) and (((.resourceNames // []) | length > 0) == $named)) | index(true)) as $i
    | if $i == null then error("no rule on \($r) with \($v)") else . end
    | .rules[$i].verbs -= [$v]
    | if (.rules[$i].verbs | length) == 0 then del(.rules[$i]) else . end' "${WORK}/orig.json" >"${WORK}/cut.json" || return 1
  kd_kubectl replace -f "${WORK}/cut.json" >/dev/null
}
restore() { kd_kubectl replace -f "${WORK}/orig.json" >/dev/null; }

# rbac_case SA KIND NAME NS RESOURCE VERB NAMED "CAN-I ARGS" MODE EXPECT-REGEX [EVICTS]
#   MODE oneshot: the CronJob's args; MODE daemon: the Deployment's args, stopped after 8 s.
#   The run must log EXPECT-REGEX (the permission error, naming verb and resource), and must not
#   evict payment, unless EVICTS is "may" (the cut does not stop the first cycle: events, watch).
rbac_case() {
  local sa="$1" kind="$2" name="$3" ns="$4" res="$5" verb="$6" named="$7" caniargs="$8" mode="$9" expect="${10}" evicts="${11:-no}"
  local label="${kind} ${name}: without ${verb} on ${res}${named:+ (named)}"
  local before; before="$(pod_of payment)"
  if ! cut_verb "${kind}" "${name}" "${ns}" "${res}" "${verb}" "${named}"; then fail "${label}: cannot cut the rule"; return; fi
  # shellcheck disable=SC2086
  if ! kd_wait_for "RBAC cut visible" 15 no "${sa}" ${caniargs}; then fail "${label}: can-i still yes"; restore; return; fi
  local kc="${WORK}/kdesched.kubeconfig"
  [ "${sa}" = kdesched-ha ] && kc="${WORK}/ha.kubeconfig"
  RUN_READY=""
  if [ "${mode}" = oneshot ]; then
    # shellcheck disable=SC2086  # RBAC_EXTRA: extra flags, word-split on purpose
    run_kdesched "no-${verb}-${res//\//-}" 60 "${kc}" "${CRON_ARGS[@]}" --cache-sync-timeout=8 ${RBAC_EXTRA:-}
  else
    "${LEASE_PREP:-lease_absent}"
    RUN_PROBE=probe_ready run_kdesched "no-${verb}-${res//\//-}${named:+-named}" 8 "${kc}" "${HA_ARGS[@]}"
  fi
  restore
  # shellcheck disable=SC2086
  kd_wait_for "RBAC restored" 15 cani "${sa}" ${caniargs} || fail "${label}: restore not visible"
  local line; line="$(grep -E -m 1 -- "${expect}" "${RUN_LOG}" | cut -c1-600 || true)"
  RBAC_TABLE+=("$(printf '%-12s %-40s exit %-3s %s' "${kind}" "${res}${named:+ (named)}: -${verb}" "${RUN_RC}${RUN_READY:+ readyz ${RUN_READY}}" "${line}")")
  if [ -n "${line}" ]; then
    pass "${label}: exit ${RUN_RC}, logged:"
    echo "        | ${line}"
  else
    fail "${label}: exit ${RUN_RC}, no line matching /${expect}/; log tail:"
    tail -n 8 "${RUN_LOG}" | cut -c1-300 | sed 's/^/        | /' >&2
  fi
  if [ "${evicts}" = no ]; then
    if [ -n "${before}" ] && kds_pod_intact "${before}"; then
      pass "${label}: payment ${before} not evicted"
    else
      fail "${label}: payment ${before} was evicted anyway"
      kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 || true
    fi
  fi
  # Back to one Running payment beside order for the next case.
  kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 >/dev/null || true
}
# The Deployment-mode runs start from a known Lease state: absent (kdesched creates it), or
# present and free (kdesched must update it to acquire it).
lease_absent() { kd_kubectl -n "${SYS}" delete lease descheduler --ignore-not-found >/dev/null; }
lease_free() {
  lease_absent
  kd_kubectl -n "${SYS}" create -f - >/dev/null <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: descheduler, namespace: ${SYS}}
spec: {holderIdentity: "", leaseDurationSeconds: 1}
EOF
}
# probe_ready: /readyz of the running Deployment-mode process, 6 s in (reported, not judged).
probe_ready() { sleep 6; RUN_READY="$(curl -ks -o /dev/null -w '%{http_code}' "https://127.0.0.1:${RUN_PORT}/readyz" || true)"; }
RBAC_TABLE=()
# A quote in the API's message, as the log carries it: logfmt escapes it inside a quoted value.
Q='\\?"'
SA_USER_KD="User ${Q}system:serviceaccount:${SYS}:kdesched${Q}"
SA_USER_HA="User ${Q}system:serviceaccount:${SYS}:kdesched-ha${Q}"

phase "RBAC: every ClusterRole verb is needed (one-shot, CronJob args)"
# The informers' LIST: without it the first LIST is refused and the cache never syncs. The LIST is
# the watch-list's fallback, so it is proved with --watch-list=false (by watch-list the one-shot run
# would need only watch).
for spec in ":pods" ":nodes" ":namespaces" ":persistentvolumeclaims" "policy:poddisruptionbudgets"; do
  g="${spec%%:*}"; r="${spec#*:}"
  RBAC_EXTRA=--watch-list=false rbac_case kdesched clusterrole kdesched "" "${r}" list "" "list ${r}${g:+.${g}} -A" oneshot \
    "msg=\"reflector list failed\" resource=${r} .*403 Forbidden: ${r}(\.${g})? is forbidden: ${SA_USER_KD} cannot list resource ${Q}${r}${Q} in API group ${Q}${g}${Q} at the cluster scope"
done
rbac_case kdesched clusterrole kdesched "" pods/eviction create "" "create pods --subresource=eviction -n ${KDS_NS}" oneshot \
  "eviction failed\" pod=${KDS_NS}/payment-.* status=403 .*is forbidden: ${SA_USER_KD} cannot create resource ${Q}pods/eviction${Q} in API group ${Q}${Q} in the namespace ${Q}${KDS_NS}${Q}"
# events.k8s.io create; update is upstream's rule for Event series, not cut here (a single
# eviction's Event is never updated).
before_events="$(pod_of payment)"
rbac_case kdesched clusterrole kdesched "" events create "" "create events.events.k8s.io -n ${KDS_NS}" oneshot \
  "cannot record event.*403 Forbidden: events.events.k8s.io is forbidden: ${SA_USER_KD} cannot create resource ${Q}events${Q} in API group ${Q}events.k8s.io${Q} in the namespace ${Q}${KDS_NS}${Q}" may
no_event_for() { ! event_for "$1"; }
check "without create on events: payment ${before_events} evicted all the same, but no Event recorded" no_event_for "${before_events}"
# The verbs that were never granted: a one-shot run as the unchanged identity succeeds.
before="$(pod_of payment)"
run_kdesched baseline 60 "${WORK}/kdesched.kubeconfig" "${CRON_ARGS[@]}"
check "baseline after the cuts: exit ${RUN_RC}, payment ${before} evicted, Event recorded (no get/delete/patch on pods needed)" \
  bash -c "[ ${RUN_RC} -eq 0 ] && grep -Eq '${EVICTED} pod=${KDS_NS}/${before}' '${RUN_LOG}'"
kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 >/dev/null || true

phase "RBAC: watch is needed (Deployment args, 8 s)"
workload deployment kdesched-ha "${SYS}" "${WORK}/ha" || die "reading the live Deployment"
HA_ARGS=("${ARGS[@]}")
echo "     Deployment args: ${HA_ARGS[*]}"
kd_kubectl -n "${SYS}" delete lease descheduler --ignore-not-found >/dev/null
probe_ha() {  # while the Deployment-mode run is up: the chart's probe paths answer on its port
  local path code; sleep 4
  for path in $(kd_kubectl -n "${SYS}" get deployment kdesched-ha -o json |
      jq -r '.spec.template.spec.containers[0] | .livenessProbe.httpGet.path, .readinessProbe.httpGet.path'); do
    code="$(curl -ks -o /dev/null -w '%{http_code}' "https://127.0.0.1:${RUN_PORT}${path}" || true)"
    echo "${path} ${code}" >>"${WORK}/probes.txt"
  done
}
before="$(pod_of payment)"
: >"${WORK}/probes.txt"
RUN_PROBE=probe_ha run_kdesched ha-baseline 8 "${WORK}/ha.kubeconfig" "${HA_ARGS[@]}"
show_lines 'became leader|[Ee]victed pod|released leadership'
check "Deployment mode with every rule: became leader of ${SYS}/descheduler" logged "became leader\" lease=${SYS}/descheduler"
check "Deployment mode: evicted payment ${before}" logged "${EVICTED} pod=${KDS_NS}/${before}"
check "Deployment mode: SIGTERM -> stopped, exit 0 from kdesched" logged 'msg="stopped" exit=0'
check "Deployment mode: SIGTERM -> released the Lease (update)" logged "released leadership"
check "the chart's probe paths answer 200 over HTTPS on the run's port: $(tr '\n' ' ' <"${WORK}/probes.txt")" \
  test "$(grep -c ' 200$' "${WORK}/probes.txt")" -eq 2
kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 >/dev/null || true
for spec in ":pods" ":nodes" ":namespaces" ":persistentvolumeclaims" "policy:poddisruptionbudgets"; do
  g="${spec%%:*}"; r="${spec#*:}"
  rbac_case kdesched-ha clusterrole kdesched-ha "" "${r}" watch "" "watch ${r}${g:+.${g}} -A" daemon \
    "resource=${r} .*403 Forbidden: ${r}(\.${g})? is forbidden: ${SA_USER_HA} cannot watch resource ${Q}${r}${Q} in API group ${Q}${g}${Q} at the cluster scope" may
done

phase "RBAC: every leader-election Role verb is needed"
ROLE=kdesched-ha-leader-election
rbac_case kdesched-ha role "${ROLE}" "${SYS}" leases create "" "create leases.coordination.k8s.io -n ${SYS}" daemon \
  "cannot create the leader lease\" lease=${SYS}/descheduler .*403 Forbidden: leases.coordination.k8s.io is forbidden: ${SA_USER_HA} cannot create resource ${Q}leases${Q} in API group ${Q}coordination.k8s.io${Q} in the namespace ${Q}${SYS}${Q}"
rbac_case kdesched-ha role "${ROLE}" "${SYS}" leases get named "get leases.coordination.k8s.io/descheduler -n ${SYS}" daemon \
  "cannot read the leader lease\" lease=${SYS}/descheduler .*403 Forbidden: leases.coordination.k8s.io ${Q}descheduler${Q} is forbidden: ${SA_USER_HA} cannot get resource ${Q}leases${Q} in API group ${Q}coordination.k8s.io${Q} in the namespace ${Q}${SYS}${Q}"
# update: the Lease exists (free), so kdesched must PUT to acquire it.
LEASE_PREP=lease_free rbac_case kdesched-ha role "${ROLE}" "${SYS}" leases update named "update leases.coordination.k8s.io/descheduler -n ${SYS}" daemon \
  "cannot update the leader lease\" lease=${SYS}/descheduler .*403 Forbidden: leases.coordination.k8s.io ${Q}descheduler${Q} is forbidden: ${SA_USER_HA} cannot update resource ${Q}leases${Q} in API group ${Q}coordination.k8s.io${Q} in the namespace ${Q}${SYS}${Q}"

phase "RBAC: PriorityClass get (priorityThreshold.name, helm upgrade)"
# --force-conflicts: the cuts above edited the live ClusterRole (field manager kubectl-replace),
# so Helm's server-side apply must take the rules back.
must "helm upgrade kdesched -f test/helm/values-priority.yaml --force-conflicts" \
  quietly "${HELM}" upgrade kdesched "${CHART}" -n "${SYS}" -f "${ROOT}/test/helm/values-priority.yaml" --force-conflicts --wait --timeout 2m
"${HELM}" template kdesched "${CHART}" -n "${SYS}" -f "${ROOT}/test/helm/values-priority.yaml" >"${WORK}/prio.rendered.yaml"
check "live ClusterRole == rendered (+ get priorityclasses/system-cluster-critical)" \
  same_rules clusterrole kdesched "" "${WORK}/prio.rendered.yaml" ClusterRole
prio_only() {
  cani kdesched get priorityclasses.scheduling.k8s.io/system-cluster-critical &&
    no kdesched get priorityclasses.scheduling.k8s.io/system-node-critical && no kdesched list priorityclasses.scheduling.k8s.io
}
check "kdesched may get PriorityClass system-cluster-critical, no other, and not list them" prio_only
workload cronjob kdesched "${SYS}" "${WORK}/cron-prio" || die "reading the upgraded CronJob"
CRON_ARGS=("${ARGS[@]}")
check "the upgraded policy names the PriorityClass" grep -q 'name: system-cluster-critical' "${WORK}/cron-prio/policy-dir/policy.yaml"
before="$(pod_of payment)"
run_kdesched prio-baseline 60 "${WORK}/kdesched.kubeconfig" "${CRON_ARGS[@]}"
check "with the rule: exit ${RUN_RC}, payment ${before} (priority 0 < system-cluster-critical) evicted" \
  bash -c "[ ${RUN_RC} -eq 0 ] && grep -Eq '${EVICTED} pod=${KDS_NS}/${before}' '${RUN_LOG}'"
kd_wait_pods_ready "${KDS_NS}" app=payment 1 60 >/dev/null || true
rbac_case kdesched clusterrole kdesched "" priorityclasses get named "get priorityclasses.scheduling.k8s.io/system-cluster-critical" oneshot \
  "bad policy.*cannot read PriorityClass ${Q}system-cluster-critical${Q}: 403 Forbidden: priorityclasses.scheduling.k8s.io ${Q}system-cluster-critical${Q} is forbidden: ${SA_USER_KD} cannot get resource ${Q}priorityclasses${Q} in API group ${Q}scheduling.k8s.io${Q} at the cluster scope"

phase "RBAC summary"
echo "     rule cut                                                exit  what kdesched printed"
printf '     %s\n' "${RBAC_TABLE[@]+"${RBAC_TABLE[@]}"}" | cut -c1-400

# ---------------------------------------------------------------------------
phase "helm uninstall"
must "helm uninstall kdesched" quietly "${HELM}" uninstall kdesched -n "${SYS}" --wait --timeout 60s
must "helm uninstall kdesched-ha" quietly "${HELM}" uninstall kdesched-ha -n "${SYS}" --wait --timeout 60s
all_gone() {
  local k
  for k in clusterrole/kdesched clusterrolebinding/kdesched clusterrole/kdesched-ha clusterrolebinding/kdesched-ha; do
    ! kd_kubectl get "${k}" >/dev/null 2>&1 || return 1
  done
  for k in cronjob/kdesched deployment/kdesched-ha configmap/kdesched configmap/kdesched-ha serviceaccount/kdesched \
      serviceaccount/kdesched-ha role/kdesched-ha-leader-election rolebinding/kdesched-ha-leader-election pdb/kdesched-ha service/kdesched-ha; do
    ! kd_kubectl -n "${SYS}" get "${k}" >/dev/null 2>&1 || return 1
  done
}
check "every object of both releases is gone" kd_wait_for "uninstall" 60 all_gone

phase "cluster down"
check "cluster.sh down" quietly "${KDS_CLUSTER}" down
check "cluster directory removed" test ! -e "${KDESCHED_CLUSTER_DIR}"
end_phase
