#!/usr/bin/env bash
# down.sh DIR — stop exactly the daemons that testnet/up.sh started under DIR
# (by their recorded PIDs), gracefully (SIGTERM, then SIGKILL after 20 s), and
# keep their logs (DIR/node*/daemon.log) and results.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$(cd "$1" && pwd)
status=0
for pidfile in "$dir"/node*/pid; do
  [ -e "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  # Only signal the process if it is still the daemon we started.
  if kill -0 "$pid" 2>/dev/null && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$dir/"; then
    kill -TERM "$pid"
    for _ in $(seq 1 200); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "down.sh: $(basename "$(dirname "$pidfile")") (pid $pid) ignored SIGTERM for 20s; killing it" >&2
      kill -KILL "$pid" || true
      status=1
    fi
  fi
  rm -f "$pidfile"
done
echo "testnet in $dir stopped; logs kept in $dir/node*/daemon.log" >&2
exit $status
