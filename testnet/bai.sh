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
# shellcheck source=testnet/protocols-lib.sh
. "$here/protocols-lib.sh"
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

BANDIT_TESTNET_LOCAL="$here/problem1-agent.toml" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-26000} \
  "$here/up.sh" $((agents + 1)) "$dir"
trap '"$here/down.sh" "$dir"' EXIT

status=0
for algo in dp_mase corrupted_elimination; do
  bai_spec "$dir/bai-$algo.toml" "$algo" 1 2 $((agents + 1))
  echo "== $algo: 1 coordinator, $agents agents ==" >&2
  start=$(date +%s.%N)
  "$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/bai-$algo.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/result-$algo.json" || true
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
