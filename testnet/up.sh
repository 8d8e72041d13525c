#!/usr/bin/env bash
# up.sh N DIR — create N bandit-node daemons on loopback under DIR (node1 … nodeN),
# every address book listing all the others and every policy open, start them in
# the background and return once each is connected to all the others.
#
#   testnet/up.sh 5 /tmp/tn        # then: /tmp/tn/bin/bandit-node peers --config /tmp/tn/node1/config.toml
#   testnet/down.sh /tmp/tn
#
# Ports: node i listens on TCP and UDP/QUIC port BASE+i and serves its control
# API on 127.0.0.1:BASE+500+i, BASE being $BANDIT_TESTNET_BASE_PORT (default 24000).
# If $BANDIT_TESTNET_LOCAL names a TOML file, it is appended to every node's
# config before the daemons start (local data such as [local.bai.agent]); if
# it names a directory, its nodeI.toml is appended to node I's config, and
# its nodeI.env (lines NAME=VALUE, e.g. GOMAXPROCS=1) is added to node I's
# environment. If $BANDIT_TESTNET_BIN names a bandit-node binary, the daemons
# run it instead of one built from these sources.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3

usage() { echo "usage: $0 N DIR   (N >= 2 daemons, DIR their directory)" >&2; exit 2; }
[ $# -eq 2 ] || usage
n=$1 dir=$2
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 400 ] || { echo "up.sh: N must be a number from 2 to 400, got '$n'" >&2; exit 2; }
base=${BANDIT_TESTNET_BASE_PORT:-24000}
root=$(cd "$(dirname "$0")/.." && pwd)
# The daemons' own outgoing connections take local ports from the kernel's
# ephemeral range; a listening port inside it can be taken before its daemon
# binds it (a 103-node testnet at base 33000 lost 13 nodes that way).
if read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && [ $((base + 500 + n)) -ge "$lo" ] && [ $((base + 1)) -le "$hi" ]; then
  echo "up.sh: ports $((base + 1))-$((base + 500 + n)) overlap the ephemeral port range $lo-$hi, from which the daemons' outgoing connections take theirs; choose a BANDIT_TESTNET_BASE_PORT below $((lo - 500 - n))" >&2
  exit 2
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if compgen -G "$dir/node*/pid" >/dev/null; then
  echo "up.sh: $dir already holds a running testnet (pid files); run testnet/down.sh $dir first" >&2
  exit 1
fi
rm -rf "$dir"/node*

bin=$dir/bin/bandit-node
mkdir -p "$dir/bin"
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then
  # A binary built beforehand, e.g. to compare two builds on the same testnet.
  [ -x "$BANDIT_TESTNET_BIN" ] || { echo "up.sh: BANDIT_TESTNET_BIN=$BANDIT_TESTNET_BIN is not an executable file" >&2; exit 2; }
  # It may already be DIR/bin/bandit-node (demo.sh and mpccb.sh build there).
  [ "$BANDIT_TESTNET_BIN" -ef "$bin" ] || cp "$BANDIT_TESTNET_BIN" "$bin"
else
  echo "building bandit-node into $dir/bin ..." >&2
  (cd "$root" && go build -o "$bin" ./cmd/bandit-node)
fi

declare -a ids
for i in $(seq 1 "$n"); do
  port=$((base + i)) api=$((base + 500 + i))
  ids[$i]=$("$bin" init --dir "$dir/node$i" --name "node$i" --policy-open \
    --listen "/ip4/127.0.0.1/tcp/$port" --listen "/ip4/127.0.0.1/udp/$port/quic-v1" \
    --api "127.0.0.1:$api" 2>/dev/null)
done
# Every node's address book: each peer's entry built once, in this shell
# (no process per pair: n(n-1) of them took minutes at n = 103 on a loaded
# machine), and each config appended to once.
declare -a entries
for j in $(seq 1 "$n"); do
  port=$((base + j))
  printf -v "entries[$j]" '\n[[peers]]\nname = "node%d"\npeer_id = "%s"\naddrs = ["/ip4/127.0.0.1/tcp/%d", "/ip4/127.0.0.1/udp/%d/quic-v1"]\n' \
    "$j" "${ids[$j]}" "$port" "$port"
done
for i in $(seq 1 "$n"); do
  book=
  for j in $(seq 1 "$n"); do
    [ "$i" = "$j" ] || book+=${entries[$j]}
  done
  printf '%s' "$book" >>"$dir/node$i/config.toml"
done

if [ -n "${BANDIT_TESTNET_LOCAL:-}" ]; then
  for i in $(seq 1 "$n"); do
    src=$BANDIT_TESTNET_LOCAL
    [ -d "$src" ] && src="$src/node$i.toml"
    [ -f "$src" ] && { echo; cat "$src"; } >>"$dir/node$i/config.toml"
  done
fi

for i in $(seq 1 "$n"); do
  envs=()
  if [ -n "${BANDIT_TESTNET_LOCAL:-}" ] && [ -f "$BANDIT_TESTNET_LOCAL/node$i.env" ]; then
    mapfile -t envs < <(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$BANDIT_TESTNET_LOCAL/node$i.env")
  fi
  env ${envs[@]+"${envs[@]}"} nohup "$bin" run --config "$dir/node$i/config.toml" >"$dir/node$i/daemon.log" 2>&1 &
  echo $! >"$dir/node$i/pid"
done

# Wait until every daemon reports all n-1 peers connected.
# A full mesh of n daemons is n(n-1)/2 handshakes on this machine's cores.
# shellcheck source=testnet/mesh-lib.sh
. "$root/testnet/mesh-lib.sh"
up_peers() { "$bin" peers --config "$dir/node$1/config.toml" --json; }
up_alive() { kill -0 "$(cat "$dir/node$1/pid")" 2>/dev/null; }
up_log() { echo "$dir/node$1/daemon.log"; }
if ! mesh_wait up.sh "$n" $((60 + 2 * n)) up_peers up_alive up_log; then
  echo "up.sh: logs are in $dir/node*/daemon.log; stopping the testnet" >&2
  "$root/testnet/down.sh" "$dir" >/dev/null 2>&1 || true
  exit 1
fi
echo "testnet of $n nodes up in $dir (configs: $dir/node*/config.toml; stop with testnet/down.sh $dir)" >&2
