#!/usr/bin/env bash
# demo.sh — bring up a 5-node testnet on loopback, run a ping session from
# node1 (every node measures its round-trip time to every other), print the
# latency matrix, and take the testnet down again.
#
#   testnet/demo.sh            # DIR defaults to a fresh temporary directory
#   testnet/demo.sh DIR N      # use DIR and N nodes
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-testnet.XXXXXX)}
n=${2:-5}

"$here/up.sh" "$n" "$dir"
trap '"$here/down.sh" "$dir"' EXIT

names=$(seq -f '"node%g"' 1 "$n" | paste -sd, -)
cat >"$dir/ping.toml" <<SPEC
protocol = "ping"
[roles]
participant = [$names]
[params]
count = 100
SPEC

echo "== ping session among $n daemons, started at node1 ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/ping.toml" --wait
echo "== the same, as JSON (session start --wait --json) ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/ping.toml" --wait --json >"$dir/result.json"
grep -q '"state": "completed"' "$dir/result.json" || { echo "demo.sh: the session did not complete:" >&2; cat "$dir/result.json" >&2; exit 1; }
echo "result written to $dir/result.json" >&2
