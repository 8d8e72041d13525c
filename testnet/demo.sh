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
# Before it builds anything it sets up what it needs and checks the rest:
# the tools it and up.sh, down.sh and pfcb-locals.sh call, and the
# Fashion-MNIST files of Debian's package dataset-fashion-mnist, it installs
# with apt-get when it can — as root, or with sudo where sudo works without a
# password; Go (1.21 or newer, which fetches the version go.mod names) it
# cannot install. If something is still missing it lists each missing thing
# with the command that installs it on this machine, and exits 1. Without
# Fashion-MNIST (not installed and not installable here) the contextual
# bandit runs on 1,000 synthetic contexts instead, and says so. It builds
# the binary once, into DIR/bin, and if a port of its range is taken it
# moves the whole testnet to a free range and says which.
#
# Environment:
#   BANDIT_FASHION_DIR        the directory of the Fashion-MNIST IDX files
#                             (default /usr/share/datasets/fashion-mnist; a
#                             directory without them means synthetic contexts)
#   BANDIT_TESTNET_BASE_PORT  the testnet's ports (see up.sh): node i listens
#                             on BASE+i and serves its API on BASE+500+i. Unset,
#                             BASE is 24000, or the first free one of 25000,
#                             26000, … (then 23000, 22000, …) below the
#                             ephemeral port range; set, it must be free.
#   BANDIT_DEMO_NO_INSTALL=1  install nothing, as where it may not: say what is
#                             missing, and without Fashion-MNIST use synthetic
#                             contexts. To try that path on a machine that has
#                             the package: BANDIT_DEMO_NO_INSTALL=1
#                             BANDIT_FASHION_DIR=$(mktemp -d) testnet/demo.sh
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
n=${2:-5}

# --- prerequisites, all set up or checked before the first build ----------
missing=()
need() { missing+=("$1"$'\n'"      $2"); }
# apt: how this script runs apt-get — directly as root, or with sudo where
# sudo works without a password; empty when it may not install anything.
apt=()
if [ "${BANDIT_DEMO_NO_INSTALL:-}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get)
  fi
fi
# install_how PKG…: the command that installs Debian packages on this machine.
install_how() {
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install it with this system's package manager (Debian's package: $*)"
  elif [ "$(id -u)" -eq 0 ]; then
    echo "apt-get update && apt-get install -y $*"
  elif command -v sudo >/dev/null 2>&1; then
    echo "sudo apt-get update && sudo apt-get install -y $*"
  else
    echo "as root: apt-get update && apt-get install -y $*"
  fi
}
# install PKG…: install Debian packages if this script may; once more after
# an apt-get update if the first try fails (stale package lists), as .ci/run does.
install() {
  [ ${#apt[@]} -gt 0 ] || return 1
  echo "demo.sh: installing $* (${apt[*]} install) ..." >&2
  "${apt[@]}" install -y -qq "$@" >/dev/null 2>&1 && return 0
  "${apt[@]}" update -qq >/dev/null && "${apt[@]}" install -y -qq "$@" >/dev/null
}
# The tools this script, up.sh, down.sh and pfcb-locals.sh call, and the
# Debian package of each.
tool_missing() {
  local tool
  for tool in awk:gawk sed:sed grep:grep sort:coreutils seq:coreutils paste:coreutils mktemp:coreutils \
    cp:coreutils tr:coreutils tail:coreutils head:coreutils basename:coreutils dirname:coreutils nohup:coreutils; do
    command -v "${tool%%:*}" >/dev/null 2>&1 || echo "$tool"
  done
}
tools=$(tool_missing)
if [ -n "$tools" ]; then
  install $(printf '%s\n' $tools | sed 's/.*://' | sort -u) || true
  for tool in $(tool_missing); do need "${tool%%:*}" "$(install_how "${tool#*:}")"; done
fi
if [ "${BASH_VERSINFO[0]}" -lt 4 ]; then
  need "bash 4 or newer (this is $BASH_VERSION)" "$(install_how bash)"
fi
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 5 ] && [ "$n" -le 400 ] ||
  need "N, the number of nodes, must be a number from 5 to 400 (got '$n')" "testnet/demo.sh DIR 5"
# Any Go from 1.21 on fetches the toolchain go.mod names (GOTOOLCHAIN, above)
# from the module proxy by itself. Debian's golang-go may be older, so this
# script does not install Go: it says how, from go.dev or from the module proxy.
go_want=1.21.0
case $(uname -m) in aarch64 | arm64) go_arch=arm64 ;; *) go_arch=amd64 ;; esac
go_tgz=$GOTOOLCHAIN.linux-$go_arch.tar.gz
go_zip=v0.0.1-$GOTOOLCHAIN.linux-$go_arch
# Into /usr/local/go as root or with sudo; without either, into ~/sdk/go,
# which needs no root.
sudo=""
go_root=/usr/local/go
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo "; else go_root=\$HOME/sdk/go; fi
fi
go_install="curl -fsSLO https://go.dev/dl/$go_tgz && ${sudo}rm -rf $go_root && ${sudo}mkdir -p $go_root && ${sudo}tar -C $go_root --strip-components=1 -xzf $go_tgz && export PATH=\$PATH:$go_root/bin"
go_install+=$'\n'"      or, from the Go module proxy: curl -fsSLo go.zip https://proxy.golang.org/golang.org/toolchain/@v/$go_zip.zip && unzip -q go.zip -d go.tmp && ${sudo}rm -rf $go_root && ${sudo}mkdir -p \$(dirname $go_root) && ${sudo}mv go.tmp/golang.org/toolchain@$go_zip $go_root && export PATH=\$PATH:$go_root/bin"
if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    need "go: installed in /usr/local/go/bin but not on PATH" "export PATH=\$PATH:/usr/local/go/bin"
  elif [ -x "$HOME/sdk/go/bin/go" ]; then
    need "go: installed in $HOME/sdk/go/bin but not on PATH" "export PATH=\$PATH:$HOME/sdk/go/bin"
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
[ -r /proc/self/cmdline ] || need "a Linux /proc (down.sh checks each daemon's command line there)" "run the demo on Linux"

# Ports: node i listens on TCP and UDP port BASE+i and serves its API on
# BASE+500+i (up.sh). A range must lie below the ephemeral port range, from
# which the daemons' outgoing connections take theirs, and no other program
# may listen on one of its ports (TCP) or have bound it (UDP).
declare -A port_taken=()
for f in /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do
  [ -r "$f" ] || continue
  # Column 2 is the local address:port in hex, column 4 the state (0A: TCP LISTEN).
  case $f in */tcp*) listen_only=1 ;; *) listen_only=0 ;; esac
  for hex in $(awk -v listen_only="$listen_only" 'NR > 1 && (!listen_only || $4 == "0A") { sub(/.*:/, "", $2); print $2 }' "$f"); do
    port_taken[$((16#$hex))]=1
  done
done
ephemeral_lo=65536 ephemeral_hi=65535
read -r ephemeral_lo ephemeral_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
# range_problem BASE: why BASE's ports cannot be used, or nothing.
range_problem() {
  local b=$1 i
  if [ $((b + 500 + n)) -ge "$ephemeral_lo" ] && [ $((b + 1)) -le "$ephemeral_hi" ]; then
    echo "ports $((b + 1))-$((b + 500 + n)) overlap the ephemeral port range $ephemeral_lo-$ephemeral_hi"
    return
  fi
  if [ $((b + 500 + n)) -gt 65535 ] || [ "$b" -lt 1024 ]; then
    echo "ports $((b + 1))-$((b + 500 + n)) are not all in 1025-65535"
    return
  fi
  for i in $(seq 1 "$n"); do
    for p in $((b + i)) $((b + 500 + i)); do
      [ -z "${port_taken[$p]:-}" ] || { echo "port $p is taken, by another program (ss -ltnup names it)"; return; }
    done
  done
}
if [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -le 400 ]; then
  if [ -n "${BANDIT_TESTNET_BASE_PORT:-}" ]; then
    base=$BANDIT_TESTNET_BASE_PORT
    why="not a port number"
    [[ "$base" =~ ^[0-9]{1,5}$ ]] && why=$(range_problem "$base")
    if [ -n "$why" ]; then
      free=""
      for b in $(seq 24000 1000 $((ephemeral_lo - 1000))) $(seq 23000 -1000 2000); do
        [ -z "$(range_problem "$b")" ] && { free=$b; break; }
      done
      need "BANDIT_TESTNET_BASE_PORT=$base: $why" "BANDIT_TESTNET_BASE_PORT=${free:-a free base} testnet/demo.sh, or unset it and demo.sh picks one"
    fi
  else
    base=""
    why=$(range_problem 24000)
    for b in $(seq 24000 1000 $((ephemeral_lo - 1000))) $(seq 23000 -1000 2000); do
      [ -z "$(range_problem "$b")" ] && { base=$b; break; }
    done
    if [ -z "$base" ]; then
      need "free ports: every range from 2000 to the ephemeral range ($ephemeral_lo) has a port taken" "BANDIT_TESTNET_BASE_PORT=BASE testnet/demo.sh, BASE+1…BASE+500+$n free"
    elif [ "$base" != 24000 ]; then
      echo "demo.sh: the default ports cannot be used: $why; using $((base + 1))-$((base + n)) and $((base + 501))-$((base + 500 + n)) instead (BANDIT_TESTNET_BASE_PORT=$base)" >&2
    fi
    export BANDIT_TESTNET_BASE_PORT=$base
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  {
    echo "demo.sh: cannot run yet (nothing has been built); missing, each with the command that installs it:"
    for m in "${missing[@]}"; do echo "  - $m"; done
  } >&2
  exit 1
fi

# Fashion-MNIST, installed if this script may; without it the contextual
# bandit runs on synthetic contexts.
fashion_default=/usr/share/datasets/fashion-mnist
fashion_dir=${BANDIT_FASHION_DIR:-$fashion_default}
fashion_present() {
  local f
  for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
    [ -r "$fashion_dir/$f" ] || return 1
  done
}
contexts=fashion-mnist
fashion_how=$(install_how dataset-fashion-mnist)
if ! fashion_present; then
  if [ "$fashion_dir" != "$fashion_default" ]; then
    fashion_why="BANDIT_FASHION_DIR=$fashion_dir does not hold the four IDX files"
    fashion_how="put train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and t10k-labels-idx1-ubyte.gz in $fashion_dir, or unset BANDIT_FASHION_DIR ($fashion_default: $fashion_how)"
  elif [ "${BANDIT_DEMO_NO_INSTALL:-}" = 1 ]; then
    fashion_why="the Debian package dataset-fashion-mnist is not installed, and BANDIT_DEMO_NO_INSTALL=1"
  elif [ ${#apt[@]} -eq 0 ]; then
    fashion_why="the Debian package dataset-fashion-mnist is not installed, and this script may not install it (not root, no sudo without a password, or no apt-get)"
  elif ! install dataset-fashion-mnist || ! fashion_present; then
    fashion_why="installing the Debian package dataset-fashion-mnist failed"
  fi
  if ! fashion_present; then
    contexts=synthetic
    {
      echo "demo.sh: no Fashion-MNIST: $fashion_why."
      echo "demo.sh: the contextual bandit runs on 1,000 SYNTHETIC contexts instead (20 features, 10 Gaussian clusters, reward 1 for the arm of a context's cluster)."
      echo "demo.sh: for the real data: $fashion_how"
    } >&2
  fi
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
# The one build: up.sh runs this binary (BANDIT_TESTNET_BIN) rather than
# building its own.
# $BANDIT_TESTNET_BIN may name a prebuilt binary (.ci/run builds one for
# every testnet).
mkdir -p "$dir/bin"
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then
  [ "$BANDIT_TESTNET_BIN" -ef "$dir/bin/bandit-node" ] || cp "$BANDIT_TESTNET_BIN" "$dir/bin/bandit-node"
else
  echo "building bandit-node into $dir/bin ..." >&2
  (cd "$here/.." && go build -o "$dir/bin/bandit-node" ./cmd/bandit-node)
fi
# The private contextual bandit: node1 and node2 hold the features of 1,000
# Fashion-MNIST contexts (ten columns each), node4 the reward table. Without
# Fashion-MNIST: 1,000 synthetic contexts, a table of 20 features drawn
# around 10 random centres (seeded, the same every run), the class being the
# arm that pays 1, split by data mpccb as it splits any CSV table.
rm -rf "$dir/mpccb-data"
if [ "$contexts" = fashion-mnist ]; then
  "$dir/bin/bandit-node" data mpccb --out "$dir/mpccb-data" --parties 2 --steps 1000 --source "$fashion_dir" >&2
else
  awk -v seed=1 -v rows=1000 -v arms=10 -v dims=20 '
    function gauss() { return sqrt(-2 * log(1 - rand())) * cos(2 * 3.141592653589793 * rand()) }
    BEGIN {
      srand(seed)
      for (a = 0; a < arms; a++) for (j = 0; j < dims; j++) centre[a, j] = gauss()
      for (j = 1; j <= dims; j++) printf "x%d,", j
      print "class"
      for (i = 0; i < rows; i++) {
        a = int(rand() * arms)
        for (j = 0; j < dims; j++) printf "%.6f,", centre[a, j] + 0.5 * gauss()
        print a
      }
    }' >"$dir/synthetic-contexts.csv"
  "$dir/bin/bandit-node" data mpccb --csv "$dir/synthetic-contexts.csv" --label class --normalize --arms 10 \
    --out "$dir/mpccb-data" --parties 2 --steps 1000 >/dev/null
fi
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party0.csv" >>"$dir/locals/node1.toml"
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party1.csv" >>"$dir/locals/node2.toml"
printf '\n[local.mpccb.reward_receiver]\nrewards = "%s"\n' "$dir/mpccb-data/rewards.csv" >>"$dir/locals/node4.toml"
# SAMBA: node4 and node5 hold the two best MovieLens arms.
printf '\n[local.samba.data_owner]\nbernoulli = 0.5313\n' >>"$dir/locals/node4.toml"
printf '\n[local.samba.data_owner]\nbernoulli = 0.4305\n' >>"$dir/locals/node5.toml"
BANDIT_TESTNET_BIN="$dir/bin/bandit-node" BANDIT_TESTNET_LOCAL="$dir/locals" "$here/up.sh" "$n" "$dir"
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
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/ping.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}"
echo "== the same, as JSON (session start --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json) ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/ping.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$dir/result.json"
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
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/bai.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}"

cat >"$dir/pfcb.toml" <<SPEC
protocol = "pfcb"
[roles]
agent = [$names]
[params]
algorithm = "pfcb"
rounds = 5000
SPEC
echo "== P-FCB: $n agents, 10 producers, 5,000 rounds ==" >&2
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/pfcb.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}"

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
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/samba.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" | sed -n '/^SAMBA/,/^  messages/p'

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
if [ "$contexts" = fashion-mnist ]; then
  echo "== private contextual bandit: 1,000 Fashion-MNIST steps on secret shares ==" >&2
else
  echo "== private contextual bandit: 1,000 SYNTHETIC steps on secret shares (no Fashion-MNIST: $fashion_why) ==" >&2
fi
"$dir/bin/bandit-node" session start --config "$dir/node1/config.toml" "$dir/mpccb.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" | sed -n '/^Private/,/^  per step/p'
if [ "$contexts" != fashion-mnist ]; then
  echo "demo.sh: the contextual bandit ran on synthetic contexts, not Fashion-MNIST; for the real data: $fashion_how" >&2
fi
