#!/usr/bin/env bash
# down.sh DIR — stop exactly the daemons that testnet/up.sh started under DIR
# (by their recorded PIDs), gracefully (SIGTERM, then SIGKILL after 20 s), and
# keep their logs (DIR/node*/daemon.log) and results. All daemons are
# signalled first and then waited for together, and down.sh returns only
# once every one has exited: stopping a 103-daemon testnet one daemon at a
# time took minutes, and a testnet started on the same ports meanwhile
# collided with the daemons still running.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(cd "$1" && pwd)
status=0
declare -A running=() # pid -> pid file
for pidfile in "$dir"/node*/pid; do
  [ -e "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  # Only signal the process if it is still the daemon we started.
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$dir/"; then
    kill -TERM "$pid" 2>/dev/null || true
    running[$pid]=$pidfile
  else
    rm -f "$pidfile"
  fi
done
for _ in $(seq 1 200); do
  for pid in "${!running[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "${running[$pid]}"
      unset "running[$pid]"
    fi
  done
  [ ${#running[@]} -eq 0 ] && break
  sleep 0.1
done
for pid in "${!running[@]}"; do
  echo "down.sh: $(basename "$(dirname "${running[$pid]}")") (pid $pid) ignored SIGTERM for 20s; killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "${running[$pid]}"
  status=1
done
echo "testnet in $dir stopped; logs kept in $dir/node*/daemon.log" >&2
exit $status
