#!/usr/bin/env bash
# samba-floor.sh [N] [SHORT] — `bandit-node simulate` of SAMBA (UCB, K = 100
# MovieLens arms, 2048-bit Paillier, the command's own driver and GC setting)
# against its AES-GCM floor, both as CPU time (user + system), in one run:
# the floor is BenchmarkAESFloor (protocol/samba: exactly the 4K envelope
# seals and opens of one step, on buffers of the session's sizes), per step;
# the session is timed by /usr/bin/time at budget N (default 100000) and at
# budget SHORT (default 1000), so that the steps alone are (N − SHORT)
# steps' difference, the set-up (Paillier keys, the first K pulls, the final
# sum) left out. Prints both ratios: the whole command's and the steps'.
# With GOMAXPROCS=1 in the environment simulate runs the sequential driver
# (one worker) instead of the parallel one.
#
#   bench/samba-floor.sh              # N = 100,000
#   bench/samba-floor.sh 20000
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-100000}
short=${2:-1000}
work=$(mktemp -d -t samba-floor.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/bandit-node" ./cmd/bandit-node && go test -c -o "$work/samba.test" ./protocol/samba/)
means="$root/protocol/samba/testdata/movielens_K100_sorted_desc.csv"
arms=$(awk -F, 'NR > 1 && NR <= 101 { printf "%s%s", (NR > 2 ? ", " : ""), $2 }' "$means")

# cpu BUDGET: the CPU seconds (user + sys) of simulate at that budget.
cpu() {
  cat >"$work/spec.toml" <<SPEC
protocol = "samba"
[params]
algorithm = "ucb"
budget = $1
[simulation]
arms = [$arms]
seed = 1
SPEC
  /usr/bin/time -f '%U %S' -o "$work/time" "$work/bandit-node" simulate "$work/spec.toml" --json >"$work/out.json"
  awk '{ printf "%.3f", $1 + $2 }' "$work/time"
}

long_s=$(cpu "$n")
short_s=$(cpu "$short")
floor_ms=$(cd "$work" && ./samba.test -test.run '^$' -test.bench '^BenchmarkAESFloor$' -test.benchtime 20000x |
  awk '/BenchmarkAESFloor/ { for (i = 1; i < NF; i++) if ($(i + 1) == "cpu-ms/step") print $i }')
awk -v n="$n" -v s="$short" -v l="$long_s" -v sh="$short_s" -v f="$floor_ms" 'BEGIN {
  printf "simulate N = %d: %.2f s CPU (N = %d: %.2f s); AES floor %.4f ms a step (%.2f s for N)\n", n, l, s, sh, f, f * n / 1000
  printf "ratio, whole command: %.2f; steps alone ((N - %d) steps): %.2f\n", l / (f * n / 1000), s, (l - sh) / (f * (n - s) / 1000)
}'
