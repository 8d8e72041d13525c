#!/usr/bin/env bash
# demo.sh — bring up a testnet of N daemons on loopback (default 5), run a ping
# session from node1 (every node measures its round-trip time to every other)
# and print the latency matrix, then a multi-agent best-arm identification
# session (node1 coordinates, the others are agents, each with its own copy of
# the paper's Problem 1), a P-FCB session (every node an agent with its own
# producers' costs and capacities), a SAMBA session (node1 the data customer,
# node2 the controller, node3 comp, node4 and node5 data owners), and take
# a private contextual-bandit session (node1 and node2 hold Fashion-MNIST
# features, node3 pulls, node4 holds the rewards, node5 deals), and take the
# testnet down again.
#
#   testnet/demo.sh            # DIR defaults to a fresh temporary directory
#   testnet/demo.sh DIR N      # use DIR and N nodes (N ≥ 5)
#
# Before it builds anything it checks what it needs — Go (the version go.mod
# names), the Fashion-MNIST files of Debian's package dataset-fashion-mnist,
# the tools it and up.sh, down.sh and pfcb-locals.sh call, free ports — and if
# something is missing it lists each missing thing with the command that
# installs it, and exits 1.
#
# Environment:
#   BANDIT_FASHION_DIR        the directory of the Fashion-MNIST IDX files
#                             (default /usr/share/datasets/fashion-mnist)
#   BANDIT_TESTNET_BASE_PORT  the testnet's ports (see up.sh; default 24000)
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
n=${2:-5}
fashion_dir=${BANDIT_FASHION_DIR:-/usr/share/datasets/fashion-mnist}

# --- prerequisites, all checked before the first build ---------------------
missing=()
need() { missing+=("$1"$'\n'"      $2"); }
# The tools this script, up.sh, down.sh and pfcb-locals.sh call, and the
# Debian package of each.
for tool in awk:gawk sed:sed grep:grep sort:coreutils seq:coreutils paste:coreutils mktemp:coreutils \
  cp:coreutils tr:coreutils tail:coreutils head:coreutils basename:coreutils dirname:coreutils nohup:coreutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need "${tool%%:*}" "sudo apt-get install -y ${tool#*:}"
done
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
  need "bash 4 or newer (this is $BASH_VERSION)" "sudo apt-get install -y bash"
fi
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 5 ] && [ "$n" -le 400 ] ||
  need "N, the number of nodes, must be a number from 5 to 400 (got '$n')" "testnet/demo.sh DIR 5"
# Any Go from 1.21 on fetches the toolchain go.mod names (GOTOOLCHAIN, above)
# from the module proxy by itself.
go_want=1.21.0
case $(uname -m) in aarch64 | arm64) go_arch=arm64 ;; *) go_arch=amd64 ;; esac
go_tgz=$GOTOOLCHAIN.linux-$go_arch.tar.gz
go_install="curl -fsSLO https://go.dev/dl/$go_tgz && sudo rm -rf /usr/local/go && sudo tar -C /usr/local -xzf $go_tgz && export PATH=\$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    need "go: installed in /usr/local/go/bin but not on PATH" "export PATH=\$PATH:/usr/local/go/bin"
  else
    need "go (Go $go_want or newer; it fetches $GOTOOLCHAIN, which go.mod names)" "$go_install"
  fi
else
  # From /, with the local toolchain: inside the module a go older than
  # go.mod's would start downloading a newer one.
  go_have=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed -n 's/^go\([0-9][0-9.]*\).*/\1/p')
  if [ -z "$go_have" ] || [ "$(printf '%s\n%s\n' "$go_want" "$go_have" | sort -V | head -n 1)" != "$go_want" ]; then
    need "Go $go_want or newer (found: $(go version 2>/dev/null || echo 'an unusable go'))" "$go_install"
  fi
fi
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  if [ ! -r "$fashion_dir/$f" ]; then
    need "Fashion-MNIST: $fashion_dir/$f (Debian package dataset-fashion-mnist; BANDIT_FASHION_DIR names another directory)" \
      "sudo apt-get update && sudo apt-get install -y dataset-fashion-mnist"
    break
  fi
done
[ -r /proc/self/cmdline ] || need "a Linux /proc (down.sh checks each daemon's command line there)" "run the demo on Linux"
base=${BANDIT_TESTNET_BASE_PORT:-24000}
if [[ "$n" =~ ^[0-9]+$ ]] && read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null &&
  [ $((base + 500 + n)) -ge "$lo" ] && [ $((base + 1)) -le "$hi" ]; then
  need "ports $((base + 1))-$((base + 500 + n)) overlap the ephemeral port range $lo-$hi" \
    "BANDIT_TESTNET_BASE_PORT=$((lo - 600 - n)) testnet/demo.sh"
fi
if [ ${#missing[@]} -gt 0 ]; then
  {
    echo "demo.sh: cannot run yet (nothing has been built); missing, each with the command that installs it:"
    for m in "${missing[@]}"; do echo "  - $m"; done
  } >&2
  exit 1
fi

dir=${1:-$(mktemp -d -t bandit-testnet.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# Every node's local data: a BAI agent's copy of Problem 1 and a P-FCB
# agent's own producers.
rm -rf "$dir/locals"
mkdir -p "$dir/locals"
for i in $(seq 1 "$n"); do cp "$here/problem1-agent.toml" "$dir/locals/node$i.toml"; done
"$here/pfcb-locals.sh" "$dir/locals" "$n" 10
# The private contextual bandit: node1 and node2 hold the features of 1,000
# Fashion-MNIST contexts (ten columns each), node4 the reward table.
mkdir -p "$dir/bin"
(cd "$here/.." && go build -o "$dir/bin/bandit-node" ./cmd/bandit-node)
"$dir/bin/bandit-node" data mpccb --out "$dir/mpccb-data" --parties 2 --steps 1000 --source "$fashion_dir" >&2
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party0.csv" >>"$dir/locals/node1.toml"
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party1.csv" >>"$dir/locals/node2.toml"
printf '\n[local.mpccb.reward_receiver]\nrewards = "%s"\n' "$dir/mpccb-data/rewards.csv" >>"$dir/locals/node4.toml"
# SAMBA: node4 and node5 hold the two best MovieLens arms.
printf '\n[local.samba.data_owner]\nbernoulli = 0.5313\n' >>"$dir/locals/node4.toml"
printf '\n[local.samba.data_owner]\nbernoulli = 0.4305\n' >>"$dir/locals/node5.toml"
BANDIT_TESTNET_LOCAL="$dir/locals" "$here/up.sh" "$n" "$dir"
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
grep -q '"state": "completed"' "$dir/result.json" || { echo "demo.sh: the ping session did not complete:" >&2; cat "$dir/result.json" >&2; exit 1; }
echo "ping result written to $dir/result.json" >&2

agents=$(seq -f '"node%g"' 2 "$n" | paste -sd, -)
cat >"$dir/bai.toml" <<SPEC
protocol = "bai"
[roles]
coordinator = "node1"
agent = [$agents]
[params]
algorithm = "dp_mase"
arms = 10
epsilon = 0.5
beta = 0.5
delta = 0.25          # M = 2: a global elimination takes 3 of the $((n - 1)) agents' votes
SPEC
echo "== best-arm identification (DP-MASE): node1 coordinates $((n - 1)) agents ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/bai.toml" --wait

cat >"$dir/pfcb.toml" <<SPEC
protocol = "pfcb"
[roles]
agent = [$names]
[params]
algorithm = "pfcb"
rounds = 5000
SPEC
echo "== P-FCB: $n agents, 10 producers, 5,000 rounds ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/pfcb.toml" --wait

cat >"$dir/samba.toml" <<SPEC
protocol = "samba"
[roles]
data_customer = "node1"
controller = "node2"
comp = "node3"
data_owner = ["node4", "node5"]
[params]
algorithm = "ucb"
budget = 2000
SPEC
echo "== SAMBA (UCB): the data customer's cumulative reward over N = 2,000 ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/samba.toml" --wait | sed -n '/^SAMBA/,/^  messages/p'

cat >"$dir/mpccb.toml" <<SPEC
protocol = "mpccb"
[roles]
feature_party = ["node1", "node2"]
arm_puller = "node3"
reward_receiver = "node4"
dealer = "node5"
[params]
steps = 1000
epsilon = 0.1
SPEC
echo "== private contextual bandit: 1,000 Fashion-MNIST steps on secret shares ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/mpccb.toml" --wait | sed -n '/^Private/,/^  per step/p'
