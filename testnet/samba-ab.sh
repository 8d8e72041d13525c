#!/usr/bin/env bash
# samba-ab.sh BIN_A BIN_B [DIR] [K] [N] [SESSIONS] — compare two builds of
# bandit-node on SAMBA's hot path, side by side in the same sessions, so
# that the machine's drift cancels out.
#
# Starts a testnet of K + 3 daemons (default K = 100; node1 the data
# customer, node2 the controller, node3 comp, the others the data owners, on
# the top-K MovieLens means) from BIN_A, every daemon at GOMAXPROCS=$PROCS
# (default 1), and restarts every other data owner (nodes 4, 6, 8, …) from
# BIN_B. Then SESSIONS times (default 10) it runs a SAMBA session (UCB,
# budget N, default 5000), restarting the controller and comp between
# sessions so that they run BIN_B in the odd sessions and BIN_A in the even
# ones.
#
# The data owners of both builds run in every session, at the same moments,
# under the same load: their CPU time per step (the whole session's, setup
# and end included, which are the same work for both builds) compares the
# builds where a ratio against the bare pattern cannot. On a loaded 2-core
# machine whose speed swings by a third within minutes, the owners' B/A
# moves by about 1 % from session to session, a ratio to the bare pattern by
# 10 %. The controller's and comp's builds alternate from session to
# session, so their comparison is only as good as two sessions in a row are
# alike.
#
# Prints one line per session — the controller's build, its ms per step
# over the steps (the result's ms_per_step), the CPU µs per step of the
# controller, of comp, and of an average data owner of each build, and the
# owners' B/A — then the medians, with an interval for the owners' B/A
# median (order statistics, ≥ 90 % coverage, 5 sessions or more).
#
#   git worktree add /tmp/base main && (cd /tmp/base && go build -o /tmp/bn-a ./cmd/bandit-node)
#   go build -o /tmp/bn-b ./cmd/bandit-node
#   BANDIT_TESTNET_BASE_PORT=30000 testnet/samba-ab.sh /tmp/bn-a /tmp/bn-b /tmp/ab 100 5000 10
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
[ $# -ge 2 ] || { echo "usage: $0 BIN_A BIN_B [DIR] [K] [N] [SESSIONS]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
for b in "$1" "$2"; do
  [ -x "$b" ] || { echo "samba-ab.sh: $b is not an executable bandit-node binary" >&2; exit 2; }
done
dir=${3:-$(mktemp -d -t bandit-sambaab.XXXXXX)}
k=${4:-100}
n=${5:-5000}
sessions=${6:-10}
procs=${PROCS:-1}
[ "$k" -ge 2 ] || { echo "samba-ab.sh: K must be at least 2 (a data owner of each build), got $k" >&2; exit 2; }
[ "$sessions" -ge 2 ] || { echo "samba-ab.sh: SESSIONS must be at least 2 (one with the controller on each build), got $sessions" >&2; exit 2; }
[ "$n" -gt "$k" ] || { echo "samba-ab.sh: N must exceed K (the session needs steps of its own), got N = $n, K = $k" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# Both builds run from inside DIR, so that down.sh recognises every daemon.
mkdir -p "$dir/bin"
cp "$1" "$dir/bin/bandit-node-a"
cp "$2" "$dir/bin/bandit-node-b"
binA=$dir/bin/bandit-node-a binB=$dir/bin/bandit-node-b
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
samba_locals "$dir" "$k"
if [ "$procs" -gt 0 ]; then
  for i in $(seq 1 $((k + 3))); do echo "GOMAXPROCS=$procs" >"$dir/locals/node$i.env"; done
fi
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true' EXIT
BANDIT_TESTNET_BIN=$binA BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000} "$here/up.sh" $((k + 3)) "$dir"
samba_spec "$dir/samba-$n.toml" "$k" "$n" ucb

ownersA=$(seq -s ' ' 5 2 $((k + 3)))
ownersB=$(seq -s ' ' 4 2 $((k + 3)))

# restart BIN NODE...: stop the nodes, start them again from BIN with their
# environment, and wait until each is connected to every other daemon.
restart() {
  local bin=$1 i pid envs connected deadline
  shift
  for i in "$@"; do kill -TERM "$(cat "$dir/node$i/pid")"; done
  for i in "$@"; do
    pid=$(cat "$dir/node$i/pid")
    deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || { echo "samba-ab.sh: node$i did not stop within 30 s" >&2; exit 1; }
      sleep 0.1
    done
  done
  for i in "$@"; do
    envs=()
    [ -f "$dir/locals/node$i.env" ] && mapfile -t envs <"$dir/locals/node$i.env"
    env ${envs[@]+"${envs[@]}"} nohup "$bin" run --config "$dir/node$i/config.toml" >>"$dir/node$i/daemon.log" 2>&1 &
    echo $! >"$dir/node$i/pid"
  done
  deadline=$((SECONDS + 60 + 2 * k))
  for i in "$@"; do
    while :; do
      connected=$("$bin" peers --config "$dir/node$i/config.toml" --json 2>/dev/null | grep -c '"connected": true' || true)
      [ "$connected" -ge $((k + 2)) ] && break
      [ $SECONDS -lt $deadline ] || { echo "samba-ab.sh: node$i has $connected of $((k + 2)) peers connected after its restart; logs in $dir/node$i/daemon.log" >&2; exit 1; }
      sleep 0.2
    done
  done
}

# cpu NODE...: the CPU clock ticks (user and system) the nodes have used.
cpu() {
  local i f t=0
  for i in "$@"; do
    read -r -a f <"/proc/$(cat "$dir/node$i/pid")/stat"
    t=$((t + f[13] + f[14]))
  done
  echo "$t"
}

# shellcheck disable=SC2086
restart "$binB" $ownersB
echo "== SAMBA (ucb), K = $k, N = $n, $sessions sessions: data owners (nodes) $ownersB on B, $ownersA on A; controller and comp on B in odd sessions, on A in even ones ==" >&2
printf '%-4s %4s %10s %10s %10s %12s %12s %8s\n' sess ctrl ms/step ctrl_us comp_us ownerA_us ownerB_us B/A
rows=()
for s in $(seq 1 "$sessions"); do
  if [ $((s % 2)) -eq 1 ]; then build=B bin=$binB; else build=A bin=$binA; fi
  if [ "$(tr '\0' ' ' <"/proc/$(cat "$dir/node2/pid")/cmdline" | awk '{ print $1 }')" != "$bin" ]; then
    restart "$bin" 2 3
  fi
  # shellcheck disable=SC2086
  c0="$(cpu 2) $(cpu 3) $(cpu $ownersA) $(cpu $ownersB)"
  if ! "$binA" session start --config "$dir/node1/config.toml" "$dir/samba-$n.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-12h}" >"$dir/session-$s.out" 2>&1; then
    echo "samba-ab.sh: session $s failed:" >&2
    tail -5 "$dir/session-$s.out" >&2
    exit 1
  fi
  # shellcheck disable=SC2086
  c1="$(cpu 2) $(cpu 3) $(cpu $ownersA) $(cpu $ownersB)"
  id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session-$s.out")
  ms=$("$binA" session result --config "$dir/node1/config.toml" "$id" --json |
    awk -F': ' '/"ms_per_step"/ { gsub(/,/, "", $2); print $2; exit }')
  [ -n "$ms" ] || { echo "samba-ab.sh: session $id's result has no ms_per_step" >&2; exit 1; }
  row=$(awk -v s="$s" -v b="$build" -v ms="$ms" -v c0="$c0" -v c1="$c1" -v n="$n" -v hz="$(getconf CLK_TCK)" \
    -v na="$(echo "$ownersA" | wc -w)" -v nb="$(echo "$ownersB" | wc -w)" 'BEGIN {
    split(c0, x, " "); split(c1, y, " ")
    for (i = 1; i <= 4; i++) us[i] = (y[i] - x[i]) / hz * 1e6 / n
    printf "%-4s %4s %10.3f %10.0f %10.1f %12.2f %12.2f %8.3f\n", s, b, ms, us[1], us[2], us[3] / na, us[4] / nb, (us[4] / nb) / (us[3] / na)
  }')
  echo "$row"
  rows+=("$row")
done
# by BUILD COLUMN: the median of a column over the sessions whose
# controller and comp ran BUILD.
by() {
  local r sel=()
  for r in "${rows[@]}"; do
    [ "$(echo "$r" | awk '{ print $2 }')" = "$1" ] && sel+=("$r")
  done
  median "$2" "${sel[@]}"
}
echo
echo "data owners, all sessions: median µs per step A $(median 6 "${rows[@]}"), B $(median 7 "${rows[@]}"); B/A $(median 8 "${rows[@]}"), interval $(interval 8 "${rows[@]}")"
echo "controller and comp, medians over their own build's sessions: ms per step A $(by A 3), B $(by B 3); controller µs per step A $(by A 4), B $(by B 4); comp A $(by A 5), B $(by B 5)"
