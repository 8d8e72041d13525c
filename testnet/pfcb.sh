#!/usr/bin/env bash
# pfcb.sh [DIR] [AGENTS] — P-FCB on real daemons: AGENTS agent daemons
# (default 5) buy from m = 10 producers for T = 20,000 rounds; every agent has
# its own costs and capacities in its config (drawn here, as in the paper's
# uniform setup) and the producers' true qualities for its simulated
# environment. Prints the result and each agent's stored regret and
# procurement totals, and takes the testnet down. Exits non-zero unless the
# session completes and every agent stored its outcome.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-pfcb.XXXXXX)}
n=${2:-5}
m=10
# shellcheck source=testnet/protocols-lib.sh
. "$here/protocols-lib.sh"
mkdir -p "$dir/locals"
dir=$(cd "$dir" && pwd)

rm -rf "$dir/locals"
"$here/pfcb-locals.sh" "$dir/locals" "$n" "$m"
BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-27000} "$here/up.sh" "$n" "$dir"
trap '"$here/down.sh" "$dir"' EXIT

pfcb_spec "$dir/pfcb.toml" "$n" 20000
echo "== P-FCB: $n agents, $m producers, 20,000 rounds ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/pfcb.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/result.json" || true
grep -E '"(state|reason|regret_per_agent|total_regret|constraint_violations|epsilon_total|delta_total)"' "$dir/result.json" | sed 's/^ */  /'
grep -q '"state": "completed"' "$dir/result.json" || { echo "pfcb.sh: the session did not complete" >&2; exit 1; }
id=$(grep -o '"id": "[0-9a-f]*"' "$dir/result.json" | head -1 | grep -o '[0-9a-f]\{16\}')
status=0
for i in $(seq 1 "$n"); do
  local_json=$("$dir/bin/bandit-node" session result --config "$dir/node$i/config.toml" "$id" --json)
  if echo "$local_json" | grep -q '"procured"'; then
    echo "  node$i stored: $(echo "$local_json" | tr -d '\n ' | grep -o '"regret":[^,]*,"constraint_violations":[0-9]*,"rounds":[0-9]*,"procured":\[[0-9,]*\]')"
  else
    echo "pfcb.sh: node$i stored no outcome" >&2
    status=1
  fi
done
exit $status
