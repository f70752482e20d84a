#!/usr/bin/env bash
# CI entry point for the real-cluster tests (called by scripts/test.sh, which .ci/run runs), in this
# order (test/e2e/README.md says what each proves and how to run one alone):
#   tools (openssl, jq, curl) -> build.sh (cached) -> test/e2e/smoke.sh
#   -> test/e2e/faults.sh                                  (KDESCHED_CI_FAULTS=0 skips it)
#   -> test/e2e/daemon.sh, leader.sh, stale.sh,            (the kdesched daemon; KDESCHED_CI_DAEMON=0
#      silent.sh, saturate.sh, maybe.sh, triggers.sh,      skips them)
#      budgets.sh,
#      plugins.sh, prometheus.sh, watchlist.sh, wire.sh, usage.sh,
#      liveplan.sh, kubectl_plugin.sh, pending.sh, serving.sh, chaos.sh, moves.sh,
#      then watchlist.sh and liveplan.sh again with
#      ${KDESCHED_ASAN_BIN} (ASan+UBSan) when it is set
#   -> incluster.sh (the image on a real node), and beside its token story: test/helm/run.sh,
#      test/upstream/published_policies.py, test/e2e/dockerfile.sh, helm.sh
#                                                          (the chart; KDESCHED_CI_HELM=0 skips them)
#      then test/differential/ci.sh                        (no cluster: runs whatever came before;
#                                                           KDESCHED_CI_DIFFERENTIAL=0 skips it)
# A failure skips the later groups (a failing smoke or fault test means the cluster itself is
# broken); inside a group every test runs. The last lines list each test's result and wall time.
#
# kdesched is ${KDESCHED_BIN:-build/kdesched}. The binaries are cached in
# ${KDESCHED_CACHE:-$HOME/.cache/kdesched}/<hash>/bin (CI runs as root on the developers' machine,
# so /root/.cache/kdesched is shared with them): a warm build step is a no-op. A cold one takes tens
# of minutes on 2 cores, see docs/development.md. KDESCHED_CI_BINARIES overrides which binaries are built
# (default: the control plane, kwok, helm for the chart tests and metrics-server for usage.sh, then
# the real node's binaries; "all" builds every binary at once).
# Called by scripts/test.sh with --build-only in the background first, and with
# KDESCHED_CI_STAGES/KDESCHED_CI_BUILD_PID set, a test that needs a later stage of that chain
# (upstream's binary, the real node, the harness, the image) waits for it (await_stage).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh
source "${ROOT}/scripts/cluster/lib.sh"

t0="$(kd_now_ms)"
missing=()
for tool in openssl jq curl; do command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool}"); done
# As root, the real node too (scripts/cluster/realnode.sh): runc's build needs libseccomp, the node
# its network tools and the CNI plugins. A fresh machine has none of them.
if [ "$(id -u)" -eq 0 ]; then
  for p in libseccomp-dev pkg-config iproute2 iptables conntrack containernetworking-plugins; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q "install ok installed" || missing+=("${p}")
  done
fi
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || kd_die "missing ${missing[*]}; install them (apt-get install ${missing[*]})"
  kd_log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:${PATH}"

# What the tests need first (the control plane, kwok, helm, metrics-server), then the real node's
# binaries, which only moves.sh and incluster.sh use: scripts/test.sh starts the end-to-end tests as
# soon as the first set is built, and the rest is built beside them (see --build-only below).
read -r -a binaries <<<"${KDESCHED_CI_BINARIES:-etcd etcdctl kube-apiserver kube-controller-manager kube-scheduler kubectl kwok helm metrics-server}"
[ "${binaries[*]}" != all ] || binaries=("${KD_ALL_BINARIES[@]}")
node_binaries=()
[ -n "${KDESCHED_CI_BINARIES:-}" ] || node_binaries=("${KD_NODE_BINARIES[@]}")

# stage_done NAME STATUS: the background build chain has passed NAME (a file in
# ${KDESCHED_CI_STAGES}, which scripts/test.sh and the tests below wait for).
stage_done() { [ -z "${KDESCHED_CI_STAGES:-}" ] || echo "$2" >"${KDESCHED_CI_STAGES}/$1"; }

# build_stage NAME LABEL WANTED CMD...: when WANTED is 1, runs CMD, logs its wall time as LABEL and
# sets stage NAME to "exit N"; otherwise sets it to "skipped".
build_stage() {
  local name="$1" label="$2" wanted="$3" t brc=0
  shift 3
  if [ "${wanted}" != 1 ]; then
    stage_done "${name}" skipped
    return 0
  fi
  t="$(kd_now_ms)"
  "$@" || brc=$?
  kd_log "${label}: $(kd_elapsed "${t}")"
  stage_done "${name}" "exit ${brc}"
}

kd_log "cluster binaries: build.sh ${binaries[*]} (cache $(kd_cache_root))"
tb="$(kd_now_ms)"
if [ "${1:-}" = --build-only ]; then
  # Every stage gets its file, built, failed or skipped, and "done" comes last whatever happens,
  # so nothing waits for a stage that will never come.
  trap 'stage_done done "exit $?"' EXIT
  brc=0
  "${ROOT}/scripts/cluster/build.sh" "${binaries[@]}" || brc=$?
  kd_log "build step: $(kd_elapsed "${tb}")"
  stage_done cluster "exit ${brc}"
  [ "${brc}" -eq 0 ] || exit "${brc}"
  # The tests run from here on: the rest of the chain yields to them. scripts/test.sh started this
  # chain with setsid, so the group is the chain's own (run by hand, without KDESCHED_CI_STAGES,
  # the caller's group is left alone).
  [ -z "${KDESCHED_CI_STAGES:-}" ] || echo 19 >/proc/self/autogroup 2>/dev/null || true
else
  "${ROOT}/scripts/cluster/build.sh" "${binaries[@]}"
  kd_log "build step: $(kd_elapsed "${tb}")"
fi
# --build-only: the Go builds and the image alone, which scripts/test.sh starts in the background
# while it compiles and unit-tests kdesched, and which go on beside the end-to-end tests once the
# control plane is built. Ordered by when the tests need them: upstream's binary (moves.sh), the
# real node's binaries (moves.sh, incluster.sh), the differential harness (the last test), the image
# (incluster.sh, dockerfile.sh). Each sets its stage (stage_done), whose test waits for it
# (await_stage): a cold run starts the tests about twenty minutes sooner that way.
if [ "${1:-}" = --build-only ]; then
  # Upstream's binary, for test/e2e/moves.sh's side by side.
  build_stage upstream "upstream descheduler" "${KDESCHED_CI_DAEMON:-1}" "${ROOT}/bench/build-upstream.sh"
  build_stage node "real node binaries" "$([ "${#node_binaries[@]}" -gt 0 ] && echo 1)" \
    "${ROOT}/scripts/cluster/build.sh" "${node_binaries[@]}"
  build_stage harness "differential harness" "${KDESCHED_CI_DIFFERENTIAL:-1}" "${ROOT}/test/differential/build-harness.sh"
  # The image, from the Dockerfile (its build stage compiles kdesched, with a ccache of its own).
  build_stage image image "$([ "${KDESCHED_CI_HELM:-1}" = 1 ] && [ -n "${KDESCHED_IMAGE_ARCHIVE:-}" ] && echo 1)" \
    "${ROOT}/scripts/image.sh" --out "${KDESCHED_IMAGE_ARCHIVE:-}"
  exit 0
fi

# await_stage NAME [PID]: waits until stage NAME's file is in ${KDESCHED_CI_STAGES} or its lane has
# ended: by default the build chain (KDESCHED_CI_BUILD_PID, which also writes "done" when it ends),
# else the lane PID (scripts/unit.sh writes "asan"). Started by scripts/test.sh; a test then finds
# what is still missing and builds it itself (build.sh's lock keeps two builds of one binary apart).
await_stage() {
  local pid="${2:-${KDESCHED_CI_BUILD_PID:-}}" t state
  [ -n "${KDESCHED_CI_STAGES:-}" ] && [ -n "${pid}" ] || return 0
  t="$(kd_now_ms)"
  while [ ! -e "${KDESCHED_CI_STAGES}/$1" ]; do
    [ -n "${2:-}" ] || [ ! -e "${KDESCHED_CI_STAGES}/done" ] || break
    state="$(ps -o stat= -p "${pid}" 2>/dev/null || true)"
    case "${state}" in '' | Z*) break ;; esac
    sleep 2
  done
  kd_log "background stage $1: $(cat "${KDESCHED_CI_STAGES}/$1" 2>/dev/null || echo "not reached, its lane ended") (waited $(kd_elapsed "${t}"))"
}

rc=0
results=()
# run_test PATH [ARGS...]: runs one test, records its summary line and wall time; rc=1 if it failed.
run_test() {
  local t rc_test=0 log
  t="$(kd_now_ms)"
  log="$(mktemp)"
  local nice_cmd=()
  [ "${run_test_nice:-0}" = 1 ] && nice_cmd=(nice -n 10)
  "${nice_cmd[@]+"${nice_cmd[@]}"}" "${ROOT}/$1" "${@:2}" | tee "${log}" || rc_test=$?
  record_test "${RUN_LABEL:-$1}" "${rc_test}" "${log}" "${t}"
  rm -f "${log}"
}
# record_test LABEL RC LOG START_MS: a test's line in the results; rc=1 if it failed.
record_test() {
  results+=("$(printf '%-26s %-8s %-44s %s' "$1" "$([ "$2" -eq 0 ] && echo ok || echo FAILED)" \
    "$(tail -n 1 "$3" | grep -E ': [0-9]+ passed, [0-9]+ failed$' || echo "exit $2")" "$(kd_elapsed "$4")")")
  [ "$2" -eq 0 ] || rc=1
}

run_test test/e2e/smoke.sh
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_FAULTS:-1}" = 1 ]; then
  run_test test/e2e/faults.sh
fi
# The live daemon (kdesched at ${KDESCHED_BIN:-build/kdesched}) against the control plane: all run
# even if another failed, after a passing smoke test (a failing one means the cluster is broken).
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_DAEMON:-1}" = 1 ]; then
  run_test test/e2e/daemon.sh
  run_test test/e2e/leader.sh
  run_test test/e2e/stale.sh
  run_test test/e2e/silent.sh
  run_test test/e2e/saturate.sh
  run_test test/e2e/maybe.sh
  run_test test/e2e/triggers.sh
  run_test test/e2e/budgets.sh
  run_test test/e2e/plugins.sh
  run_test test/e2e/prometheus.sh
  run_test test/e2e/watchlist.sh
  run_test test/e2e/wire.sh
  run_test test/e2e/usage.sh
  run_test test/e2e/liveplan.sh
  run_test test/e2e/kubectl_plugin.sh
  run_test test/e2e/pending.sh
  # The metrics port under attack, alone and (--cluster) on a leader whose renewals must keep pace.
  # A 15 s attack here (30 s by default when run alone): the same bounds, half the wall time.
  ATTACK_SECONDS="${ATTACK_SECONDS:-15}" run_test test/e2e/serving.sh --cluster
  # Seeded faults with invariants, on a seed that passed repeatedly (FAULT_SEED=N picks another;
  # run chaos.sh alone for a random one, FAULT_ROUNDS=N for longer).
  export FAULT_SEED="${FAULT_SEED:-51}"
  run_test test/e2e/chaos.sh
  # Last of the group: it needs upstream's binary and the real node's, built beside the tests above.
  await_stage upstream
  await_stage node
  run_test test/e2e/moves.sh
  # The sanitizer build through the live paths whose input is the server's: the watch-list sync
  # (decoding each event as it arrives) and the live plan. Any ASan/UBSan/leak report in a run's
  # output fails the test (test/e2e/lib.sh kds_sanitizer_scan). scripts/test.sh sets
  # KDESCHED_ASAN_BIN to the binary it built in the same run.
  if [ -n "${KDESCHED_ASAN_BIN:-}" ]; then
    # scripts/unit.sh builds it beside these tests.
    [ -z "${KDESCHED_CI_UNIT_PID:-}" ] || await_stage asan "${KDESCHED_CI_UNIT_PID}"
    for t in watchlist liveplan; do
      RUN_LABEL="${t}.sh (ASan)" KDESCHED_BIN="${KDESCHED_ASAN_BIN}" ASAN_OPTIONS=detect_leaks=1 \
        UBSAN_OPTIONS=print_stacktrace=1 run_test "test/e2e/${t}.sh"
    done
  fi
fi
# The Helm chart: offline lint/golden/drift checks, the Dockerfile's runtime libraries, then
# install into a real control plane with the RBAC proof; and the image (built above by
# --build-only, else by incluster.sh itself) on a real kubelet node. incluster.sh's last story waits
# about a minute for the kubelet to rewrite a token file (10 minutes with
# KDESCHED_INCLUSTER_TOKEN=expiry), so it starts first, in the background, and the chart tests and
# the differential test run from that wait on, at a lower priority than the token release's
# renewals: none of them touches what that story or incluster.sh's machine-state check
# looks at (links, iptables rules, mounts, containerd/kubelet processes; helm.sh's control plane
# is kwok's, on ports of its own). incluster.sh's output is printed after them.
if [ "${rc}" -eq 0 ] && [ "${KDESCHED_CI_HELM:-1}" = 1 ]; then
  await_stage node
  await_stage image
  incluster_t="$(kd_now_ms)"
  incluster_log="$(mktemp)"
  incluster_waiting="$(mktemp -u)"
  KDESCHED_INCLUSTER_WAITING="${incluster_waiting}" "${ROOT}/test/e2e/incluster.sh" >"${incluster_log}" 2>&1 &
  incluster_pid=$!
  while kill -0 "${incluster_pid}" 2>/dev/null && [ ! -e "${incluster_waiting}" ]; do sleep 1; done
  kd_log "incluster.sh: $([ -e "${incluster_waiting}" ] && echo "waiting for its token" || echo "ended") after $(kd_elapsed "${incluster_t}")"
  run_test_nice=1 run_test test/helm/run.sh
  # Upstream's own published policies through `kdesched plan` (helm renders the chart's default).
  run_test_nice=1 run_test test/upstream/published_policies.py "${KDESCHED_BIN:-${ROOT}/build/kdesched}"
  run_test_nice=1 run_test test/e2e/dockerfile.sh "${KDESCHED_BIN:-${ROOT}/build/kdesched}"
  run_test_nice=1 run_test test/e2e/helm.sh
fi
# kdesched's decisions against upstream v0.36's own plugin code on a fixed seed set (needs Go, not
# the cluster, so a failed group above does not skip it).
if [ "${KDESCHED_CI_DIFFERENTIAL:-1}" = 1 ]; then
  await_stage harness
  RUN_LABEL=test/differential/ci.sh run_test_nice=1 run_test test/differential/ci.sh \
    --kdesched "${KDESCHED_BIN:-${ROOT}/build/kdesched}"
fi
if [ -n "${incluster_pid:-}" ]; then
  incluster_rc=0
  wait "${incluster_pid}" || incluster_rc=$?
  echo "== test/e2e/incluster.sh (the chart and differential tests ran beside its token story; its output here)"
  cat "${incluster_log}"
  record_test test/e2e/incluster.sh "${incluster_rc}" "${incluster_log}" "${incluster_t}"
  rm -f "${incluster_log}" "${incluster_waiting}"
fi
echo "== cluster CI results"
printf '   %s\n' "${results[@]}"
kd_log "cluster CI: $(kd_elapsed "${t0}") (exit ${rc})"
exit "${rc}"
