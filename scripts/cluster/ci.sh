#!/usr/bin/env bash
# CI entry point for the real-cluster tests (called by .ci/run):
#   tools (openssl, jq, curl) -> build.sh (cached) -> test/e2e/smoke.sh
#   [-> test/e2e/faults.sh when KDESCHED_CI_FAULTS=1]
#   -> test/e2e/daemon.sh, test/e2e/leader.sh (the kdesched daemon; KDESCHED_CI_DAEMON=0 skips them)
#
# The binaries are cached in ${KDESCHED_CACHE:-$HOME/.cache/kdesched}/<hash>/bin
# (CI runs as root on the developers' machine, so /root/.cache/kdesched is
# shared with them): a warm build step is a no-op. A cold one takes tens of
# minutes on 2 cores, see README. KDESCHED_CI_BINARIES overrides which binaries
# are built (default: what the tests use, helm included for the chart tests; "all"
# builds every binary).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"

t0="$(kd_now_ms)"
missing=()
for tool in openssl jq curl; do command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool}"); done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || kd_die "missing ${missing[*]}; install them (apt-get install ${missing[*]})"
  kd_log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"

read -r -a binaries <<<"${KDESCHED_CI_BINARIES:-etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm}"
[ "${binaries[*]}" != all ] || binaries=("${KD_ALL_BINARIES[@]}")
kd_log "cluster binaries: build.sh ${binaries[*]} (cache $(kd_cache_root))"
tb="$(kd_now_ms)"
"${ROOT}/scripts/cluster/build.sh" "${binaries[@]}"
kd_log "build step: $(kd_elapsed "${tb}")"

rc=0
"${ROOT}/test/e2e/smoke.sh" || rc=$?
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_FAULTS:-1}" = 1 ]; then
  "${ROOT}/test/e2e/faults.sh" || rc=$?
fi
# The live daemon (kdesched at ${KDESCHED_BIN:-build/kdesched}) against the control plane: both run
# even if the other failed, after a passing smoke test (a failing one means the cluster is broken).
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_DAEMON:-1}" = 1 ]; then
  "${ROOT}/test/e2e/daemon.sh" || rc=$?
  "${ROOT}/test/e2e/leader.sh" || rc=$?
  "${ROOT}/test/e2e/triggers.sh" || rc=$?
fi
# The Helm chart: offline lint/golden/drift checks, the Dockerfile's runtime libraries, then
# install into a real control plane with the RBAC proof.
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_HELM:-1}" = 1 ]; then
  "${ROOT}/test/helm/run.sh" || rc=$?
  "${ROOT}/test/e2e/dockerfile.sh" "${KDESCHED_BIN:-${ROOT}/build/kdesched}" || rc=$?
  "${ROOT}/test/e2e/helm.sh" || rc=$?
fi
kd_log "cluster CI: $(kd_elapsed "${t0}") (exit ${rc})"
exit "${rc}"
