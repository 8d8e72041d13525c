#!/usr/bin/env bash
# mpccb.sh [DIR] [STEPS] [P] [ARMS] — the private contextual bandit on real
# daemons: P feature-party daemons (default 2), each reading its own columns
# of Fashion-MNIST from its own file, then p′ (arm puller), p″ (reward
# receiver, the labels as a reward table) and the dealer, one daemon each;
# runs STEPS steps (default 1,000), prints the result with the time per step,
# and takes the testnet down. ARMS > 10 switches to the synthetic data set
# (k-means arms). Needs the Debian package dataset-fashion-mnist.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-mpccb.XXXXXX)}
steps=${2:-1000}
p=${3:-2}
arms=${4:-10}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
n=$((p + 3))
set_name=fashion-mnist
[ "$arms" -ne 10 ] && set_name=synthetic
# Build the binary once (up.sh reuses it) to prepare the data.
mkdir -p "$dir/bin"
(cd "$here/.." && go build -o "$dir/bin/bandit-node" ./cmd/bandit-node)
"$dir/bin/bandit-node" data mpccb --out "$dir/data" --parties "$p" --dataset "$set_name" --arms "$arms" --steps "$steps"
# shellcheck source=testnet/protocols-lib.sh
. "$here/protocols-lib.sh"
rm -rf "$dir/locals"
mpccb_locals "$dir/locals" "$dir/data" "$p"
BANDIT_TESTNET_BIN="$dir/bin/bandit-node" BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-29000} "$here/up.sh" "$n" "$dir"
trap '"$here/down.sh" "$dir"' EXIT

mpccb_spec "$dir/mpccb.toml" "$p" "$steps" "$arms"
echo "== private contextual bandit: $p feature parties, $arms arms, $steps steps ($set_name) ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/mpccb.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/result.json"
grep -q '"state": "completed"' "$dir/result.json" || { echo "mpccb.sh: the session did not complete:" >&2; cat "$dir/result.json" >&2; exit 1; }
grep -E '"(average_reward|rounds_per_step|bytes_per_step|dealer_bytes_per_step|session_ms_per_step)"' "$dir/result.json" | sed 's/^ *//'
