#!/usr/bin/env bash
# environments.sh DIR [--short] — SAMBA on real daemons whose data owners are
# the organizations' own programs (the exec environment, docs/environments.md):
# K data owner daemons (default 10), each running
# examples/environments/samba_owner_sqlite.py over one SQLite table of the
# MovieLens arm data (data owner i answers from the i-th best movie: the same
# top-K arms as testnet/samba.sh), plus a data customer (node1), a controller
# (node2) and comp (node3); runs a session of budget N (default 10,000) with
# UCB, showing its progress and result as `session start --wait` does with
# simulated arms, checks it completed and that every data owner's program
# answered its pulls, and takes the testnet down.
#
#   testnet/environments.sh DIR            # K = 10, N = 10,000
#   testnet/environments.sh DIR --short    # K = 3, N = 2,000 (CI)
#   testnet/environments.sh DIR --bench [N] [REPS]
#
# --bench measures what the exec channel costs a step: K = 10 data owners
# answered by a minimal Go program (examples/environments/bernoulli_owner,
# built into DIR/bin: Bernoulli draws of the top-10 MovieLens means) against
# the daemons' own simulated arms of the same means, N steps (default
# 20,000), REPS repetitions (default 3), the two kinds of testnet taking
# turns, every daemon at GOMAXPROCS=$PROCS (default 1, as samba-bench.sh). Each
# session's ms per step is the controller's clock over the steps alone (the
# result's ms_per_step); it prints them and the ratio of the medians.
#
# Then, on the same testnet, a BAI session whose agents (the data owner
# daemons) each run examples/environments/bai_agent.sh, a POSIX-sh program
# answering every pull from a CSV log of observed rewards
# (examples/environments/bai_log.csv, replayed in order and started over when
# an arm's rewards run out): DP-MASE with K = 10 agents, the CENTRAL
# baseline (raw rewards to the coordinator) with the 3 agents of --short
# (DP-MASE's vote threshold needs more agents than 3). It must complete and
# name arm 0, the log's best.
#
# Needs python3 with its sqlite3 module (Debian: apt-get install -y python3),
# checked before anything is built. Ports: BANDIT_TESTNET_BASE_PORT
# (default 30000; see up.sh).
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
usage() { echo "usage: $0 DIR [--short | --bench [N] [REPS]]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dir=$1
shift
mode=full k=10 budget=10000 reps=3
case ${1:-} in
"") ;;
--short) mode=short k=3 budget=2000 ;;
--bench)
  mode=bench budget=${2:-20000} reps=${3:-3}
  [[ "$budget" =~ ^[0-9]+$ && "$reps" =~ ^[0-9]+$ && "$budget" -gt "$k" && "$reps" -ge 1 ]] || usage
  ;;
*) usage ;;
esac
export BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-30000}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
envdir=$root/examples/environments
means=$envdir/movielens_item_order.csv
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"

if [ "$mode" != bench ]; then
  if ! command -v python3 >/dev/null 2>&1; then
    echo "environments.sh: python3 missing: apt-get install -y python3 (the data owners' program, examples/environments/samba_owner_sqlite.py, is Python)" >&2
    exit 1
  fi
  if ! python3 -c 'import sqlite3' 2>/dev/null; then
    echo "environments.sh: python3's sqlite3 module missing: apt-get install -y python3 (Debian's python3 includes it)" >&2
    exit 1
  fi
fi

# owners_locals KIND: DIR/locals/nodeI.toml giving data owner daemon I its
# environment: "sqlite" the Python program over DIR/ratings.db, "go" the Go
# program DIR/bin/bernoulli_owner, "simulated" the Bernoulli means alone.
owners_locals() {
  local kind=$1 i top
  rm -rf "$dir/locals"
  mkdir -p "$dir/locals"
  top=$(awk -F, 'NR > 1 { print $2 }' "$means" | sort -gr | head -n "$k" | paste -sd, -)
  for i in $(seq 1 "$k"); do
    {
      echo "[local.samba.data_owner]"
      case $kind in
      sqlite)
        echo 'source = "exec"'
        echo "command = [\"python3\", \"$envdir/samba_owner_sqlite.py\", \"--db\", \"$dir/ratings.db\"]"
        echo "[local.bai.agent]"
        echo 'source = "exec"'
        echo "command = [\"sh\", \"$envdir/bai_agent.sh\", \"$envdir/bai_log.csv\", \"--wrap\"]"
        echo "rate = 2000"
        ;;
      go)
        echo 'source = "exec"'
        echo "command = [\"$dir/bin/bernoulli_owner\", \"-means\", \"$top\"]"
        ;;
      simulated)
        echo "bernoulli = $(echo "$top" | cut -d, -f"$i")"
        ;;
      esac
    } >"$dir/locals/node$((i + 3)).toml"
    if [ "$mode" = bench ] && [ "${PROCS:-1}" -gt 0 ]; then
      echo "GOMAXPROCS=${PROCS:-1}" >"$dir/locals/node$((i + 3)).env"
    fi
  done
  if [ "$mode" = bench ] && [ "${PROCS:-1}" -gt 0 ]; then
    for i in 1 2 3; do echo "GOMAXPROCS=${PROCS:-1}" >"$dir/locals/node$i.env"; done
  fi
}

# up KIND: a testnet of K + 3 daemons whose data owners are KIND (see
# owners_locals); the EXIT trap takes it down.
up() {
  owners_locals "$1"
  BANDIT_TESTNET_LOCAL="$dir/locals" "$here/up.sh" $((k + 3)) "$dir"
}
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true' EXIT

# ms_per_step SPEC: runs the session, fails unless it completed, prints its
# ID and the controller's ms per step.
ms_per_step() {
  local id ms
  if ! "$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$1" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/session.out" 2>&1; then
    echo "environments.sh: the session did not complete:" >&2
    tail -5 "$dir/session.out" >&2
    exit 1
  fi
  id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session.out")
  ms=$(awk -F': ' '/"ms_per_step"/ { gsub(/,/, "", $2); print $2; exit }' "$dir/session.out")
  [ -n "$ms" ] || { echo "environments.sh: session $id's result has no ms_per_step" >&2; exit 1; }
  echo "$id $ms"
}

if [ "$mode" = bench ]; then
  mkdir -p "$dir/bin"
  echo "building bandit-node and bernoulli_owner into $dir/bin ..." >&2
  (cd "$root" && go build -o "$dir/bin/bernoulli_owner" ./examples/environments/bernoulli_owner &&
    go build -o "$dir/bin/bandit-node.bench" ./cmd/bandit-node)
  # Every testnet of the bench runs this one build.
  export BANDIT_TESTNET_BIN=$dir/bin/bandit-node.bench
  samba_spec "$dir/samba.toml" "$k" "$budget" ucb
  echo "== SAMBA (ucb) K = $k, N = $budget: data owners answered by an exec program against simulated arms, $reps repetitions, GOMAXPROCS=${PROCS:-1} ==" >&2
  printf '%-4s %16s %16s %8s\n' rep simulated_ms exec_ms ratio
  rows=()
  for r in $(seq 1 "$reps"); do
    row=$r
    for kind in simulated go; do
      up "$kind" 2>/dev/null
      row="$row $(ms_per_step "$dir/samba.toml" | cut -d' ' -f2)"
      "$here/down.sh" "$dir" >/dev/null 2>&1
    done
    row=$(echo "$row" | awk '{ printf "%-4s %16.4f %16.4f %8.3f", $1, $2, $3, $3 / $2 }')
    echo "$row"
    rows+=("$row")
  done
  sim=$(median 2 "${rows[@]}") ex=$(median 3 "${rows[@]}")
  awk -v s="$sim" -v e="$ex" 'BEGIN { printf "med  %16.4f %16.4f %8.3f   (ratio of the medians; target ≤ 1.3)\n", s, e, e / s }'
  exit 0
fi

python3 "$envdir/samba_owner_sqlite.py" --db "$dir/ratings.db" --init-means "$means" --init-only
up sqlite
samba_spec "$dir/samba.toml" "$k" "$budget" ucb
echo "== SAMBA (ucb): K = $k data owners, each a Python program over an SQLite table of the MovieLens arms, N = $budget ==" >&2
start=$(date +%s.%N)
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/samba.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" \
  2> >(tee "$dir/session.err" >&2) | sed -n '/^SAMBA/,$p'
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" -v n="$budget" 'BEGIN { printf "session wall time %.1f s (%.2f ms per step)\n", e - s, 1000 * (e - s) / n }'
id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session.err")
[ -n "$id" ] || { echo "environments.sh: no session was proposed" >&2; exit 1; }
state=$("$dir/bin/bandit-node" session status --config "$dir/node1/config.toml" "$id" --json | awk -F'"' '/"state"/ { print $4; exit }')
if [ "$state" != completed ]; then
  echo "environments.sh: the SAMBA session $id ended $state" >&2
  exit 1
fi
# The pulls each data owner's program answered, from its record: one a
# step in all.
total=0
for i in $(seq 4 $((k + 3))); do
  pulls=$("$dir/bin/bandit-node" session result --config "$dir/node$i/config.toml" "$id" --json 2>/dev/null |
    awk -F': ' '/"pulls"/ { gsub(/,/, "", $2); print $2; exit }')
  echo "data owner node$i: its program answered ${pulls:-?} pulls"
  total=$((total + ${pulls:-0}))
done
if [ "$total" -ne "$budget" ]; then
  echo "environments.sh: the data owners' programs answered $total pulls; the budget is $budget" >&2
  exit 1
fi

alg=dp_mase
[ "$mode" = short ] && alg=central
agents=$(seq -f '"node%g"' 4 $((k + 3)) | paste -sd, -)
cat >"$dir/bai.toml" <<SPEC
protocol = "bai"
[roles]
coordinator = "node1"
agent = [$agents]
[params]
algorithm = "$alg"
arms = 10
delta = 0.05
beta = 0.5
epsilon = 0.1
SPEC
echo "== BAI ($alg): $k agents, each a shell program answering from a CSV log of observed rewards ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/bai.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/bai.json" 2>"$dir/bai.err" || true
grep -E '"(state|reason|best_arm|sample_complexity)"' "$dir/bai.json" | sed 's/^ */  /'
if ! grep -q '"state": "completed"' "$dir/bai.json" || ! grep -q '"best_arm": 0,' "$dir/bai.json"; then
  echo "environments.sh: the BAI session did not complete naming arm 0 (see $dir/bai.json, $dir/bai.err)" >&2
  exit 1
fi
