#!/usr/bin/env bash
# Offline tests of the Helm chart helm/kdesched (no cluster needed, about 25 s):
#   - helm lint, with the default values and with every test/helm/values-*.yaml;
#   - helm template for each kind (CronJob, Deployment, Job) and for every values file,
#     compared with test/helm/golden/*.yaml;
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
# with PyYAML (Debian: python3-yaml). A failed check is reported and the test goes on; the last
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
must_fail "typo in a top-level key (shedule)" "additional properties 'shedule' not allowed" --set shedule=1
must_fail "unknown kind" "/kind': value must be one of 'CronJob', 'Deployment', 'Job'" --set kind=DaemonSet
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
must_fail "typo inside leaderElection (enable)" "additional properties 'enable' not allowed" --set leaderElection.enable=true
must_fail "unsupported policy apiVersion" "/deschedulerPolicyAPIVersion': value must be 'descheduler/v1alpha2'" \
  --set deschedulerPolicyAPIVersion=descheduler/v1alpha1
must_fail "cmdOptions overriding --policy-config-file" "cmdOptions.policy-config-file: the chart sets --policy-config-file itself" \
  --set cmdOptions.policy-config-file=/x
must_fail "cmdOptions.leader-elect on a Deployment" "cmdOptions.leader-elect: use the leaderElection values instead" \
  --set kind=Deployment --set cmdOptions.leader-elect=true
must_fail "serviceMonitor without service" "serviceMonitor.enabled needs service.enabled=true" \
  --set kind=Deployment --set serviceMonitor.enabled=true
must_fail "wrong type (replicas: two)" "/replicas'.*(integer|number)" --set kind=Deployment --set-string replicas=two

# ---------------------------------------------------------------------------
phase "rendered objects"
tmpl >"${WORK}/cron.yaml"
tmpl --set kind=Deployment >"${WORK}/deploy.yaml"
tmpl --set kind=Job >"${WORK}/job.yaml"
tmpl -f "${HERE}/values-ha.yaml" >"${WORK}/ha.yaml"
tmpl -f "${HERE}/values-priority.yaml" >"${WORK}/prio.yaml"
tmpl -f "${HERE}/values-no-rbac.yaml" >"${WORK}/norbac.yaml"

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
check "probes: liveness GET /healthz, readiness GET /readyz, HTTP on 10258" q "${WORK}/deploy.yaml" \
  'container("Deployment")["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 10258, "scheme": "HTTP"} and container("Deployment")["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": 10258, "scheme": "HTTP"}'
check "policy ConfigMap: a descheduler/v1alpha2 DeschedulerPolicy with kdesched's four plugins + DefaultEvictor" q "${WORK}/cron.yaml" \
  '(lambda p: p["apiVersion"] == "descheduler/v1alpha2" and p["kind"] == "DeschedulerPolicy" and [c["name"] for c in p["profiles"][0]["pluginConfig"]] == ["DefaultEvictor", "RemovePodsViolatingNodeAffinity", "RemovePodsViolatingInterPodAntiAffinity", "RemovePodsViolatingTopologySpreadConstraint", "LowNodeUtilization"])(__import__("yaml").safe_load(one("ConfigMap")["data"]["policy.yaml"]))'
check "policy volume: the ConfigMap at /policy-dir" q "${WORK}/cron.yaml" \
  'pod("CronJob")["spec"]["volumes"][0]["configMap"]["name"] == one("ConfigMap")["metadata"]["name"] and container("CronJob")["volumeMounts"][0]["mountPath"] == "/policy-dir"'
check "ClusterRole: exactly list+watch on the informers' resources, create pods/eviction and events" q "${WORK}/cron.yaml" \
  'sorted(rules()) == sorted([(("",), ("pods",), (), ("list", "watch")), (("",), ("pods/eviction",), (), ("create",)), (("",), ("nodes",), (), ("list", "watch")), (("",), ("namespaces",), (), ("list", "watch")), (("",), ("persistentvolumeclaims",), (), ("list", "watch")), (("policy",), ("poddisruptionbudgets",), (), ("list", "watch")), (("",), ("events",), (), ("create",))])'
check "ClusterRole: no delete/deletecollection/patch/update anywhere, no secrets, no wildcards" q "${WORK}/ha.yaml" \
  'all(not set(v) & {"delete", "deletecollection", "patch", "update", "*"} and "secrets" not in res and "*" not in res and "*" not in g for g, res, _, v in rules())'
check "no leader-election Role without leaderElection" q "${WORK}/deploy.yaml" 'not by("Role") and not by("RoleBinding")'
check "leaderElection: Role in the release namespace: create leases; get+update the named Lease only" q "${WORK}/ha.yaml" \
  'sorted(rules("Role")) == sorted([(("coordination.k8s.io",), ("leases",), (), ("create",)), (("coordination.k8s.io",), ("leases",), ("kdesched-ha",), ("get", "update"))]) and one("Role")["metadata"]["namespace"] == "kube-system" and one("RoleBinding")["subjects"][0]["name"] == one("ServiceAccount")["metadata"]["name"]'
check "leaderElection: Deployment args carry the --leader-elect* flags and the Lease's name and namespace" q "${WORK}/ha.yaml" \
  'container("Deployment")["args"] == ["--policy-config-file=/policy-dir/policy.yaml", "--descheduling-interval=2m", "--leader-elect", "--leader-elect-lease-duration=15s", "--leader-elect-renew-deadline=10s", "--leader-elect-retry-period=2s", "--leader-elect-resource-lock=leases", "--leader-elect-resource-name=kdesched-ha", "--leader-elect-resource-namespace=kube-system", "--v=3"] and one("Deployment")["spec"]["replicas"] == 2'
check "HA: PDB, headless metrics Service, ServiceMonitor (http, relabelings)" q "${WORK}/ha.yaml" \
  'one("PodDisruptionBudget")["spec"]["minAvailable"] == 1 and one("Service")["spec"]["clusterIP"] == "None" and one("Service")["spec"]["ports"][0]["port"] == 10258 and one("ServiceMonitor")["spec"]["endpoints"][0]["scheme"] == "http" and len(one("ServiceMonitor")["spec"]["endpoints"][0]["relabelings"]) == 1 and one("ServiceMonitor")["spec"]["endpoints"][0]["interval"] == "30s"'
check "leaderElection ignored for a CronJob (kdesched refuses --leader-elect without an interval)" q <(tmpl --set leaderElection.enabled=true) \
  'not by("Role") and "--leader-elect" not in container("CronJob")["args"]'
check "priorityThreshold.name: + get on that PriorityClass only" q "${WORK}/prio.yaml" \
  '(("scheduling.k8s.io",), ("priorityclasses",), ("system-cluster-critical",), ("get",)) in rules() and len(rules()) == 8'
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

# ---------------------------------------------------------------------------
phase "plain manifests"
check "deploy/*.yaml == scripts/render-manifests.sh output" env HELM="${HELM}" "${ROOT}/scripts/render-manifests.sh" --check
for f in rbac configmap cronjob deployment job; do
  check "deploy/${f}.yaml carries no Helm-only label" bash -c "! grep -Eq 'helm.sh/chart|managed-by: Helm' '${ROOT}/deploy/${f}.yaml'"
done
end_phase
