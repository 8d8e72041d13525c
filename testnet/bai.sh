#!/usr/bin/env bash
# bai.sh [DIR] [AGENTS] — multi-agent best-arm identification on real daemons:
# a testnet of 1 coordinator (node1) and AGENTS agent daemons (default 16),
# each agent with its own copy of the paper's Problem 1 in its config, runs
# DP-MASE and Corrupted Elimination, prints both results and takes the testnet
# down. Exits non-zero unless both sessions return the best arm (arm 0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-bai.XXXXXX)}
agents=${2:-16}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

BANDIT_TESTNET_LOCAL="$here/problem1-agent.toml" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-26000} \
  "$here/up.sh" $((agents + 1)) "$dir"
trap '"$here/down.sh" "$dir"' EXIT

names=$(seq -f '"node%g"' 2 $((agents + 1)) | paste -sd, -)
status=0
for algo in dp_mase corrupted_elimination; do
  # M must stay well below the number of agents: DP-MASE δ = 0.05, β = 0.5
  # gives M = 5; Corrupted Elimination η = 0.9, ξ = 0.15 gives η_ξ = 0.568,
  # M = 6. (With ξ = 0.1, M = 11 of 16 agents, every agent can stop before an
  # arm gathers 12 uncorrupted votes, and the session then ends without an
  # answer: "every agent stopped before the global set held one arm".)
  cat >"$dir/bai-$algo.toml" <<SPEC
protocol = "bai"
[roles]
coordinator = "node1"
agent = [$names]
[params]
algorithm = "$algo"
arms = 10
delta = 0.05
beta = 0.5
epsilon = 0.1
eta = 0.9
xi = 0.15
SPEC
  echo "== $algo: 1 coordinator, $agents agents ==" >&2
  start=$(date +%s.%N)
  "$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/bai-$algo.toml" --wait --json >"$dir/result-$algo.json" || true
  end=$(date +%s.%N)
  grep -E '"(state|reason|best_arm|sample_complexity|threshold_m|votes|privacy)"' "$dir/result-$algo.json" | sed 's/^ */  /'
  interactions=$(grep -o '"sample_complexity": [0-9]*' "$dir/result-$algo.json" | grep -o '[0-9]*$' || echo 0)
  awk -v n="$interactions" -v s="$start" -v e="$end" 'BEGIN { printf "  %.0f interactions per second over the session (%.1f s)\n", n / (e - s), e - s }'
  if ! grep -q '"best_arm": 0,' "$dir/result-$algo.json"; then
    echo "bai.sh: $algo did not return the best arm" >&2
    status=1
  fi
done
exit $status
