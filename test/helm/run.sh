#!/usr/bin/env bash
# Offline tests of the Helm chart helm/kdesched (no cluster needed, about 40 s):
#   - helm lint, with the default values and with every test/helm/values-*.yaml;
#   - helm template for each kind (CronJob, Deployment, Job), for every values file, for
#     upstream descheduler 0.36's values.yaml (as shipped, with every commented option switched
#     on: upstream-all-options.yaml, and with nameOverride: descheduler) and with the dashboard
#     and alerts on, compared with test/helm/golden/*.yaml;
#   - upstream parity: upstream's own chart (test/helm/upstream-chart.sh, read-only) rendered with
#     the same values and release, compared by compare-upstream.py: object names (nameOverride:
#     descheduler), args, CronJob/Deployment/Service/ServiceMonitor fields, the policy;
#   - monitoring: promtool check rules on the PrometheusRule and on every dashboard query, promtool
#     test rules (monitoring/alerts-test.yaml: each alert firing and not firing), and every metric
#     they read registered by kdesched (monitoring/extract.py);
#   - values that must fail, with the message they must fail with (schema, replicas > 1
#     without leader election, ...);
#   - properties of the rendered objects: minimal RBAC (no delete on pods, no secrets,
#     exactly the verbs kdesched uses), the pod security defaults, the checksum/config
#     annotation following the policy, the leader-election Role;
#   - deploy/*.yaml in step with the chart (scripts/render-manifests.sh --check).
#
#   test/helm/run.sh            run the tests
#   test/helm/run.sh --update   rewrite test/helm/golden/*.yaml from the chart, then run the tests
#
# Helm: $HELM, else scripts/cluster/build.sh's cached helm, else helm on PATH. Needs python3
# with PyYAML (Debian: python3-yaml), promtool (Debian: prometheus; scripts/install-deps.sh) and
# upstream's chart (Go module cache, fetched by upstream-chart.sh when missing). A failed check is reported and the test goes on; the last
# line is "helm-chart: N passed, N failed" (test/e2e/lib.sh).
set -euo pipefail
# shellcheck source=test/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
e2e_begin helm-chart
CHART="${ROOT}/helm/kdesched"
HERE="${ROOT}/test/helm"
GOLDEN="${HERE}/golden"
UPDATE=0
[ "${1:-}" = --update ] && UPDATE=1

if [ -z "${HELM:-}" ]; then
  cached="$("${ROOT}/scripts/cluster/build.sh" --print-bin-dir 2>/dev/null || true)/helm"
  if [ -x "${cached}" ]; then HELM="${cached}"; else HELM="$(command -v helm || true)"; fi
fi
if [ -z "${HELM}" ] || [ ! -x "${HELM}" ]; then die "no helm (set HELM or run scripts/cluster/build.sh helm)"; fi
python3 -c 'import yaml' 2>/dev/null || die "python3 with PyYAML is needed (apt-get install python3-yaml)"
command -v promtool >/dev/null || die "promtool is needed (apt-get install prometheus; scripts/install-deps.sh)"
UPSTREAM="$("${HERE}/upstream-chart.sh")" || die "upstream descheduler's chart (test/helm/upstream-chart.sh)"
UPSTREAM_VALUES="${UPSTREAM}/values.yaml"
ALL_OPTIONS="${HERE}/upstream-all-options.yaml"
export HELM

# tmpl [HELM ARGS]: helm template with the golden files' fixed release and namespace.
tmpl() { "${HELM}" template kdesched "${CHART}" --namespace kube-system "$@"; }

# q FILE PYTHON-EXPR: evaluates EXPR with `docs` = the rendered objects, `by(kind)` = those of
# a kind, `one(kind)` = the only one; exit 0 when EXPR is true. Prints EXPR's value when false.
q() {
  python3 - "$1" "$2" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def by(kind): return [d for d in docs if d.get("kind") == kind]
def one(kind):
    found = by(kind)
    assert len(found) == 1, f"{len(found)} objects of kind {kind}"
    return found[0]
def pod(kind):
    o = one(kind)
    return o["spec"]["jobTemplate"]["spec"]["template"] if kind == "CronJob" else o["spec"]["template"]
def container(kind): return pod(kind)["spec"]["containers"][0]
def rules(kind="ClusterRole"): return [(tuple(r.get("apiGroups", [])), tuple(r.get("resources", [])), tuple(r.get("resourceNames", [])), tuple(r["verbs"])) for r in one(kind)["rules"]]
env = dict(docs=docs, by=by, one=one, pod=pod, container=container, rules=rules)
try:
    ok = eval(sys.argv[2], env)
except Exception as e:
    print(f"      error: {type(e).__name__}: {e}", file=sys.stderr); sys.exit(1)
if not ok:
    print(f"      false: {sys.argv[2]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# ---------------------------------------------------------------------------
phase "helm lint"
check "helm lint (defaults)" "${HELM}" lint --quiet "${CHART}"
for kind in Deployment Job; do
  check "helm lint --set kind=${kind}" "${HELM}" lint --quiet "${CHART}" --set "kind=${kind}"
done
for f in "${HERE}"/values-*.yaml; do
  check "helm lint -f $(basename "${f}")" "${HELM}" lint --quiet "${CHART}" -f "${f}"
done

# ---------------------------------------------------------------------------
phase "helm template against golden files"
mkdir -p "${GOLDEN}"
declare -A CASES=()
for kind in CronJob Deployment Job; do CASES["kind-${kind}"]="--set kind=${kind}"; done
for f in "${HERE}"/values-*.yaml; do n="$(basename "${f}" .yaml)"; CASES["${n}"]="-f ${f}"; done
CASES[upstream-values]="-f ${UPSTREAM_VALUES}"
CASES[upstream-all-options]="-f ${UPSTREAM_VALUES} -f ${ALL_OPTIONS}"
CASES[upstream-all-options-deployment]="-f ${UPSTREAM_VALUES} -f ${ALL_OPTIONS} --set kind=Deployment --set serviceMonitor.enabled=true"
CASES[upstream-nameoverride]="-f ${UPSTREAM_VALUES} --set nameOverride=descheduler --set kind=Deployment --set leaderElection.enabled=true --set service.enabled=true --set serviceMonitor.enabled=true"
CASES[monitoring]="--set kind=Deployment --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true"
for name in $(printf '%s\n' "${!CASES[@]}" | sort); do
  # shellcheck disable=SC2086  # the case's arguments are word-split on purpose
  if ! tmpl ${CASES[${name}]} >"${WORK}/${name}.yaml" 2>"${WORK}/${name}.err"; then
    fail "helm template ${name}: $(tr '\n' ' ' <"${WORK}/${name}.err")"
    continue
  fi
  if [ "${UPDATE}" -eq 1 ]; then cp "${WORK}/${name}.yaml" "${GOLDEN}/${name}.yaml"; fi
  if [ ! -f "${GOLDEN}/${name}.yaml" ]; then
    fail "golden/${name}.yaml missing (run test/helm/run.sh --update)"
  elif diff -u "${GOLDEN}/${name}.yaml" "${WORK}/${name}.yaml" >"${WORK}/${name}.diff"; then
    pass "helm template ${name} == golden/${name}.yaml"
  else
    fail "helm template ${name} differs from golden/${name}.yaml (test/helm/run.sh --update if intended):"
    head -n 40 "${WORK}/${name}.diff" >&2
  fi
done
for g in "${GOLDEN}"/*.yaml; do
  [ -e "${g}" ] || continue
  n="$(basename "${g}" .yaml)"
  [ -n "${CASES[${n}]+x}" ] || fail "golden/${n}.yaml has no test case (stale file)"
done

# ---------------------------------------------------------------------------
phase "values that must be refused, with a message"
# must_fail DESCRIPTION EXPECTED-MESSAGE-REGEX HELM-ARGS...
must_fail() {
  local d="$1" re="$2"; shift 2
  if tmpl "$@" >"${WORK}/neg.out" 2>"${WORK}/neg.err"; then
    fail "${d}: rendered, but it must fail"
  elif grep -Eq -- "${re}" "${WORK}/neg.err"; then
    pass "${d}: $(grep -E -m1 -- "${re}" "${WORK}/neg.err" | sed 's/^ *//')"
  else
    fail "${d}: failed without /${re}/: $(tr '\n' ' ' <"${WORK}/neg.err")"
  fi
}
must_fail "unknown kind" "/kind': value must be one of 'CronJob', 'Deployment', 'Job'" --set kind=DaemonSet
must_fail "upstream's image with a pinned tag" "image: registry.k8s.io/descheduler/descheduler:v0.36.0 is upstream's descheduler image, and this chart runs kdesched. Remove image.repository and image.tag" \
  --set image.repository=registry.k8s.io/descheduler/descheduler --set image.tag=v0.36.0
must_fail "typo inside a kdesched-only object (prometheusRule.enable)" "additional properties 'enable' not allowed" --set prometheusRule.enable=true
must_fail "typo inside a kdesched-only object (grafanaDashboard.enabeld)" "additional properties 'enabeld' not allowed" --set grafanaDashboard.enabeld=true
must_fail "typo inside podDisruptionBudget (upstream HEAD's keys)" "additional properties 'minAvailible' not allowed" --set podDisruptionBudget.minAvailible=1
must_fail "typo inside networkPolicy" "additional properties 'enable' not allowed" --set networkPolicy.enable=true
must_fail "networkPolicy.metricsFrom: a peer with a misspelt key" "additional properties 'namespaceSelecter' not allowed" \
  --set networkPolicy.enabled=true --set 'networkPolicy.metricsFrom[0].namespaceSelecter.matchLabels.a=b'
must_fail "replicas 2 without leaderElection" "replicas is 2, but more than one replica needs leaderElection.enabled=true" \
  --set kind=Deployment --set replicas=2
must_fail "replicas 3 with leaderElection.enabled=false" "replicas is 3, but more than one replica needs leaderElection.enabled=true" \
  --set kind=Deployment --set replicas=3 --set leaderElection.enabled=false
must_fail "deschedulingInterval not a Go duration" "/deschedulingInterval': '5 minutes' does not match pattern" \
  --set kind=Deployment --set-string "deschedulingInterval=5 minutes"
must_fail "Deployment with an empty deschedulingInterval" "/deschedulingInterval': '' does not match pattern" \
  --set kind=Deployment --set-string deschedulingInterval=
must_fail "Deployment with deschedulingInterval: null" "kind: Deployment needs deschedulingInterval" \
  --set kind=Deployment --set deschedulingInterval=null
must_fail "unsupported policy apiVersion" "/deschedulerPolicyAPIVersion': value must be 'descheduler/v1alpha2'" \
  --set deschedulerPolicyAPIVersion=descheduler/v1alpha1
must_fail "wrong type (replicas: two)" "/replicas'" --set kind=Deployment --set-string replicas=two
must_fail "prometheusRule on a CronJob without an interval" "prometheusRule: KdeschedNoSuccessfulCycle needs an interval" \
  --set prometheusRule.enabled=true --set deschedulingInterval=null
must_fail "prometheusRule with a memory limit that is not a quantity" "resources.limits.memory: \"lots\" is not a Kubernetes quantity" \
  --set prometheusRule.enabled=true --set kind=Deployment --set resources.limits.memory=lots

# ---------------------------------------------------------------------------
phase "what upstream's chart renders, kdesched's renders too"
# must_render DESCRIPTION HELM-ARGS...
must_render() {
  local d="$1"; shift
  if tmpl "$@" >"${WORK}/pos.out" 2>"${WORK}/pos.err"; then pass "${d}"; else fail "${d}: $(tr '\n' ' ' <"${WORK}/pos.err")"; fi
}
must_render "an unknown top-level key (upstream's chart has no schema)" --set shedule=1 --set some.future.key=x
must_render "unknown keys inside upstream's objects (image.digest, leaderElection.enable, serviceMonitor.scheme)" \
  --set image.digest=sha256:0 --set leaderElection.enable=true --set serviceMonitor.scheme=http
must_render "cronJobApiVersion: batch/v1beta1" --set cronJobApiVersion=batch/v1beta1
must_render "leaderElection.resourceLock: configmapsleases" --set kind=Deployment --set leaderElection.enabled=true --set leaderElection.resourceLock=configmapsleases
must_render "cmdOptions keys with underscores and any value type" --set-json 'cmdOptions={"logging_format":"json","v":3.5,"dry-run":true,"x":[1,2]}'
must_render "cmdOptions.descheduling-interval and leader-elect* on a Deployment" --set kind=Deployment \
  --set cmdOptions.descheduling-interval=10m --set cmdOptions.leader-elect=true --set cmdOptions.leader-elect-resource-name=x
must_render "cmdOptions.policy-config-file" --set cmdOptions.policy-config-file=/other/policy.yaml
must_render "serviceMonitor.enabled without service.enabled" --set kind=Deployment --set serviceMonitor.enabled=true
must_render "integers as strings (startingDeadlineSeconds: \"200\", replicas: \"1\")" --set-string startingDeadlineSeconds=200 --set-string replicas=1
must_render "deschedulerPolicy: {} (bring your own ConfigMap)" --set-json 'deschedulerPolicy={}'

# ---------------------------------------------------------------------------
phase "upstream chart parity (upstream's chart rendered with the same values, read-only)"
# parity DESCRIPTION RELEASE [--names] -- HELM-ARGS...: both charts rendered for RELEASE in kube-system.
parity() {
  local d="$1" rel="$2" mode=""; shift 2
  [ "$1" = --names ] && { mode=--names; shift; }
  [ "$1" = -- ] && shift
  "${HELM}" template "${rel}" "${UPSTREAM}" --namespace kube-system "$@" >"${WORK}/up.yaml" 2>"${WORK}/up.err" ||
    { fail "${d}: upstream's chart does not render: $(tr '\n' ' ' <"${WORK}/up.err")"; return; }
  "${HELM}" template "${rel}" "${CHART}" --namespace kube-system "$@" >"${WORK}/ours.yaml" 2>"${WORK}/ours.err" ||
    { fail "${d}: $(tr '\n' ' ' <"${WORK}/ours.err")"; return; }
  check "${d}" python3 "${HERE}/compare-upstream.py" "${WORK}/up.yaml" "${WORK}/ours.yaml" ${mode}
}
parity "upstream's values.yaml: same kinds, workload fields and args" descheduler -- -f "${UPSTREAM_VALUES}"
parity "upstream's values.yaml + every commented option: same fields and args" my-release -- -f "${UPSTREAM_VALUES}" -f "${ALL_OPTIONS}"
parity "the same as a Deployment with serviceMonitor (no Service), leader election, cmdOptions upstream flags" my-release -- \
  -f "${UPSTREAM_VALUES}" -f "${ALL_OPTIONS}" --set kind=Deployment --set serviceMonitor.enabled=true \
  --set-json 'cmdOptions={"v":4,"logging_format":"json","dry-run":null,"leader-elect-lease-duration":"30s","descheduling-interval":"1m"}' \
  --set cronJobApiVersion=batch/v1beta1 --set leaderElection.resourceLock=configmapsleases
for rel in descheduler my-release; do
  parity "nameOverride: descheduler, release ${rel}, CronJob: upstream's object names, labels and fields" "${rel}" --names -- \
    -f "${UPSTREAM_VALUES}" --set nameOverride=descheduler
  parity "nameOverride: descheduler, release ${rel}, Deployment + Service + ServiceMonitor + leader election: upstream's names" "${rel}" --names -- \
    -f "${UPSTREAM_VALUES}" -f "${ALL_OPTIONS}" --set nameOverride=descheduler --set kind=Deployment --set service.enabled=true --set serviceMonitor.enabled=true
done
parity "zero deadlines and TTL left out, zero history limits kept, as upstream" descheduler -- -f "${UPSTREAM_VALUES}" \
  --set startingDeadlineSeconds=0 --set activeDeadlineSeconds=0 --set ttlSecondsAfterFinished=0 --set successfulJobsHistoryLimit=0
parity "fullnameOverride and namespaceOverride as upstream" descheduler --names -- \
  -f "${UPSTREAM_VALUES}" --set nameOverride=descheduler --set fullnameOverride=desched --set namespaceOverride=ops --set kind=Deployment --set service.enabled=true

# ---------------------------------------------------------------------------
phase "rendered objects"
tmpl >"${WORK}/cron.yaml"
tmpl --set kind=Deployment >"${WORK}/deploy.yaml"
tmpl --set kind=Job >"${WORK}/job.yaml"
tmpl -f "${HERE}/values-ha.yaml" >"${WORK}/ha.yaml"
tmpl -f "${HERE}/values-priority.yaml" >"${WORK}/prio.yaml"
tmpl -f "${HERE}/values-no-rbac.yaml" >"${WORK}/norbac.yaml"
tmpl -f "${HERE}/values-usage.yaml" >"${WORK}/usage.yaml"

check "defaults: one CronJob, schedule */2 * * * *, concurrencyPolicy Forbid, not suspended" q "${WORK}/cron.yaml" \
  'one("CronJob")["spec"]["schedule"] == "*/2 * * * *" and one("CronJob")["spec"]["concurrencyPolicy"] == "Forbid" and not one("CronJob")["spec"].get("suspend") and not by("Deployment") and not by("Job")'
check "CronJob args: policy file + cmdOptions, no interval, no leader election" q "${WORK}/cron.yaml" \
  'container("CronJob")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--v=3"]'
check "Deployment args: --descheduling-interval=5m" q "${WORK}/deploy.yaml" \
  'container("Deployment")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=5m", "--v=3"] and one("Deployment")["spec"]["replicas"] == 1'
check "Job: one run, restartPolicy Never" q "${WORK}/job.yaml" \
  'one("Job")["spec"]["completions"] == 1 and pod("Job")["spec"]["restartPolicy"] == "Never" and container("Job")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--v=3"]'
check "pod security: non-root 65532, read-only root, no privilege escalation, drop ALL, seccomp RuntimeDefault" q "${WORK}/cron.yaml" \
  'pod("CronJob")["spec"]["securityContext"] == {"runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532, "seccompProfile": {"type": "RuntimeDefault"}} and container("CronJob")["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "privileged": False, "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": 65532, "runAsGroup": 65532}'
check "priorityClassName system-cluster-critical, command /bin/descheduler" q "${WORK}/cron.yaml" \
  'pod("CronJob")["spec"]["priorityClassName"] == "system-cluster-critical" and container("CronJob")["command"] == ["/bin/descheduler"]'
check "probes: liveness GET /healthz, readiness GET /readyz, HTTPS on 10258 (as upstream)" q "${WORK}/deploy.yaml" \
  'container("Deployment")["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 10258, "scheme": "HTTPS"} and container("Deployment")["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 10258, "scheme": "HTTPS"}'
tmpl --set kind=Deployment --set plainHttp=true --set service.enabled=true --set serviceMonitor.enabled=true \
  --set livenessProbe.httpGet.scheme=HTTPS >"${WORK}/plain.yaml"
check "plainHttp: --plain-http before cmdOptions; probes (even a carried-over HTTPS) and ServiceMonitor use http" q "${WORK}/plain.yaml" \
  'container("Deployment")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=5m", "--plain-http", "--v=3"] and container("Deployment")["livenessProbe"]["httpGet"]["scheme"] == "HTTP" and container("Deployment")["readinessProbe"]["httpGet"]["scheme"] == "HTTP" and one("ServiceMonitor")["spec"]["endpoints"][0]["scheme"] == "http" and "tlsConfig" not in one("ServiceMonitor")["spec"]["endpoints"][0]'
check "upstream's image repository without a tag: kdesched's image" q <(tmpl --set image.repository=registry.k8s.io/descheduler/descheduler) \
  'container("CronJob")["image"] == "ghcr.io/kdesched/kdesched:v" + __import__("yaml").safe_load(open("'"${CHART}"'/Chart.yaml"))["appVersion"]'
check "the fallback image is values.yaml's default image" q <(tmpl) \
  'container("CronJob")["image"] == __import__("yaml").safe_load(open("'"${CHART}"'/values.yaml"))["image"]["repository"] + ":v" + __import__("yaml").safe_load(open("'"${CHART}"'/Chart.yaml"))["appVersion"]'
check "deschedulerPolicy: null: no ConfigMap, the workload still mounts one of the chart's name (as upstream)" q <(tmpl --set deschedulerPolicy=null) \
  'not by("ConfigMap") and pod("CronJob")["spec"]["volumes"][0]["configMap"]["name"] == "kdesched"'
check "policy ConfigMap: upstream's default DeschedulerPolicy (seven plugins + DefaultEvictor)" q "${WORK}/cron.yaml" \
  '(lambda p: p["apiVersion"] == "descheduler/v1alpha2" and p["kind"] == "DeschedulerPolicy" and [c["name"] for c in p["profiles"][0]["pluginConfig"]] == ["DefaultEvictor", "RemoveDuplicates", "RemovePodsHavingTooManyRestarts", "RemovePodsViolatingNodeAffinity", "RemovePodsViolatingNodeTaints", "RemovePodsViolatingInterPodAntiAffinity", "RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"])(__import__("yaml").safe_load(one("ConfigMap")["data"]["policy.yaml"]))'
check "policy volume: the ConfigMap at /policy-dir" q "${WORK}/cron.yaml" \
  'pod("CronJob")["spec"]["volumes"][0]["configMap"]["name"] == one("ConfigMap")["metadata"]["name"] and container("CronJob")["volumeMounts"][0]["mountPath"] == "/policy-dir"'
check "ClusterRole: exactly list+watch on the informers' resources, create pods/eviction, create+update events.k8s.io events" q "${WORK}/cron.yaml" \
  'sorted(rules()) == sorted([(("",), ("pods",), (), ("list", "watch")), (("",), ("pods/eviction",), (), ("create",)), (("",), ("nodes",), (), ("list", "watch")), (("",), ("namespaces",), (), ("list", "watch")), (("",), ("persistentvolumeclaims",), (), ("list", "watch")), (("policy",), ("poddisruptionbudgets",), (), ("list", "watch")), (("events.k8s.io",), ("events",), (), ("create", "update"))])'
check "ClusterRole: no core events (Events go through events.k8s.io/v1, as upstream's)" q "${WORK}/cron.yaml" \
  'not any(g == ("",) and "events" in res for g, res, _, v in rules())'
check "ClusterRole: no delete/deletecollection/patch anywhere, update only on events, no secrets, no wildcards" q "${WORK}/ha.yaml" \
  'all(not set(v) & {"delete", "deletecollection", "patch", "*"} and ("update" not in v or res == ("events",)) and "secrets" not in res and "*" not in res and "*" not in g for g, res, _, v in rules())'
check "no leader-election Role without leaderElection" q "${WORK}/deploy.yaml" 'not by("Role") and not by("RoleBinding")'
check "no leader election: the Deployment rolls with Recreate (a surge pod would evict beside the old one)" q "${WORK}/deploy.yaml" \
  'one("Deployment")["spec"]["strategy"] == {"type": "Recreate"}'
check "leaderElection.enabled=false: Recreate" q <(tmpl --set kind=Deployment --set leaderElection.enabled=false) \
  'one("Deployment")["spec"]["strategy"] == {"type": "Recreate"}'
check "leaderElection: the default rolling update (the new pod waits for the Lease)" q "${WORK}/ha.yaml" \
  '"strategy" not in one("Deployment")["spec"]'
check "leader election from cmdOptions (leader-elect: true): the default rolling update" q <(tmpl --set kind=Deployment --set cmdOptions.leader-elect=true) \
  '"strategy" not in one("Deployment")["spec"]'
check "leaderElection: Role in kube-system: create leases; get+update the named Lease only" q "${WORK}/ha.yaml" \
  'sorted(rules("Role")) == sorted([(("coordination.k8s.io",), ("leases",), (), ("create",)), (("coordination.k8s.io",), ("leases",), ("kdesched-ha",), ("get", "update"))]) and one("Role")["metadata"]["namespace"] == "kube-system" and one("RoleBinding")["subjects"][0]["name"] == one("ServiceAccount")["metadata"]["name"]'
check "leaderElection: Deployment args: cmdOptions, then the --leader-elect* flags that are set, as upstream renders them" q "${WORK}/ha.yaml" \
  'container("Deployment")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=2m", "--v=3", "--leader-elect=true", "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s", "--leader-elect-resource-lock=leases", "--leader-elect-resource-name=kdesched-ha"] and one("Deployment")["spec"]["replicas"] == 2'
check "Lease namespace defaults to kube-system (the flag's default), not the release namespace ops" q \
  <("${HELM}" template kdesched "${CHART}" -n ops --set kind=Deployment --set leaderElection.enabled=true) \
  'one("Role")["metadata"]["namespace"] == "kube-system" and one("RoleBinding")["metadata"]["namespace"] == "kube-system" and one("RoleBinding")["subjects"][0]["namespace"] == "ops" and not any(a.startswith("--leader-elect-resource-namespace") for a in container("Deployment")["args"])'
check "Lease from cmdOptions (leader_elect_resource_namespace, pflag spelling): the Role follows" q \
  <(tmpl --set kind=Deployment --set cmdOptions.leader-elect=true --set cmdOptions.leader_elect_resource_namespace=ops --set cmdOptions.leader-elect-resource-name=l) \
  'one("Role")["metadata"]["namespace"] == "ops" and rules("Role")[1][2] == ("l",)'
check "Lease: leaderElection wins over cmdOptions (rendered last); resourceNamescape over resourceNamespace (as upstream)" q \
  <(tmpl --set kind=Deployment --set cmdOptions.leader-elect-resource-namespace=ops --set leaderElection.enabled=true --set leaderElection.resourceNamespace=a --set leaderElection.resourceNamescape=b) \
  'one("Role")["metadata"]["namespace"] == "b" and container("Deployment")["args"][-1] == "--leader-elect-resource-namespace=b"'
check "HA: PDB, headless metrics Service, ServiceMonitor (https + insecureSkipVerify as upstream, relabelings)" q "${WORK}/ha.yaml" \
  'one("PodDisruptionBudget")["spec"]["minAvailable"] == 1 and one("Service")["spec"]["clusterIP"] == "None" and one("Service")["spec"]["ports"][0]["port"] == 10258 and one("ServiceMonitor")["spec"]["endpoints"][0]["scheme"] == "https" and one("ServiceMonitor")["spec"]["endpoints"][0]["tlsConfig"] == {"insecureSkipVerify": True} and len(one("ServiceMonitor")["spec"]["endpoints"][0]["relabelings"]) == 1 and one("ServiceMonitor")["spec"]["endpoints"][0]["interval"] == "30s"'
check "leaderElection ignored for a CronJob, as upstream (kdesched refuses --leader-elect without an interval)" q <(tmpl --set leaderElection.enabled=true) \
  'not by("Role") and not any(a.startswith("--leader-elect") for a in container("CronJob")["args"])'
check "priorityThreshold.name: + get on that PriorityClass only" q "${WORK}/prio.yaml" \
  '(("scheduling.k8s.io",), ("priorityclasses",), ("system-cluster-critical",), ("get",)) in rules() and len(rules()) == 8'
check "usage sources: + list on metrics.k8s.io nodes and pods (no get); get on the Prometheus token's Secret only, in its namespace" q "${WORK}/usage.yaml" \
  '(("metrics.k8s.io",), ("nodes", "pods"), (), ("list",)) in rules() and len(rules()) == 8 and sorted(rules("Role")) == [(("",), ("secrets",), ("kdesched-prometheus-token",), ("get",))] and one("Role")["metadata"]["namespace"] == "monitoring" and one("RoleBinding")["metadata"]["namespace"] == "monitoring" and one("RoleBinding")["subjects"][0]["name"] == one("ServiceAccount")["metadata"]["name"] and one("RoleBinding")["roleRef"]["name"] == one("Role")["metadata"]["name"]'
check "metricsCollector.enabled (deprecated) grants metrics.k8s.io too; no metrics source, no such rule and no Secret Role" q \
  <(tmpl --set deschedulerPolicy.metricsCollector.enabled=true) \
  '(("metrics.k8s.io",), ("nodes", "pods"), (), ("list",)) in rules() and not by("Role")'
check "no metrics source: no metrics.k8s.io rule, no Secret Role" q "${WORK}/cron.yaml" \
  'not any(g == ("metrics.k8s.io",) for g, _, _, _ in rules()) and not by("Role")'
check "moves enabled: + get on apps replicasets, get and patch on apps deployments; nothing else" q \
  <(tmpl --set deschedulerPolicy.kdesched.moves.enabled=true) \
  '(("apps",), ("replicasets",), (), ("get",)) in rules() and (("apps",), ("deployments",), (), ("get", "patch")) in rules() and len(rules()) == 9'
check "moves off, or under compat: upstream: no apps rule" q \
  <(tmpl --set deschedulerPolicy.kdesched.moves.enabled=true --set deschedulerPolicy.kdesched.compat=upstream) \
  'not any(g == ("apps",) for g, _, _, _ in rules()) and len(rules()) == 7'
check "rbac.create=false, serviceAccount.create=false: no RBAC objects, the given ServiceAccount" q "${WORK}/norbac.yaml" \
  'not by("ClusterRole") and not by("ClusterRoleBinding") and not by("ServiceAccount") and pod("CronJob")["spec"]["serviceAccountName"] == "descheduler-sa"'
checksum() {
  python3 -c 'import sys,yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] in ("CronJob","Deployment","Job"):
        t = d["spec"]["jobTemplate"]["spec"]["template"] if d["kind"] == "CronJob" else d["spec"]["template"]
        print(t["metadata"]["annotations"]["checksum/config"])' "$1"
}
tmpl --set deschedulerPolicy.maxNoOfPodsToEvictTotal=3 >"${WORK}/cron2.yaml"
c1="$(checksum "${WORK}/cron.yaml")"; c2="$(checksum "${WORK}/cron2.yaml")"; c3="$(checksum <(tmpl --set schedule='*/5 * * * *'))"
check "checksum/config changes with the policy (${c1:0:12} -> ${c2:0:12}), not with the schedule" \
  test -n "${c1}" -a "${c1}" != "${c2}" -a "${c1}" = "${c3}"
check "deschedulerPolicy through tpl: {{ .Release.Namespace }} expands" q \
  <(tmpl --set-string 'deschedulerPolicy.profiles[0].name=p-{{ .Release.Namespace }}') \
  '"- name: p-kube-system" in one("ConfigMap")["data"]["policy.yaml"]'

check "upstream's values.yaml as shipped: kdesched's image, HTTPS liveness probe, upstream's 8-plugin policy as given" q <(tmpl -f "${UPSTREAM_VALUES}") \
  'container("CronJob")["image"].startswith("ghcr.io/kdesched/kdesched:v") and container("CronJob")["livenessProbe"]["httpGet"]["scheme"] == "HTTPS" and len(__import__("yaml").safe_load(one("ConfigMap")["data"]["policy.yaml"])["profiles"][0]["pluginConfig"]) == 8'

# The NetworkPolicy (kdesched only, off by default): ingress to the metrics port from the listed
# peers only; with none listed, no ingress rule at all (a rule without "from" would admit anyone).
check "networkPolicy: off by default, for every kind and for upstream's values" q \
  <(tmpl; tmpl --set kind=Deployment; tmpl -f "${UPSTREAM_VALUES}") 'not by("NetworkPolicy")'
check "networkPolicy.enabled, no metricsFrom: Ingress only, no rule (no one admitted), the pods of each kind selected" q \
  <(for k in CronJob Deployment Job; do tmpl --set kind="${k}" --set networkPolicy.enabled=true; done) \
  'len(by("NetworkPolicy")) == 3 and all(n["spec"]["ingress"] == [] and n["spec"]["policyTypes"] == ["Ingress"] and "egress" not in n["spec"] for n in by("NetworkPolicy")) and all(by("NetworkPolicy")[0]["spec"]["podSelector"]["matchLabels"].items() <= pod(k)["metadata"]["labels"].items() for k in ("CronJob", "Deployment", "Job"))'
check "networkPolicy.metricsFrom: one rule, port 10258/TCP, from exactly the listed peers" q \
  <(tmpl --set kind=Deployment --set networkPolicy.enabled=true \
    --set-json 'networkPolicy.metricsFrom=[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}},"podSelector":{"matchLabels":{"app.kubernetes.io/name":"prometheus"}}},{"ipBlock":{"cidr":"10.0.0.0/8"}}]') \
  'one("NetworkPolicy")["spec"]["ingress"] == [{"ports": [{"port": 10258, "protocol": "TCP"}], "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}, "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}, {"ipBlock": {"cidr": "10.0.0.0/8"}}]}] and one("NetworkPolicy")["metadata"]["namespace"] == "kube-system" and one("NetworkPolicy")["spec"]["podSelector"]["matchLabels"] == one("Deployment")["spec"]["selector"]["matchLabels"]'

# ---------------------------------------------------------------------------
phase "monitoring: dashboard and alerts (promtool)"
tmpl --set kind=Deployment --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true >"${WORK}/monitoring.yaml"
MON="${WORK}/monitoring"
if queries="$(python3 "${HERE}/monitoring/extract.py" "${WORK}/monitoring.yaml" "${MON}")"; then
  cp "${HERE}/monitoring/alerts-test.yaml" "${MON}/"
  check "dashboard ConfigMap: sidecar label grafana_dashboard=1, valid JSON with ${queries} queries" q "${WORK}/monitoring.yaml" \
    'any(d["kind"] == "ConfigMap" and d["metadata"]["labels"].get("grafana_dashboard") == "1" and __import__("json").loads(d["data"]["kdesched.json"])["uid"] == "kdesched" for d in docs)'
  check "promtool check rules: the PrometheusRule's alerts" quietly promtool check rules "${MON}/alerts.rules.yaml"
  check "promtool check rules: every dashboard query (${queries}), as recording rules" quietly promtool check rules "${MON}/dashboard.rules.yaml"
  check "promtool test rules monitoring/alerts-test.yaml: each alert firing and not firing" quietly promtool test rules "${MON}/alerts-test.yaml"
  check "every metric the alerts and the dashboard read is registered by kdesched (pkg/, cmd/)" \
    python3 "${HERE}/monitoring/extract.py" --names "${MON}" "${ROOT}"
else
  fail "monitoring objects not found in helm template output"
fi
check "the dashboard and the PrometheusRule are off by default" q "${WORK}/deploy.yaml" \
  'not by("PrometheusRule") and not any(d["metadata"]["name"].endswith("-dashboard") for d in by("ConfigMap"))'
check "prometheusRule: the memory limit from resources.limits.memory (1.5Gi), alertLabels, disabled, the interval from cycleInterval, the workload evictions' count and window" q \
  <(tmpl --set prometheusRule.enabled=true --set resources.limits.memory=1.5Gi --set prometheusRule.cycleInterval=1h30m \
     --set prometheusRule.alertLabels.severity=critical --set 'prometheusRule.disabled={KdeschedCacheStale}' \
     --set prometheusRule.workloadEvictions=12 --set prometheusRule.workloadEvictionsWindow=30m) \
  '(lambda rs: [r["alert"] for r in rs] == ["KdeschedNoSuccessfulCycle", "KdeschedEvictionErrors", "KdeschedRepeatedGiveUp", "KdeschedWorkloadEvictedRepeatedly", "KdeschedMemoryNearLimit"] and "/ 1610612736 >" in rs[4]["expr"] and "> 16200)" in rs[0]["expr"] and rs[3]["expr"].count("[30m]") == 2 and "offset 30m" in rs[3]["expr"] and rs[3]["expr"].endswith("> 12") and all(r["labels"]["severity"] == "critical" for r in rs))(one("PrometheusRule")["spec"]["groups"][0]["rules"])'
check "prometheusRule: KdeschedWorkloadEvictedRepeatedly reads its series by job alone (their namespace label is the evicted pod namespace), or by prometheusRule.selector" q \
  <(tmpl --set prometheusRule.enabled=true --set kind=Deployment; tmpl --set prometheusRule.enabled=true --set kind=Deployment --set-string 'prometheusRule.selector=cluster="a"') \
  '[r["expr"].count(s) for p, s in zip(by("PrometheusRule"), ["job=\"kdesched\"}", "cluster=\"a\"}"]) for r in p["spec"]["groups"][0]["rules"] if r["alert"] == "KdeschedWorkloadEvictedRepeatedly"] == [3, 3]'
check "prometheusRule: memoryLimitBytes wins; without any limit 512 MiB" q \
  <(tmpl --set prometheusRule.enabled=true --set prometheusRule.memoryLimitBytes=1000 --set kind=Deployment; tmpl --set prometheusRule.enabled=true --set resources=null --set kind=Deployment) \
  '[r["expr"].split("/ ")[1].split(" ")[0] for p in by("PrometheusRule") for r in p["spec"]["groups"][0]["rules"] if r["alert"] == "KdeschedMemoryNearLimit"] == ["1000", "536870912"]'

# ---------------------------------------------------------------------------
phase "plain manifests"
check "deploy/*.yaml == scripts/render-manifests.sh output" env HELM="${HELM}" "${ROOT}/scripts/render-manifests.sh" --check
for f in rbac configmap cronjob deployment job; do
  check "deploy/${f}.yaml carries no Helm-only label" bash -c "! grep -Eq 'helm.sh/chart|managed-by: Helm' '${ROOT}/deploy/${f}.yaml'"
done
end_phase
