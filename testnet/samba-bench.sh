#!/usr/bin/env bash
# samba-bench.sh [DIR] [K] [N] [ALGORITHM] [REPS] — SAMBA on K+3 daemon
# processes against the bare message pattern, side by side in the same run.
#
# Starts a testnet like samba.sh (a data customer, a controller, comp and K
# data owners on the top-K MovieLens means; every daemon at GOMAXPROCS=$PROCS,
# default 1: K+3 processes share this machine's cores, and a Go process with
# more Ps than it can use spins looking for work), then REPS times (default
# 3), one after the other:
#   - a SAMBA session of budget 200, which times the setup;
#   - the bare pattern of N/2 steps, every party its own process at the same
#     GOMAXPROCS (`bandit-node bench pattern --processes`);
#   - a SAMBA session of budget N (ALGORITHM, default ucb), timed by the
#     data customer's daemon from its creation to its end: proposal, setup
#     (Paillier keys, the AES key, the seeds) and N steps;
#   - the bare pattern of N/2 steps again. Its time is the mean of the two
#     halves, run before and after the session: the speed of a shared
#     machine drifts from minute to minute (a loaded 2-core VM: by a third
#     within a repetition), and a drift that is steady over the repetition
#     cancels out.
# Prints one line per repetition and the medians: the session's ms per step
# over all its wall time and over its steps alone ((T(N) - T(200)) / (N - 200)),
# the ratio of the latter to the bare pattern, and the drift: the second bare
# half's ms per step over the first's (far from 1, the machine's speed
# changed during the repetition and its ratio says little). Then the cost in
# CPU time, which the scheduler's luck on a shared machine moves less than
# the wall time: idle_cpu, the CPU seconds a second the idle testnet's
# daemons use beside the bare pattern (their timers, pings, gossip); the bare
# pattern's CPU ms per step, all its processes during its timed steps; the
# session's, all the daemons over (N - 200) steps as above, less the idle
# testnet's rate over the same wall time; and their ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-sambabench.XXXXXX)}
k=${2:-10}
n=${3:-10000}
algo=${4:-ucb}
reps=${5:-3}
procs=${PROCS:-1}
small=200
[ "$n" -gt "$small" ] || { echo "samba-bench.sh: N must exceed $small, got $n" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
samba_locals "$dir" "$k"
if [ "$procs" -gt 0 ]; then
  for i in $(seq 1 $((k + 3))); do echo "GOMAXPROCS=$procs" >"$dir/locals/node$i.env"; done
fi
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true' EXIT
BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000} "$here/up.sh" $((k + 3)) "$dir"
bin=$dir/bin/bandit-node

for budget in "$n" "$small"; do
  samba_spec "$dir/samba-$budget.toml" "$k" "$budget" "$algo"
done

# daemons_cpu: the CPU seconds (user and system) all the testnet's daemons
# have used so far.
daemons_cpu() {
  local i total=0 f
  for i in $(seq 1 $((k + 3))); do
    read -r -a f <"/proc/$(cat "$dir/node$i/pid")/stat"
    total=$((total + f[13] + f[14]))
  done
  awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

# session BUDGET: "RECORD CPU WALL" for one SAMBA session: its seconds from
# its creation to its end as the data customer's daemon recorded them, the
# CPU seconds all the daemons used meanwhile, and the wall seconds of that
# CPU measurement (the whole `session start --wait`).
session() {
  local id times c0 c1 w0 w1 rec
  c0=$(daemons_cpu)
  w0=$(date +%s.%N)
  if ! "$bin" session start --config "$dir/node1/config.toml" "$dir/samba-$1.toml" --wait >"$dir/session-$1.out" 2>&1; then
    echo "samba-bench.sh: the SAMBA session of budget $1 failed:" >&2
    tail -5 "$dir/session-$1.out" >&2
    exit 1
  fi
  w1=$(date +%s.%N)
  c1=$(daemons_cpu)
  id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session-$1.out")
  times=$("$bin" session status --config "$dir/node1/config.toml" "$id" --json |
    awk -F'"' '/"created"|"finished"/ { print $4 }')
  # shellcheck disable=SC2086
  set -- $times
  rec=$(awk -v s="$(date -d "$1" +%s.%N)" -v e="$(date -d "$2" +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
  echo "$rec $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }') $(awk -v a="$w0" -v b="$w1" 'BEGIN { printf "%.3f", b - a }')"
}

# bare STEPS: "MS CPU IDLE WALL" for the bare pattern of STEPS steps: its ms
# per step, the CPU ms per step of all its processes during the timed steps,
# and the CPU seconds the (idle) testnet's daemons used beside it over WALL
# seconds.
bare() {
  local c0 c1 w0 w1 out
  c0=$(daemons_cpu)
  w0=$(date +%s.%N)
  out=$("$bin" bench pattern --processes --k "$k" --steps "$1" --procs "$procs" --json)
  w1=$(date +%s.%N)
  c1=$(daemons_cpu)
  echo "$out" | awk -v steps="$1" -v c0="$c0" -v c1="$c1" -v w0="$w0" -v w1="$w1" -F': ' '
    /"ms_per_step"/ { gsub(/,/, "", $2); ms = $2 }
    /"steps_cpu_seconds"/ { in_cpu = 1; next }
    in_cpu && /}/ { in_cpu = 0 }
    in_cpu { gsub(/,/, "", $2); cpu += $2 }
    END { printf "%s %.6f %.2f %.3f\n", ms, 1000 * cpu / steps, c1 - c0, w1 - w0 }'
}

echo "== SAMBA ($algo) on $((k + 3)) daemons vs the bare message pattern: K = $k, N = $n, every process at GOMAXPROCS=$procs, $reps repetitions ==" >&2
printf '%-4s %14s %14s %12s %16s %16s %8s %8s %10s %10s %10s %8s\n' rep bare_ms/step samba_wall_s setup_s samba_ms/step steps_ms/step ratio drift idle_cpu bare_cpu samba_cpu cpu_ratio
rows=()
for r in $(seq 1 "$reps"); do
  read -r setup setup_cpu setup_wall < <(session "$small")
  read -r before before_cpu before_idle before_wall < <(bare $((n / 2)))
  read -r wall wall_cpu wall_wall < <(session "$n")
  read -r after after_cpu after_idle after_wall < <(bare $((n / 2)))
  row=$(awk -v r="$r" -v w="$wall" -v s="$setup" -v n="$n" -v m="$small" -v b1="$before" -v b2="$after" \
    -v bc1="$before_cpu" -v bc2="$after_cpu" -v i1="$before_idle" -v i2="$after_idle" -v iw1="$before_wall" -v iw2="$after_wall" \
    -v sc="$wall_cpu" -v sw="$wall_wall" -v tc="$setup_cpu" -v tw="$setup_wall" 'BEGIN {
    b = (b1 + b2) / 2
    steps = 1000 * (w - s) / (n - m)
    idle = (i1 + i2) / (iw1 + iw2)
    bcpu = (bc1 + bc2) / 2
    scpu = 1000 * ((sc - idle * sw) - (tc - idle * tw)) / (n - m)
    printf "%-4s %14.3f %14.2f %12.2f %16.3f %16.3f %8.2f %8.2f %10.2f %10.3f %10.3f %8.2f", r, b, w, s, 1000 * w / n, steps, steps / b, b2 / b1, idle, bcpu, scpu, scpu / bcpu }')
  echo "$row"
  rows+=("$row")
done
# median COLUMN: the median of a column of the rows.
median() {
  printf '%s\n' "${rows[@]}" | awk -v c="$1" '{ print $c }' | sort -g | awk '
    { v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-4s %14.3f %14.2f %12.2f %16.3f %16.3f %8.2f %8.2f %10.2f %10.3f %10.3f %8.2f\n' med "$(median 2)" "$(median 3)" "$(median 4)" "$(median 5)" "$(median 6)" "$(median 7)" "$(median 8)" "$(median 9)" "$(median 10)" "$(median 11)" "$(median 12)"
