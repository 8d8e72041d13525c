#!/usr/bin/env bash
# samba.sh [DIR] [K] [N] [ALGORITHM] [BATCH] — SAMBA on real daemons: K data owner
# daemons (default 10), each holding one of the paper's MovieLens arm means
# (the top K, as protocol/samba/testdata) in its own config, plus a data customer
# (node1), a controller (node2) and comp (node3); runs a session of budget N
# (default 10,000) with ALGORITHM (default ucb), prints the data customer's
# cumulative reward and the per-role costs, and takes the testnet down.
# BATCH (default 1, the paper's protocol) is params.batch: B decisions a
# round.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-samba.XXXXXX)}
k=${2:-10}
budget=${3:-10000}
algo=${4:-ucb}
batch=${5:-1}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
samba_locals "$dir" "$k"
BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000} "$here/up.sh" $((k + 3)) "$dir"
trap '"$here/down.sh" "$dir"' EXIT

samba_spec "$dir/samba.toml" "$k" "$budget" "$algo" "$batch"
echo "== SAMBA ($algo): K = $k data owners on the MovieLens means, N = $budget, batch B = $batch ==" >&2
start=$(date +%s.%N)
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/samba.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" | sed -n '/^SAMBA/,$p'
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$budget" 'BEGIN { printf "session wall time %.1f s (%.2f ms per step)\n", e - s, 1000 * (e - s) / n }'
