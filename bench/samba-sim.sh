#!/usr/bin/env bash
# samba-sim.sh [ALGORITHMS] — SAMBA's simulation time (full cryptography,
# 2048-bit Paillier, in-memory transport) as the budget N and the number of
# data owners K grow: the paper's Figure 8 (a) and (b). The arms are the top K
# MovieLens means (protocol/samba/testdata). Prints two Markdown tables of
# `bandit-node simulate --json`'s elapsed_seconds and, for the largest run of
# each algorithm, its per-role time (role_seconds: the paper's Figure 8 (d)).
#
#   bench/samba-sim.sh                  # ucb
#   bench/samba-sim.sh "ucb pursuit"
#
# N and K are taken from $NS (default "10000 25000 50000 100000") and $KS
# (default "10 25 50 100").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
algos=${1:-ucb}
ns=${NS:-10000 25000 50000 100000}
ks=${KS:-10 25 50 100}
work=$(mktemp -d -t samba-sim.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/bandit-node" ./cmd/bandit-node)
means="$root/protocol/samba/testdata/movielens_K100_sorted_desc.csv"

# run ALGORITHM K N: prints elapsed_seconds; keeps the JSON in $work/last.json.
run() {
  local arms
  arms=$(awk -F, -v k="$2" 'NR > 1 && NR <= k + 1 { printf "%s%s", (NR > 2 ? ", " : ""), $2 }' "$means")
  cat >"$work/spec.toml" <<SPEC
protocol = "samba"
[params]
algorithm = "$1"
budget = $3
[simulation]
arms = [$arms]
seed = 1
SPEC
  "$work/bandit-node" simulate "$work/spec.toml" --json >"$work/last.json"
  tr -d ' \n' <"$work/last.json" | grep -o '"elapsed_seconds":[0-9.e+-]*' | cut -d: -f2 | awk '{ printf "%.2f", $1 }'
}

kmax=$(echo "$ks" | tr ' ' '\n' | sort -n | tail -1)
nmax=$(echo "$ns" | tr ' ' '\n' | sort -n | tail -1)
for algo in $algos; do
  echo "### $algo: seconds as N grows (Figure 8a)"
  echo
  printf '| K |'; for n in $ns; do printf ' N = %s |' "$n"; done; echo
  printf '| --- |'; for _ in $ns; do printf ' --- |'; done; echo
  for k in 10 "$kmax"; do
    printf '| %s |' "$k"; for n in $ns; do printf ' %s |' "$(run "$algo" "$k" "$n")"; done; echo
  done
  echo
  echo "### $algo: seconds as K grows, N = $nmax (Figure 8b)"
  echo
  printf '| N |'; for k in $ks; do printf ' K = %s |' "$k"; done; echo
  printf '| --- |'; for _ in $ks; do printf ' --- |'; done; echo
  printf '| %s |' "$nmax"; for k in $ks; do printf ' %s |' "$(run "$algo" "$k" "$nmax")"; done; echo
  echo
  echo "per-role seconds of the last run (K = $kmax, N = $nmax; Figure 8d):"
  tr -d ' \n' <"$work/last.json" | grep -o '"role_seconds":{[^}]*}' | sed 's/"role_seconds"://'
  echo
done
