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
# changed during the repetition and its ratio says little).
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

# session BUDGET: the seconds of one SAMBA session, from its creation to its
# end as the data customer's daemon recorded them.
session() {
  local id times
  if ! "$bin" session start --config "$dir/node1/config.toml" "$dir/samba-$1.toml" --wait >"$dir/session-$1.out" 2>&1; then
    echo "samba-bench.sh: the SAMBA session of budget $1 failed:" >&2
    tail -5 "$dir/session-$1.out" >&2
    exit 1
  fi
  id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session-$1.out")
  times=$("$bin" session status --config "$dir/node1/config.toml" "$id" --json |
    awk -F'"' '/"created"|"finished"/ { print $4 }')
  # shellcheck disable=SC2086
  set -- $times
  awk -v s="$(date -d "$1" +%s.%N)" -v e="$(date -d "$2" +%s.%N)" 'BEGIN { printf "%.3f", e - s }'
}

# bare STEPS: the bare pattern's ms per step over STEPS steps.
bare() {
  "$bin" bench pattern --processes --k "$k" --steps "$1" --procs "$procs" --json | awk -F': ' '/"ms_per_step"/ { gsub(/,/, "", $2); print $2 }'
}

echo "== SAMBA ($algo) on $((k + 3)) daemons vs the bare message pattern: K = $k, N = $n, every process at GOMAXPROCS=$procs, $reps repetitions ==" >&2
printf '%-4s %14s %14s %12s %16s %16s %8s %8s\n' rep bare_ms/step samba_wall_s setup_s samba_ms/step steps_ms/step ratio drift
rows=()
for r in $(seq 1 "$reps"); do
  setup=$(session "$small")
  before=$(bare $((n / 2)))
  wall=$(session "$n")
  after=$(bare $((n / 2)))
  bare=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.6f", (a + b) / 2 }')
  row=$(awk -v r="$r" -v b="$bare" -v w="$wall" -v s="$setup" -v n="$n" -v m="$small" -v b1="$before" -v b2="$after" 'BEGIN {
    steps = 1000 * (w - s) / (n - m)
    printf "%-4s %14.3f %14.2f %12.2f %16.3f %16.3f %8.2f %8.2f", r, b, w, s, 1000 * w / n, steps, steps / b, b2 / b1 }')
  echo "$row"
  rows+=("$row")
done
# median COLUMN: the median of a column of the rows.
median() {
  printf '%s\n' "${rows[@]}" | awk -v c="$1" '{ print $c }' | sort -g | awk '
    { v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
printf '%-4s %14.3f %14.2f %12.2f %16.3f %16.3f %8.2f %8.2f\n' med "$(median 2)" "$(median 3)" "$(median 4)" "$(median 5)" "$(median 6)" "$(median 7)" "$(median 8)"
