# shellcheck shell=bash
# The test control plane's processes and ports, sourced by cluster.sh (it uses cluster.sh's
# variables: DIR, BIN, STOP_TIMEOUT, ...): a component is started in its own session with its
# command line recorded (for restarts), found again by its recorded PID (checked to be ours), and
# stopped by SIGTERM then SIGKILL, waiting until its port is free.

# component_pid NAME: prints the PID of the component if it is alive and really
# ours (the PID may have been recycled: our processes carry DIR in their args).
component_pid() {
  local f="${DIR}/pids/$1.pid" pid state
  [ -f "${f}" ] || return 1
  pid="$(cat "${f}")"
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  pid_is_ours "${pid}" || return 1
  echo "${pid}"
}

pid_is_ours() {
  local pid="$1" state
  [ -r "/proc/${pid}/cmdline" ] || return 1
  state="$(sed 's/.*) //' "/proc/${pid}/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "${state}" ] && [ "${state}" != Z ] && [ "${state}" != X ] || return 1
  tr '\0' '\n' <"/proc/${pid}/cmdline" 2>/dev/null | grep -qF -- "${DIR}/"
}

# pid_exiting PID: on its way out but not done: its command line is gone (the memory goes early in
# the exit, so pid_is_ours says no) while a thread of it is not a zombie yet and may still hold its
# listening sockets and its files. Binding its port or removing DIR then races with it.
pid_exiting() {
  local f s state flags
  [ -r "/proc/$1/cmdline" ] && [ -z "$(tr -d '\0' <"/proc/$1/cmdline" 2>/dev/null)" ] || return 1
  for f in /proc/"$1"/task/*/stat; do
    { read -r s <"${f}"; } 2>/dev/null || continue
    read -r state _ _ _ _ _ flags _ <<<"${s##*) }"
    (( (flags & 0x200000) == 0 )) || return 1  # PF_KTHREAD: a kernel thread took the PID over
    case "${state}" in Z | X) ;; *) return 0 ;; esac
  done
  return 1
}

# stop_pids PID...: SIGTERM (and SIGCONT, in case one is paused), wait up to
# STOP_TIMEOUT seconds, then SIGKILL whatever is left and wait until each is a zombie or gone
# (an exiting process counts as running: see pid_exiting).
stop_pids() {
  local pid left deadline
  [ $# -gt 0 ] || return 0
  for pid in "$@"; do kill -TERM "${pid}" 2>/dev/null || true; kill -CONT "${pid}" 2>/dev/null || true; done
  deadline=$(( $(date +%s) + STOP_TIMEOUT ))
  while true; do
    left=()
    for pid in "$@"; do pid_is_ours "${pid}" || pid_exiting "${pid}" && left+=("${pid}"); done
    [ "${#left[@]}" -gt 0 ] || return 0
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      kd_log "SIGKILL ${left[*]} (still running after ${STOP_TIMEOUT}s)"
      for pid in "${left[@]}"; do kill -KILL "${pid}" 2>/dev/null || true; done
      deadline=$(( $(date +%s) + 10 ))
      while true; do
        left=()
        for pid in "$@"; do pid_is_ours "${pid}" || pid_exiting "${pid}" && left+=("${pid}"); done
        [ "${#left[@]}" -gt 0 ] || return 0
        [ "$(date +%s)" -lt "${deadline}" ] || { kd_log "could not stop ${left[*]}"; return 1; }
        sleep 0.2
      done
    fi
    sleep 0.2
  done
}

# start_component NAME BINARY ARGS...: starts it in its own session (so a ^C on
# the terminal that ran up does not reach it), logs to logs/NAME.log, records
# its PID and its command line (for restarts).
start_component() {
  local name="$1"; shift
  printf '%s\n' "$@" >"${DIR}/cmd/${name}.args"
  launch "${name}"
}

launch() {
  local name="$1" args
  mapfile -t args <"${DIR}/cmd/${name}.args"
  # HOME is set for kwok, which otherwise also loads ~/.kwok/kwok.yaml.
  ( cd "${DIR}" && HOME="${DIR}/home" exec setsid "${args[@]}" >>"${DIR}/logs/${name}.log" 2>&1 </dev/null 7>&- ) &
  local pid=$! i
  echo "${pid}" >"${DIR}/pids/${name}.pid"
  # Until the subshell has exec'd, /proc/PID is still a copy of this script.
  for i in $(seq 1 100); do
    pid_is_ours "${pid}" && return 0
    [ -e "/proc/${pid}" ] || break
    sleep 0.05
  done
  tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
  kd_die "${name} did not start (log: ${DIR}/logs/${name}.log)"
}

# wait_component NAME TIMEOUT CHECK...: waits for CHECK to succeed; fails early
# with the component's log tail when the process dies.
wait_component() {
  local name="$1" timeout="$2"; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  while true; do
    if ! component_pid "${name}" >/dev/null; then
      tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
      component_exit "${name}"
      kd_die "${name} exited during start, ${COMPONENT_EXIT} (log: ${DIR}/logs/${name}.log)"
    fi
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ "$(date +%s)" -ge "${deadline}" ]; then
      tail -n 30 "${DIR}/logs/${name}.log" >&2 || true
      kd_die "${name} not ready after ${timeout}s (log: ${DIR}/logs/${name}.log)"
    fi
    sleep 0.25
  done
}

# component_exit NAME: sets COMPONENT_EXIT to how a component this shell launched ended ("exit
# status 1", "killed by signal 9"; "status unknown" when it is not our child), for the message that
# says it died. Not for $(...): a subshell cannot wait for its parent's children.
component_exit() {
  local pid rc=0
  COMPONENT_EXIT="status unknown"
  pid="$(cat "${DIR}/pids/$1.pid" 2>/dev/null)" || return 0
  wait "${pid}" 2>/dev/null || rc=$?
  if [ "${rc}" -eq 127 ] || [ "${rc}" -lt 0 ]; then return 0
  elif [ "${rc}" -gt 128 ]; then COMPONENT_EXIT="killed by signal $((rc - 128))"
  else COMPONENT_EXIT="exit status ${rc}"; fi
}

# wait_component_relaunch NAME TIMEOUT CHECK...: wait_component for a stateless node daemon that
# its supervisor would restart (kube-proxy runs as a DaemonSet or a systemd unit): one death during
# start is logged with its status and log tail, and the daemon is launched again.
wait_component_relaunch() {
  local name="$1" timeout="$2"; shift 2
  local deadline=$(( $(date +%s) + timeout ))
  while component_pid "${name}" >/dev/null; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    [ "$(date +%s)" -lt "${deadline}" ] || break
    sleep 0.25
  done
  if ! component_pid "${name}" >/dev/null; then
    component_exit "${name}"
    kd_log "${name} exited during start, ${COMPONENT_EXIT}; log tail, then one relaunch:"
    tail -n 30 "${DIR}/logs/${name}.log" | sed 's/^/    /' >&2 || true
    launch "${name}"
  fi
  wait_component "${name}" "${timeout}" "$@"
}

# ports

port_in_use() {
  local hex
  hex="$(printf ':%04X' "$1")"
  awk -v h="${hex}" 'FNR > 1 && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# port_listening PORT: a socket LISTENs on PORT (state 0A); TIME_WAIT leftovers of
# accepted connections do not count (they do not stop a new listener binding).
port_listening() {
  local hex
  hex="$(printf ':%04X' "$1")"
  awk -v h="${hex}" 'FNR > 1 && $4 == "0A" && substr($2, length($2) - 4) == h { f = 1 } END { exit !f }' \
    /proc/net/tcp /proc/net/tcp6 2>/dev/null
}
port_released() { ! port_listening "$1"; }

# pick_port VAR: sets VAR to a free port below the ephemeral range (so outgoing
# connections do not take it between now and the bind), not yet handed out by this
# run (a VAR, not $(pick_port): PICKED must grow in this shell, not in a subshell).
PICKED=" "
pick_port() {
  local pp_port
  for _ in $(seq 1 200); do
    pp_port=$(( 20000 + (RANDOM * 32768 + RANDOM) % 12000 ))
    case "${PICKED}" in *" ${pp_port} "*) continue ;; esac
    port_in_use "${pp_port}" && continue
    PICKED+="${pp_port} "
    printf -v "$1" '%s' "${pp_port}"
    return 0
  done
  kd_die "no free port found"
}


# stop_component NAME PID SIGTERM|SIGKILL PORT: stops one component (SIGKILL: a crash) and waits
# until its port is free. stop_pids waits for an exiting process too (pid_exiting); the listener is
# checked as well, as binding the same port at once once failed with "address already in use".
stop_component() {
  if [ "$3" = SIGKILL ]; then
    kill -KILL "$2"
    STOP_TIMEOUT=0 stop_pids "$2" 2>/dev/null
  else
    stop_pids "$2"
  fi
  kd_wait_for "port $4 released" 15 port_released "$4" || kd_die "$1's port $4 is still bound after it stopped"
}
