# Stopping the servers a test script started. Sourced; the caller defines
# owns PID DIR (true when PID is alive and one of DIR's processes) and log MESSAGE.

# True while PID exists and is not a zombie. A process's command line reads empty from
# the moment it releases its memory, before it has closed its files and sockets, so
# owns() alone would call an exiting server gone while it still holds its port.
running() { # pid
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
  stat="${stat##*) }"
  [[ "${stat%% *}" != Z ]]
}

# Waits up to TENTHS tenths of a second for PID to be gone; false if it still runs.
gone_within() { # pid tenths
  local i
  for ((i = 0; i < $2; i++)); do
    running "$1" || return 0
    sleep 0.1
  done
  return 1
}

# SIGTERM, 15 s to exit, then SIGKILL and 5 s more. Returns 1 if it still runs.
stop_owned() { # pid dir name
  local pid="$1" dir="$2" name="$3"
  owns "$pid" "$dir" || return 0
  kill -TERM "$pid" 2>/dev/null || true
  gone_within "$pid" 150 && return 0
  log "$name (pid $pid) ignored SIGTERM for 15s, killing"
  kill -KILL "$pid" 2>/dev/null || true
  gone_within "$pid" 50 && return 0
  log "$name (pid $pid) did not exit"
  return 1
}
