#!/usr/bin/env bash
# wan.sh DIR [--short] [--profile none|lan|metro|continental|lossy]... [--no-partition] [--no-close] [--close-only] [--partition-only]
# wan.sh DIR --batch B[@N]... [--budget N] [--algorithm A] [--profile P]...
# wan.sh DIR --mpccb-batch B[@N]... [--profile P]...
#
# The wide-area testnet: bandit-node daemons each in its own network
# namespace, their links emulated by Toxiproxy (testnet/wanlink) with a
# profile's latency, jitter, bandwidth and faults, their address books holding
# the emulated addresses (layout: testnet/wan-net.sh). For each profile (all
# five unless --profile is given, repeatable; "none" is the proxies without
# toxics, the emulation's own cost) it measures
#   1. a ping session's round trip between two organizations (median, p99),
#      which must be about 2 × the profile's one-way latency;
#   2. SAMBA K = 10, UCB, N = 2,000 (none, lan), 1,000 (metro, lossy) or 300
#      (continental): the session's ms per step beside its floor, 4 one-way
#      latencies a step;
#   3. the bare SAMBA message pattern (bench pattern --processes) with its
#      parties in the same namespaces and over the same links, beside SAMBA;
#   4. the private contextual bandit (mpccb, P = 2, Fashion-MNIST: 300, 100
#      or 30 steps), its ms per step beside the larger of rounds × one-way
#      + bytes / 2 / bandwidth and the dealer's bytes / bandwidth; BAI (DP-MASE, 8 agents) and P-FCB (4 agents, 5,000
#      rounds), their wall time per communication round beside the latency
#      on their critical path (the floors are defined at measure_bai and
#      measure_pfcb);
# prints the tables profile | floor | measured | ratio (also against the floor
# that the links really give, 2 ping medians a step), then runs the partition
# scenario (unless --no-partition): a long ping session on metro during which
# node2's link is cut for $WAN_PARTITION_S seconds (default 10, shorter than
# session.peer_timeout's 30 s), and reports whether the session completed,
# with the daemons' log lines about it, and then the used-link loss
# scenario (unless --no-close; --close-only runs it alone, as --partition-only
# does the partition scenario): SAMBA K = 3 on
# metro while every connection between the controller (node2) and comp
# (node3), a link every step crosses, is closed $WAN_CLOSE_MS ms (default
# 5,000) after its first byte, and reports whether the session completed with
# every step, and how much longer it took than without the closes.
#
# --batch B[@N] (repeatable) runs batched SAMBA instead, alone: K = 10 on
# each chosen profile (continental unless --profile is given), one session a
# B with params.batch = B, the budget N given after @ or --budget's (default
# 100,000), the algorithm --algorithm's (default thompson, the batch size
# docs/protocols/samba.md recommends for long links: B = 100). Each session
# is set against its batched floor, rounds x 4 one-way latencies + the bytes
# on a round's critical path / bandwidth (measure_batched; also with the
# latency a ping session measures on the same links, and with each leg's
# slowest message under the profile's jitter), and its regret
# (N x the best mean - the reward); a short N is projected to N = 100,000
# at its measured ms per step. The machine's load is printed before and after
# each session.
#
# --mpccb-batch B[@N] (repeatable) runs the batched private contextual
# bandit instead, alone: mpccb P = 2, |A| = 10, Fashion-MNIST (D = 20) on
# each chosen profile (continental unless --profile is given), one session a
# B with params.batch = B and steps = N (default 60,000, every training
# image). Each session is set against its floor a step, the larger of the
# feature parties' (rounds x one-way + bytes / 2 / bandwidth) and the
# dealer's link (dealer bytes / bandwidth), naming the one that binds
# (measure_mpccb_batched); a short N is projected to 60,000 steps at its
# measured ms per step. The machine's load is printed before and after each
# session. (--batch and --mpccb-batch cannot be combined.)
#
# --short (for CI): the lan profile only, a ping session and SAMBA K = 3,
# N = 200, no partition; it exits 0 with "wan.sh: skipped: …" when it cannot
# make namespaces (not root, no `ip netns`).
#
# Needs root and iproute2. Everything it makes — namespaces bnwan-*, the bridge
# bnwan0, the veths bnwan-h*, every process in those namespaces — is removed on
# exit, failure or Ctrl-C, and a leftover of a killed run is removed at start.
# Results and logs stay in DIR (DIR/<scenario>/node*/daemon.log).
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

usage() {
  echo "usage: $0 DIR [--short] [--profile none|lan|metro|continental|lossy]... [--no-partition] [--no-close] [--close-only] [--partition-only]" >&2
  echo "       $0 DIR --batch B[@N]... [--budget N] [--algorithm A] [--profile P]..." >&2
  echo "       $0 DIR --mpccb-batch B[@N]... [--profile P]..." >&2
  exit 2
}
[ $# -ge 1 ] || usage
out=$1
shift
short=0 partition=1 closing=1 close_only=0 partition_only=0 chosen=() batches=() mbatches=() budget=100000 algorithm=thompson
while [ $# -gt 0 ]; do
  case $1 in
  --short) short=1 ;;
  --batch)
    [ $# -ge 2 ] || usage
    [[ $2 =~ ^[1-9][0-9]*(@[1-9][0-9]*)?$ ]] || { echo "wan.sh: --batch takes B or B@N (positive integers), not '$2'" >&2; usage; }
    batches+=("$2")
    shift
    ;;
  --mpccb-batch)
    [ $# -ge 2 ] || usage
    # params.batch is 1..1000 (protocol/mpccb's bound), the steps at most
    # Fashion-MNIST's 60,000 training images (one context each).
    if ! [[ $2 =~ ^([1-9][0-9]{0,3})(@([1-9][0-9]{0,4}))?$ ]] || [ "${BASH_REMATCH[1]}" -gt 1000 ] || [ "${BASH_REMATCH[3]:-1}" -gt 60000 ]; then
      echo "wan.sh: --mpccb-batch takes B or B@N (B in 1..1000, N in 1..60,000), not '$2'" >&2
      usage
    fi
    mbatches+=("$2")
    shift
    ;;
  --budget)
    [ $# -ge 2 ] || usage
    [[ $2 =~ ^[1-9][0-9]*$ ]] || { echo "wan.sh: --budget takes a positive integer, not '$2'" >&2; usage; }
    budget=$2
    shift
    ;;
  --algorithm)
    [ $# -ge 2 ] || usage
    algorithm=$2
    shift
    ;;
  --no-partition) partition=0 ;;
  --no-close) closing=0 ;;
  --close-only) close_only=1 ;;
  --partition-only) partition_only=1 ;;
  --profile)
    [ $# -ge 2 ] || usage
    case $2 in none | lan | metro | continental | lossy) chosen+=("$2") ;; *) echo "wan.sh: unknown profile '$2'" >&2; usage ;; esac
    shift
    ;;
  *) usage ;;
  esac
  shift
done
if [ ${#batches[@]} -gt 0 ] && [ ${#mbatches[@]} -gt 0 ]; then
  echo "wan.sh: --batch and --mpccb-batch each run alone; give one of them" >&2
  usage
fi

if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1; then
  msg="wan.sh: skipped: the wide-area testnet needs root and iproute2's 'ip netns' to make network namespaces"
  if [ $short = 1 ]; then echo "$msg" >&2; exit 0; fi
  echo "$msg" >&2
  exit 1
fi
command -v python3 >/dev/null || { echo "wan.sh: needs python3 to read the sessions' JSON results" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
mkdir -p "$out/bin"
# shellcheck source=testnet/mesh-lib.sh
. "$here/mesh-lib.sh"
# shellcheck source=testnet/wan-net.sh
. "$here/wan-net.sh"
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
# shellcheck source=testnet/protocols-lib.sh
. "$here/protocols-lib.sh"
wan_dir=$out
# One run at a time: a second one would remove the first one's namespaces.
# The daemons and proxies do not inherit the lock (9>&- where they start), so
# a run killed with SIGKILL leaves none held and the next run cleans up.
exec 9>/run/lock/bnwan.lock
flock -n 9 || { echo "wan.sh: another wan.sh run is using the bnwan-* namespaces (it holds /run/lock/bnwan.lock); wait for it to end" >&2; exit 1; }
trap 'wan_down' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
wan_down # a leftover of a killed run

echo "building bandit-node and wanlink into $out/bin ..." >&2
# wanlink is a module of its own (testnet/wanlink/go.mod), so that the
# daemon's go.mod does not carry Toxiproxy and its logger.
# $BANDIT_TESTNET_BIN may name a prebuilt bandit-node (.ci/run's).
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then
  [ "$BANDIT_TESTNET_BIN" -ef "$out/bin/bandit-node" ] || cp "$BANDIT_TESTNET_BIN" "$out/bin/bandit-node"
else
  (cd "$root" && go build -o "$out/bin/bandit-node" ./cmd/bandit-node)
fi
(cd "$root/testnet/wanlink" && go build -o "$out/bin/wanlink" .)

# one_way_ms PROFILE: the profile's one-way latency (testnet/wanlink/profile.go).
one_way_ms() {
  case $1 in none) echo 0 ;; lan) echo 0.5 ;; metro | lossy) echo 5 ;; continental) echo 25 ;; esac
}

# jitter_ms PROFILE: the profile's jitter, ± this much on each one-way
# latency (testnet/wanlink/profile.go).
jitter_ms() {
  case $1 in continental) echo 3 ;; *) echo 0 ;; esac
}

# bytes_per_ms PROFILE: the profile's bandwidth in bytes a millisecond, 0
# for unlimited (testnet/wanlink/profile.go's RateKBps).
bytes_per_ms() {
  case $1 in metro | lossy) echo 6250 ;; continental) echo 2500 ;; *) echo 0 ;; esac
}

# link_rate FROM TO BYTES: the payload rate, in bytes a millisecond, that
# the emulated link from node FROM to node TO delivers: BYTES sent from
# FROM's namespace through TO's proxy reserved for FROM (the bench pattern's
# port, 21000 + FROM, which leads to 127.0.0.1:4101 in TO's namespace, where
# a sink reads them), timed at the sink from its first byte to its last.
# The bandwidth toxic sleeps a chunk at a time and delivers less than its
# rate; the floors below use the profile's rate, this says what is left.
link_rate() {
  local from=$1 to=$2 bytes=$3 out
  out=$(mktemp)
  ip netns exec "$(wan_ns "$to")" python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 4101))
s.listen(1)
s.settimeout(60)
c, _ = s.accept()
c.settimeout(60)
n, first, t0 = 0, 0, None
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    if t0 is None:
        t0, first = time.monotonic(), len(b)
    n += len(b)
t1 = time.monotonic()
print("%.1f" % ((n - first) / ((t1 - t0) * 1000)) if t0 is not None and t1 > t0 else "0")
' >"$out" &
  local sink=$!
  sleep 0.5
  ip netns exec "$(wan_ns "$from")" python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=30)
buf, left = bytes(1 << 16), int(sys.argv[3])
while left > 0:
    left -= c.send(buf[:min(left, len(buf))])
c.shutdown(socket.SHUT_WR)
c.settimeout(120)
c.recv(1)
' "10.77.0.$((10 + to))" "$((21000 + from))" "$bytes" || true
  wait "$sink" || true
  cat "$out"
  rm -f "$out"
}

# wall_ms FILE: a session result's wall time, started to finished, in ms.
wall_ms() {
  python3 -c '
import json, sys
from datetime import datetime
def t(v):
    v = v.rstrip("Z")
    head, _, frac = v.partition(".")
    return datetime.fromisoformat(head).timestamp() + float("0." + (frac or "0"))
s = json.load(open(sys.argv[1]))["session"]
print("%.0f" % ((t(s["finished"]) - t(s["started"])) * 1e3))' "$1"
}

# ratio A B: A / B to 2 decimals, "-" when B is 0.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# json FILE PYTHON-EXPR: a value of a session's JSON result (as r).
json() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# run_session I SPEC RESULT: start SPEC from node I and wait for it
# ($session_timeout at most: 10 min, 60 min for --batch); the JSON result
# goes to RESULT. Returns the CLI's status.
session_timeout=10m
run_session() {
  # In the background and waited for, so that a SIGTERM to this script runs
  # its trap at once instead of after the session.
  ip netns exec "$(wan_ns "$1")" "$wan_dir/bin/bandit-node" session start --timeout "$session_timeout" \
    --config "$wan_dir/node$1/config.toml" "$2" --wait --json >"$3" 9>&- &
  wait $!
}

# ping_spec FILE COUNT: a ping session between node1 and node2.
ping_spec() {
  printf 'protocol = "ping"\n[roles]\nparticipant = ["node1", "node2"]\n[params]\ncount = %s\n' "$2" >"$1"
}

# measure PROFILE K N PINGS [MPCCB-STEPS BAI-AGENTS PFCB-AGENTS PFCB-ROUNDS PATTERN-STEPS]:
# the profile's ping and SAMBA rows, the bare SAMBA pattern's (when
# PATTERN-STEPS is given) and, when MPCCB-STEPS is given, the
# private contextual bandit's (P = 2, nodes 1–5), BAI's (DP-MASE,
# coordinator node1, agents node2 … node(BAI-AGENTS+1)) and P-FCB's
# (agents node1 … node(PFCB-AGENTS)) rows, all on one network of K + 3
# daemons whose configs carry every protocol's local data.
measure() {
  local profile=$1 k=$2 n=$3 pings=$4 msteps=${5:-} bagents=${6:-} pagents=${7:-} prounds=${8:-} psteps=${9:-} d i
  d=$out/$profile
  mkdir -p "$d"
  wan_dir=$d
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  samba_locals "$d" "$k"
  if [ -n "$msteps" ]; then
    mpccb_locals "$d/locals" "$out/mpccb-data" 2
    for i in $(seq 2 $((bagents + 1))); do cat "$here/problem1-agent.toml" >>"$d/locals/node$i.toml"; done
    "$here/pfcb-locals.sh" "$d/locals" "$pagents" 10
  fi
  wan_up $((k + 3)) "$profile" "$d/locals"
  ping_spec "$d/ping.toml" "$pings"
  echo "== $profile: ping node1 <-> node2, $pings round trips ==" >&2
  if ! run_session 1 "$d/ping.toml" "$d/ping.json"; then
    echo "wan.sh: the ping session on $profile failed:" >&2
    cat "$d/ping.json" >&2
    return 1
  fi
  local med p99
  med=$(json "$d/ping.json" '"%.2f" % (r["result"]["median_us"][0][1] / 1e3)')
  p99=$(json "$d/ping.json" '"%.2f" % (r["result"]["p99_us"][0][1] / 1e3)')
  ping_rows+=("$(printf '| %s | %s | %s | %s | %s |' "$profile" "$(awk -v l="$(one_way_ms "$profile")" 'BEGIN { print 2 * l }')" "$med" "$p99" "$pings")")
  echo "   round trip median $med ms, p99 $p99 ms" >&2

  samba_spec "$d/samba.toml" "$k" "$n" ucb
  echo "== $profile: SAMBA K = $k UCB N = $n ==" >&2
  local state ms="" floor drops efloor
  run_session 1 "$d/samba.toml" "$d/samba.json" || true
  # Connections lost while the daemons ran (the lossy profile closes some).
  drops=$(cat "$d"/node*/daemon.log | grep -c 'address-book peer disconnected' || true)
  state=$(json "$d/samba.json" 'r["session"]["state"]' 2>/dev/null || echo "no result")
  floor=$(awk -v l="$(one_way_ms "$profile")" 'BEGIN { printf "%.1f", 4 * l }')
  if [ "$state" = completed ]; then
    ms=$(json "$d/samba.json" '"%.2f" % r["result"]["ms_per_step"]')
    # The emulated floor: 4 one-way latencies as the links really delay
    # them, half the ping's median round trip each.
    efloor=$(awk -v r="$med" 'BEGIN { printf "%.1f", 2 * r }')
    samba_rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s |' "$profile" "$k" "$floor" "$ms" \
      "$(awk -v m="$ms" -v f="$floor" 'BEGIN { if (f > 0) printf "%.2f", m / f; else print "-" }')" \
      "$efloor" "$(awk -v m="$ms" -v f="$efloor" 'BEGIN { if (f > 0) printf "%.2f", m / f; else print "-" }')" "$drops")")
    echo "   $ms ms per step (floor $floor); $drops peer disconnections logged" >&2
  else
    local reason
    reason=$(json "$d/samba.json" 'r["session"].get("reason", "")' 2>/dev/null || true)
    samba_rows+=("| $profile | $k | $floor | $state: $reason | - | - | - | $drops |")
    echo "   SAMBA on $profile ended $state: $reason ($drops peer disconnections logged)" >&2
    status=1
  fi
  if [ -n "$psteps" ]; then
    measure_pattern "$profile" "$k" "$psteps" "$ms"
  fi
  if [ -n "$msteps" ]; then
    measure_mpccb "$profile" "$d" "$msteps" "$med"
    measure_bai "$profile" "$d" "$bagents"
    measure_pfcb "$profile" "$d" "$pagents" "$prounds" "$med"
  fi
  wan_down
  wan_dir=$out
}

# measure_pattern PROFILE K STEPS SAMBA-MS: `bench pattern --processes` with
# its parties where SAMBA's are (controller node2, comp node3, owners
# node4 …), each in its namespace (a --party-wrapper), reaching each other
# through the same links (--routes to the pattern proxies, --listen on the
# namespace's 127.0.0.1:4101): the bare message pattern's ms per step on
# these links, and SAMBA's ratio to it.
measure_pattern() {
  local profile=$1 k=$2 steps=$3 samba=$4 a b pms
  # shellcheck disable=SC2016 # the wrapper expands $BANDIT_PATTERN_PARTY when it runs, not now
  printf '#!/bin/sh\nexec ip netns exec "bnwan-$((%s + 2))" "$@"\n' '$BANDIT_PATTERN_PARTY' >"$out/bin/pattern-wrap"
  chmod +x "$out/bin/pattern-wrap"
  : >"$wan_dir/pattern-routes"
  for a in $(seq 0 $((k + 1))); do
    for b in $(seq 0 $((k + 1))); do
      [ "$a" = "$b" ] && continue
      echo "$a $b /ip4/10.77.0.$((12 + b))/tcp/$((21002 + a))" >>"$wan_dir/pattern-routes"
    done
  done
  echo "== $profile: bench pattern K = $k, $steps steps, parties in the namespaces ==" >&2
  if ! timeout 600 "$out/bin/bandit-node" bench pattern --processes --k "$k" --steps "$steps" --warmup 20 \
    --listen /ip4/127.0.0.1/tcp/4101 --routes "$wan_dir/pattern-routes" --party-wrapper "$out/bin/pattern-wrap" \
    --json >"$wan_dir/pattern.json" 2>"$wan_dir/pattern.log" 9>&-; then
    echo "   bench pattern on $profile failed:" >&2
    tail -5 "$wan_dir/pattern.log" >&2
    pattern_rows+=("| $profile | $k | $steps | failed | - | - |")
    status=1
    return
  fi
  pms=$(json "$wan_dir/pattern.json" '"%.2f" % r["ms_per_step"]')
  pattern_rows+=("| $profile | $k | $steps | $pms | ${samba:--} | $(ratio "${samba:-0}" "$pms") |")
  echo "   $pms ms per step (SAMBA ${samba:--})" >&2
}

# measure_batched PROFILE K B[@N]...: batched SAMBA on one network of K + 3
# daemons, one session a B (algorithm $algorithm, budget N or $budget).
# Floor of a session: its rounds (the steps K+1..N cut into batches of B,
# times the algorithm's iterations: the data owners' score messages less
# their final one, over K) each costing
#   4 one-way latencies (owners -> controller -> comp -> controller -> owners)
#   + (one owner's scores + the controller's envelopes to comp + one owner's
#      bits) / bandwidth,
# every link (each direction of each pair) its own bandwidth: the K owners'
# messages cross K links at once, and comp's answers flow back while the
# controller's envelopes still arrive (comp's bytes count only where they
# exceed the controller's). The bytes are the roles' own (costs in the
# result; the controller's to comp are its bytes less the bits it forwards,
# comp's); libp2p's framing is left out, so the floor is a lower bound.
# Measured: the controller's steps_seconds over those rounds (setup and the
# encrypted sum excluded) and, for the 10-minute bound, the session's wall
# time; regret = N x the best arm's mean - the cumulative reward.
measure_batched() {
  local profile=$1 k=$2 d spec b n f state reason
  shift 2
  d=$out/batch-$profile
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  wan_dir=$d
  samba_locals "$d" "$k"
  wan_up $((k + 3)) "$profile" "$d/locals"
  local best med=0
  best=$(awk -F, 'NR == 2 { print $2 }' "$root/protocol/samba/testdata/movielens_K100_sorted_desc.csv")
  # The links as they really delay: a ping session's median round trip
  # between the data customer and the controller (100 round trips).
  ping_spec "$d/ping.toml" 100
  echo "== $profile: ping node1 <-> node2, 100 round trips ==" >&2
  if run_session 1 "$d/ping.toml" "$d/ping.json"; then
    med=$(json "$d/ping.json" '"%.2f" % (r["result"]["median_us"][0][1] / 1e3)')
    echo "   round trip median $med ms" >&2
  else
    echo "   the ping session failed; no floor from the measured round trip" >&2
  fi
  for spec in "$@"; do
    b=${spec%@*}
    n=$budget
    [ "$spec" != "$b" ] && n=${spec#*@}
    f=$d/samba-b$b-n$n
    samba_spec "$f.toml" "$k" "$n" "$algorithm" "$b"
    local before after
    before=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "== $profile: SAMBA K = $k $algorithm N = $n B = $b (load $before) ==" >&2
    run_session 1 "$f.toml" "$f.json" || true
    after=$(cut -d' ' -f1-3 /proc/loadavg)
    state=$(json "$f.json" 'r["session"]["state"]' 2>/dev/null || echo "no result")
    if [ "$state" != completed ]; then
      reason=$(json "$f.json" 'r["session"].get("reason", "")' 2>/dev/null || true)
      batch_rows+=("| $profile | $algorithm | $b | $n | $state: $reason | - | - | - | - | - | - | - | - | - | - | - | - | $before / $after |")
      echo "   SAMBA B = $b on $profile ended $state: $reason" >&2
      status=1
      continue
    fi
    local row
    row=$(python3 - "$f.json" "$k" "$b" "$n" "$(one_way_ms "$profile")" "$(bytes_per_ms "$profile")" "$best" "$(wall_ms "$f.json")" "$med" "$(jitter_ms "$profile")" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))["result"]
k, b, n = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
lat, bw, best, wall, rtt = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9])
jit = float(sys.argv[10])
c = r["costs"]
rounds = c["data_owner"]["messages"] // k - 1
owner = c["data_owner"]["bytes"] / k / rounds
comp = c["comp"]["bytes"] / rounds
to_comp = (c["controller"]["bytes"] - c["comp"]["bytes"]) / rounds
bits = comp / k
xfer = (owner + max(to_comp, comp) + bits) / bw if bw > 0 else 0
per = 4 * lat + xfer
floor_s = rounds * per / 1e3
# The same with the links' measured latency: 2 ping medians a round.
efloor_s = rounds * (2 * rtt + xfer) / 1e3 if rtt > 0 else 0
# With the jitter's slowest message: the round waits for the last of the K
# owners' messages, then for the last of the controller's burst to comp
# (many chunks: about latency + jitter), the last of comp's answers
# (likewise), the last of the K owners' bits; the expected maximum of K
# uniform delays in latency ± jitter is latency + jitter (K - 1) / (K + 1).
jfloor_s = rounds * (2 * (lat + jit * (k - 1) / (k + 1)) + 2 * (lat + jit) + xfer) / 1e3
steps = r["steps_seconds"]
proj = r["ms_per_step"] * (100000 - k) / 1e3
regret = n * best - r["cumulative_reward"]
def ratio(a, b):
    return "%.2f" % (a / b) if b > 0 else "-"
print("%d | %.1f | %.1f | %.1f | %s | %.1f | %s | %.1f | %s | %.1f | %.0f | %d | %.0f" % (
    rounds, per, floor_s, steps, ratio(steps, floor_s), efloor_s, ratio(steps, efloor_s), jfloor_s, ratio(steps, jfloor_s),
    wall / 1e3, proj, r["cumulative_reward"], regret))
PY
)
    batch_rows+=("| $profile | $algorithm | $b | $n | $row | $before / $after |")
    echo "   ${batch_rows[-1]}" >&2
  done
  wan_down
  wan_dir=$out
}

# failed NAME PROFILE FILE: report a session that did not complete.
failed() {
  local reason
  reason=$(json "$3" 'r["session"]["state"] + ": " + r["session"].get("reason", "")' 2>/dev/null || echo "no result")
  echo "   $1 on $2: $reason" >&2
  status=1
  echo "$reason"
}

# measure_mpccb PROFILE DIR STEPS PING-MEDIAN: the private contextual bandit,
# P = 2, Fashion-MNIST. Its floor a step is the larger of two links' times:
#   the feature parties': rounds_per_step one-way latencies (their
#     exchanges, each a message both ways at once) plus bytes_per_step / 2
#     over the bandwidth: the bytes the two parties send each other cross
#     two directions, each its own proxy with its own bandwidth, and an even
#     split is the least the busier one can carry;
#   the dealer's: dealer_bytes_per_step (its corrections to feature party 0)
#     over the bandwidth. The window lets the dealer work ahead, so its
#     latency is hidden, but its link carries those bytes every step.
# Sequentially the feature parties' time binds (continental: 308.7 ms
# against the dealer's 232,360 B / 2,500 B/ms = 92.9 ms), so the max leaves
# these rows as they were; in batches the dealer's binds (measure_mpccb_batched).
measure_mpccb() {
  local profile=$1 d=$2 steps=$3 med=$4 rounds bytes dealer ms floor efloor bw
  mpccb_spec "$d/mpccb.toml" 2 "$steps" 10
  echo "== $profile: mpccb P = 2, $steps steps ==" >&2
  run_session 1 "$d/mpccb.toml" "$d/mpccb.json" || true
  if [ "$(json "$d/mpccb.json" 'r["session"]["state"]' 2>/dev/null)" != completed ]; then
    mpccb_rows+=("| $profile | $steps | - | - | - | $(failed mpccb "$profile" "$d/mpccb.json") | - | - | - |")
    return
  fi
  rounds=$(json "$d/mpccb.json" 'r["result"]["rounds_per_step"]')
  bytes=$(json "$d/mpccb.json" '"%.0f" % r["result"]["bytes_per_step"]')
  ms=$(json "$d/mpccb.json" '"%.2f" % r["result"]["session_ms_per_step"]')
  dealer=$(json "$d/mpccb.json" '"%.0f" % r["result"]["dealer_bytes_per_step"]')
  bw=$(bytes_per_ms "$profile")
  floor=$(mpccb_floor "$rounds" "$(one_way_ms "$profile")" "$bytes" "$dealer" "$bw" | cut -d' ' -f1)
  efloor=$(mpccb_floor "$rounds" "$(awk -v m="$med" 'BEGIN { print m / 2 }')" "$bytes" "$dealer" "$bw" | cut -d' ' -f1)
  mpccb_rows+=("| $profile | $steps | $rounds | $bytes | $floor | $ms | $(ratio "$ms" "$floor") | $efloor | $(ratio "$ms" "$efloor") |")
  echo "   $ms ms per step (floor $floor, from the ping $efloor; $rounds rounds, $bytes bytes a step)" >&2
}

# mpccb_floor ROUNDS ONE-WAY BYTES DEALER-BYTES BYTES-PER-MS: the floor of
# an mpccb step in ms (measure_mpccb) and the term that binds: "parties" or
# "dealer" (bandwidth 0: unlimited, only the latency counts).
mpccb_floor() {
  awk -v r="$1" -v l="$2" -v b="$3" -v g="$4" -v w="$5" 'BEGIN {
    p = r * l + (w > 0 ? b / 2 / w : 0); q = (w > 0 ? g / w : 0)
    if (q > p) printf "%.1f dealer\n", q; else printf "%.1f parties\n", p }'
}

# measure_mpccb_batched PROFILE B[@N]...: the batched private contextual
# bandit (P = 2, |A| = 10, Fashion-MNIST) on one network of 5 daemons
# (feature parties node1 and node2, the arm puller node3, the reward
# receiver node4, the dealer node5), one session a B with params.batch = B
# and steps = N (default 60,000; window: the protocol's default, 2 batches
# when B > 1). Floor a step: mpccb_floor's, the larger of the feature
# parties' rounds x one-way + bytes / 2 / bandwidth and the dealer's
# bytes / bandwidth. Measured: the session's session_ms_per_step;
# projected: that x 60,000 steps. Each session may take up to 10 min plus
# 1 s a step sequentially or 200 ms a step in batches (the floor at B = 1 on
# continental is ≈ 309 ms, at B = 100 ≈ 48 ms).
measure_mpccb_batched() {
  local profile=$1 d spec b n f state reason maxn=0 lat bw
  shift
  d=$out/mpccb-batch-$profile
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  wan_dir=$d
  for spec in "$@"; do
    n=60000
    [ "$spec" != "${spec%@*}" ] && n=${spec#*@}
    [ "$n" -gt "$maxn" ] && maxn=$n
  done
  # One context and one reward row a step: the first maxn training images.
  if [ ! -f "$out/mpccb-data-$maxn/rewards.csv" ]; then
    echo "preparing the private contextual bandit's data (Fashion-MNIST, 2 feature parties, $maxn steps) ..." >&2
    "$out/bin/bandit-node" data mpccb --out "$out/mpccb-data-$maxn" --parties 2 --dataset fashion-mnist --arms 10 --steps "$maxn" >&2
  fi
  rm -rf "$d/locals"
  mpccb_locals "$d/locals" "$out/mpccb-data-$maxn" 2
  wan_up 5 "$profile" "$d/locals"
  lat=$(one_way_ms "$profile")
  bw=$(bytes_per_ms "$profile")
  # The rate the links deliver: 5 s of the profile's rate from the dealer
  # (node5) to feature party 0 (node1), before the sessions.
  local rate=0
  [ "$bw" != 0 ] && rate=$(link_rate 5 1 $((bw * 5000)))
  echo "   the link node5 → node1 delivers ${rate} bytes/ms (the profile: $bw)" >&2
  # A round with the jitter: one-way + the profile's jitter.
  local latj
  latj=$(awk -v l="$lat" -v j="$(jitter_ms "$profile")" 'BEGIN { print l + j }')
  for spec in "$@"; do
    b=${spec%@*}
    n=60000
    [ "$spec" != "$b" ] && n=${spec#*@}
    f=$d/mpccb-b$b-n$n
    mpccb_spec "$f.toml" 2 "$n" 10
    echo "batch = $b" >>"$f.toml"
    session_timeout=$((10 + n * (b == 1 ? 1000 : 200) / 60000))m
    local before after
    before=$(cut -d' ' -f1-3 /proc/loadavg)
    echo "== $profile: mpccb P = 2 B = $b N = $n (load $before; waiting $session_timeout at most) ==" >&2
    run_session 1 "$f.toml" "$f.json" || true
    after=$(cut -d' ' -f1-3 /proc/loadavg)
    state=$(json "$f.json" 'r["session"]["state"]' 2>/dev/null || echo "no result")
    if [ "$state" != completed ]; then
      reason=$(json "$f.json" 'r["session"].get("reason", "")' 2>/dev/null || true)
      mpccb_batch_rows+=("| $profile | $b | $n | $state: $reason | - | - | - | - | - | - | - | - | - | - | - | - | $before / $after |")
      echo "   mpccb B = $b on $profile ended $state: $reason" >&2
      status=1
      continue
    fi
    local rounds bytes dealer ms fl jfl lfl
    # Three decimals: at B = 1,000 a step has 0.094 rounds, and two
    # would take 0.1 ms off a 4.8 ms floor.
    rounds=$(json "$f.json" '"%.3f" % r["result"]["rounds_per_step"]')
    bytes=$(json "$f.json" '"%.0f" % r["result"]["bytes_per_step"]')
    dealer=$(json "$f.json" '"%.0f" % r["result"]["dealer_bytes_per_step"]')
    ms=$(json "$f.json" '"%.2f" % r["result"]["session_ms_per_step"]')
    fl=$(mpccb_floor "$rounds" "$lat" "$bytes" "$dealer" "$bw")
    # With the jitter: a round ends with the slower direction's last
    # chunk, about one-way + jitter (a message is many chunks).
    jfl=$(mpccb_floor "$rounds" "$latj" "$bytes" "$dealer" "$bw")
    # And with the rate the links deliver (link_rate).
    lfl=$(mpccb_floor "$rounds" "$latj" "$bytes" "$dealer" "$rate")
    # No floor where the links add nothing (the none profile).
    local floorcol="${fl% *} ms (${fl#* })" jcol="${jfl% *} ms" lcol="${lfl% *} ms (${rate} B/ms)"
    [ "${fl% *}" = 0.0 ] && fl="- -" floorcol=- jfl="- -" jcol=- lfl="- -" lcol=-
    mpccb_batch_rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |' \
      "$profile" "$(json "$f.json" 'r["result"]["batch"]')" "$n" "$rounds" "$bytes" "$dealer" "$floorcol" "$ms" \
      "$(ratio "$ms" "${fl% *}")" "$jcol" "$(ratio "$ms" "${jfl% *}")" "$lcol" "$(ratio "$ms" "${lfl% *}")" \
      "$(awk -v m="$ms" 'BEGIN { printf "%.1f", m * 60000 / 60000 }')" \
      "$(awk -v f="${fl% *}" 'BEGIN { if (f > 0) printf "%.1f", f * 60000 / 60000; else print "-" }')" \
      "$(json "$f.json" '"%.4f" % r["result"]["average_reward"]')" "$before" "$after")")
    echo "   ${mpccb_batch_rows[-1]}" >&2
  done
  wan_down
  wan_dir=$out
}

# measure_bai PROFILE DIR AGENTS: DP-MASE on Problem 1. Its agents never wait
# for the coordinator (votes and eliminations travel beside their local
# pulls), so latency is on its critical path only at the end: the last vote
# to the coordinator and the decision back, 2 one-way latencies a session.
# Reported: the wall time, the global eliminations (its communication
# rounds, each a broadcast), ms per elimination, and the wall time's excess
# over the none profile's against those 2 one-way latencies.
measure_bai() {
  local profile=$1 d=$2 agents=$3 wall elim
  bai_spec "$d/bai.toml" dp_mase 1 2 $((agents + 1))
  echo "== $profile: BAI DP-MASE, $agents agents ==" >&2
  run_session 1 "$d/bai.toml" "$d/bai.json" || true
  if [ "$(json "$d/bai.json" 'r["session"]["state"]' 2>/dev/null)" != completed ]; then
    bai_rows+=("| $profile | $agents | $(failed BAI "$profile" "$d/bai.json") | - | - | - | - | - | - |")
    return
  fi
  wall=$(wall_ms "$d/bai.json")
  elim=$(json "$d/bai.json" 'len(r["result"]["elimination_order"])')
  [ "$profile" = none ] && bai_none_ms=$wall
  bai_rows+=("| $profile | $agents | $(json "$d/bai.json" 'r["result"]["best_arm"]') | $(json "$d/bai.json" 'r["result"]["votes"]') | $elim | $wall | $(ratio "$wall" "$elim") | $(excess "$wall" "${bai_none_ms:-}") | $(awk -v l="$(one_way_ms "$profile")" 'BEGIN { print 2 * l }') |")
  echo "   $wall ms, $elim eliminations, best arm $(json "$d/bai.json" 'r["result"]["best_arm"]')" >&2
}

# measure_pfcb PROFILE DIR AGENTS ROUNDS PING-MEDIAN: P-FCB, m = 10
# producers. At each communication round every agent publishes its share
# and waits at a barrier for every other agent's: 1 one-way latency a
# communication round on the critical path (all publish at once). The agents
# act on the daemon's 100 ms ticks, so a barrier is released on a tick.
# Reported: wall time, communication rounds, ms per communication round,
# the excess over the none profile per communication round against 1 one-way.
measure_pfcb() {
  local profile=$1 d=$2 agents=$3 rounds=$4 med=$5 wall comm
  pfcb_spec "$d/pfcb.toml" "$agents" "$rounds"
  echo "== $profile: P-FCB, $agents agents, $rounds rounds ==" >&2
  run_session 1 "$d/pfcb.toml" "$d/pfcb.json" || true
  if [ "$(json "$d/pfcb.json" 'r["session"]["state"]' 2>/dev/null)" != completed ]; then
    pfcb_rows+=("| $profile | $agents | $rounds | $(failed P-FCB "$profile" "$d/pfcb.json") | - | - | - | - | - |")
    return
  fi
  wall=$(wall_ms "$d/pfcb.json")
  comm=$(json "$d/pfcb.json" 'len(r["result"]["communication_rounds"])')
  [ "$profile" = none ] && pfcb_none_ms=$wall
  local per excess_per=-
  per=$(ratio "$wall" "$comm")
  [ -n "${pfcb_none_ms:-}" ] && excess_per=$(awk -v w="$wall" -v n="$pfcb_none_ms" -v c="$comm" 'BEGIN { printf "%.1f", (w - n) / c }')
  pfcb_rows+=("| $profile | $agents | $rounds | $comm | $wall | $per | $excess_per | $(one_way_ms "$profile") | $(awk -v m="$med" 'BEGIN { printf "%.2f", m / 2 }') |")
  echo "   $wall ms, $comm communication rounds" >&2
}

# excess WALL NONE: WALL − NONE, or "-" without a none measurement.
excess() { if [ -n "$2" ]; then echo $(($1 - $2)); else echo -; fi; }

# partition SECONDS: a long ping session on metro between node1 and node2
# while node2's link (its veth's bridge end) is down for SECONDS.
partition() {
  local secs=$1 d=$out/partition pings=3000 pid state cut
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  wan_dir=$d
  wan_up 2 metro
  ping_spec "$d/ping.toml" "$pings"
  echo "== partition: ping node1 <-> node2 on metro, $pings round trips; node2's link cut for ${secs}s after 5 s ==" >&2
  run_session 1 "$d/ping.toml" "$d/ping.json" &
  pid=$!
  sleep 5
  cut=$(date -u +%Y-%m-%dT%H:%M:%S)
  echo "   $(date -u +%T) cutting node2's link (ip link set bnwan-h2 down)" >&2
  ip link set bnwan-h2 down
  sleep "$secs"
  ip link set bnwan-h2 up
  echo "   $(date -u +%T) node2's link restored" >&2
  wait "$pid" || true
  state=$(json "$d/ping.json" 'r["session"]["state"]' 2>/dev/null || echo "no result")
  partition_outcome="session $state"
  if [ "$state" = completed ]; then
    partition_outcome+=" after a ${secs}s cut: max round trip $(json "$d/ping.json" '"%.0f" % (r["result"]["max_us"][0][1] / 1e3)') ms, median $(json "$d/ping.json" '"%.2f" % (r["result"]["median_us"][0][1] / 1e3)') ms"
  else
    partition_outcome+=" after a ${secs}s cut: $(json "$d/ping.json" 'r["session"].get("reason", "")' 2>/dev/null || true)"
    status=1
  fi
  echo "   $partition_outcome" >&2
  echo "   what the daemons logged from the cut to the session's end:" >&2
  for i in 1 2; do
    awk -v t="time=$cut" '$1 >= t' "$d/node$i/daemon.log" | cut -c1-240 | sed "s/^/   node$i: /" >&2
  done
  wan_down
  wan_dir=$out
}

# close_used MS: SAMBA K = 3, N = 1,000 on metro, twice: once as is, then
# with every connection between the controller (node2) and comp (node3) —
# a link each step crosses twice — closed MS ms after its first byte (the
# redialed connection too, so it repeats). Reports each run's outcome, the
# closes the daemons logged, and the stall: the second run's time beyond the
# first's.
close_used() {
  local ms=$1 d=$out/close n=1000 state base=""
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  wan_dir=$d
  samba_locals "$d" 3
  samba_spec "$d/samba.toml" 3 "$n" ucb
  for run in plain closed; do
    if [ $run = closed ]; then
      # shellcheck disable=SC2054 # one argument: the links' names, comma-separated
      wan_link_args=(-close-links node2-node3,node3-node2 -close-after-ms "$ms")
    else
      wan_link_args=()
    fi
    wan_up 6 metro "$d/locals"
    echo "== used-link loss: SAMBA K = 3 N = $n on metro, $run ==" >&2
    # A session that neither completes nor aborts within WAN_CLOSE_WAIT_S
    # (default 120) is cancelled from node1, and reported as hung.
    run_session 1 "$d/samba.toml" "$d/samba-$run.json" &
    local pid=$! waited=0 hung=0
    while kill -0 "$pid" 2>/dev/null; do
      if [ $waited -ge $((${WAN_CLOSE_WAIT_S:-120} * 10)) ]; then
        hung=1
        local id
        id=$(wan_cli 1 session list --config "$d/node1/config.toml" | awk '$3 == "samba" && $5 == "running" { print $1; exit }')
        echo "   no completion or abort in ${WAN_CLOSE_WAIT_S:-120} s: cancelling session $id" >&2
        # shellcheck disable=SC2015 # a failed cancel (the session ended meanwhile) is fine
        [ -n "$id" ] && wan_cli 1 session cancel --config "$d/node1/config.toml" "$id" >&2 || true
        break
      fi
      sleep 0.1
      waited=$((waited + 1))
    done
    wait "$pid" || true
    state=$(json "$d/samba-$run.json" 'r["session"]["state"]' 2>/dev/null || echo "no result")
    local secs drops
    drops=$(cat "$d"/node2/daemon.log "$d"/node3/daemon.log | grep 'address-book peer disconnected' | grep -c 'node[23] ' || true)
    if [ "$state" = completed ]; then
      secs=$(json "$d/samba-$run.json" '"%.2f" % r["result"]["steps_seconds"]')
      close_rows+=("| $run | completed | $(json "$d/samba-$run.json" 'r["session"]["progress"]["step"]') of $n | $(json "$d/samba-$run.json" 'r["result"]["cumulative_reward"]') | $(json "$d/samba-$run.json" 'r["result"]["messages_per_step_iteration"]') | $secs | $(json "$d/samba-$run.json" '"%.2f" % r["result"]["ms_per_step"]') | $drops |")
      [ $run = plain ] && base=$secs
      [ $run = closed ] && [ -n "$base" ] && close_outcome="the session completed; stall (its time beyond the plain run's): $(awk -v a="$secs" -v b="$base" 'BEGIN { printf "%.2f", a - b }') s"
    else
      close_rows+=("| $run | $state: $(json "$d/samba-$run.json" 'r["session"].get("reason", "")' 2>/dev/null || true) | stopped at $(json "$d/samba-$run.json" 'r["session"].get("progress", {}).get("step", 0)' 2>/dev/null || echo "?") of $n | - | - | $(wall_ms "$d/samba-$run.json" 2>/dev/null || echo -) ms | - | $drops |")
      # An abort under the closes is an outcome to report, not a failure
      # of the run; the plain run must complete.
      if [ $run = closed ]; then
        close_outcome="the session ended $state"
        [ $hung = 1 ] && close_outcome="the session hung: neither completed nor aborted in ${WAN_CLOSE_WAIT_S:-120} s, then cancelled"
      else
        status=1
      fi
    fi
    echo "   $run: ${close_rows[-1]}" >&2
    echo "   what node2 and node3 logged about each other:" >&2
    for i in 2 3; do
      grep -E 'peer (dis)?connected|session (aborted|completed)|party (finished|failed)' "$d/node$i/daemon.log" | grep -vE 'peer="node([14-9]|1[0-9]) ' |
        cut -c1-200 | sed "s/^/   node$i: /" >&2 || true
    done
    cp "$d/node2/daemon.log" "$d/node2-$run.log"
    cp "$d/node3/daemon.log" "$d/node3-$run.log"
    wan_down
  done
  # shellcheck disable=SC2034 # read by wan_up (wan-net.sh)
  wan_link_args=()
  wan_dir=$out
}

status=0
batch_rows=() mpccb_batch_rows=()
close_rows=() close_outcome=""
ping_rows=() samba_rows=() pattern_rows=() mpccb_rows=() bai_rows=() pfcb_rows=() partition_outcome="" bai_none_ms="" pfcb_none_ms=""
if [ ${#batches[@]} -gt 0 ]; then
  session_timeout=60m
  [ ${#chosen[@]} -gt 0 ] || chosen=(continental)
  for p in "${chosen[@]}"; do
    measure_batched "$p" 10 "${batches[@]}"
  done
elif [ ${#mbatches[@]} -gt 0 ]; then
  [ ${#chosen[@]} -gt 0 ] || chosen=(continental)
  for p in "${chosen[@]}"; do
    measure_mpccb_batched "$p" "${mbatches[@]}"
  done
elif [ $close_only = 1 ]; then
  close_used "${WAN_CLOSE_MS:-5000}"
elif [ $partition_only = 1 ]; then
  partition "${WAN_PARTITION_S:-10}"
elif [ $short = 1 ]; then
  measure lan 3 200 200
else
  [ ${#chosen[@]} -gt 0 ] || chosen=(none lan metro continental lossy)
  echo "preparing the private contextual bandit's data (Fashion-MNIST, 2 feature parties) ..." >&2
  "$out/bin/bandit-node" data mpccb --out "$out/mpccb-data" --parties 2 --dataset fashion-mnist --arms 10 --steps 300 >&2
  for p in "${chosen[@]}"; do
    case $p in
    none) measure none 10 2000 500 300 8 4 5000 2000 ;;
    lan) measure lan 10 2000 500 300 8 4 5000 2000 ;;
    metro) measure metro 10 1000 200 100 8 4 5000 500 ;;
    continental) measure continental 10 300 100 30 8 4 5000 100 ;;
    lossy) measure lossy 10 1000 200 100 8 4 5000 500 ;;
    esac
  done
  [ $partition = 1 ] && partition "${WAN_PARTITION_S:-10}"
  [ $closing = 1 ] && close_used "${WAN_CLOSE_MS:-5000}"
fi

{
  if [ ${#batch_rows[@]} -gt 0 ]; then
    echo
    echo "Batched SAMBA, K = 10 (floor: rounds x (4 one-way + a round's critical-path bytes / bandwidth); from measured RTT: 2 ping medians instead of 4 one-way; with jitter: each leg's slowest message; measured: the steps K+1..N; wall: the whole session; regret: N x the best mean - the reward)"
    echo "| profile | algorithm | B | N | rounds | floor ms/round | floor s | measured s | ratio | floor from measured RTT s | ratio to it | floor with jitter s | ratio to it | wall s | projected s at N = 100,000 | cumulative reward | regret | load before / after |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${batch_rows[@]}"
  fi
  if [ ${#mpccb_batch_rows[@]} -gt 0 ]; then
    echo
    echo "Batched mpccb, P = 2, |A| = 10, Fashion-MNIST (per step; floor: max(rounds x one-way + bytes / 2 / bandwidth, dealer bytes / bandwidth), the term that binds in brackets; with jitter: each round's slower direction, one-way + jitter; the links' floor: that with the rate a link delivered (link_rate); measured: session_ms_per_step; projected: x 60,000 steps)"
    echo "| profile | B | N | rounds/step | bytes/step | dealer bytes/step | floor ms/step | measured ms/step | ratio | floor with jitter ms/step | ratio to it | the links' floor ms/step (their rate) | ratio to it | projected min at 60,000 | floor min at 60,000 | average reward | load before / after |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${mpccb_batch_rows[@]}"
  fi
  [ ${#ping_rows[@]} -gt 0 ] && {
  echo
  echo "Ping round trip, node1 -> node2 (ms)"
  echo "| profile | 2 x one-way | median | p99 | round trips |"
  echo "| --- | --- | --- | --- | --- |"
  printf '%s\n' "${ping_rows[@]}"
  echo
  echo "SAMBA UCB ms per step (floor: 4 one-way latencies a step; from measured RTT: 2 ping medians)"
  echo "| profile | K | floor ms/step | measured ms/step | ratio | floor from measured RTT | ratio to it | peer disconnections |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${samba_rows[@]}"
  }
  if [ ${#pattern_rows[@]} -gt 0 ]; then
    echo
    echo "Bare SAMBA message pattern (bench pattern --processes, parties in the namespaces) against SAMBA, ms per step"
    echo "| profile | K | steps | pattern ms/step | SAMBA ms/step | daemon / bare |"
    echo "| --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${pattern_rows[@]}"
  fi
  if [ ${#mpccb_rows[@]} -gt 0 ]; then
    echo
    echo "mpccb P = 2 ms per step (floor: max(rounds x one-way + bytes / 2 / bandwidth, dealer bytes / bandwidth); from measured RTT: the same with ping median / 2 for one-way)"
    echo "| profile | steps | rounds/step | bytes/step | floor ms/step | measured ms/step | ratio | floor from measured RTT | ratio to it |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${mpccb_rows[@]}"
    echo
    echo "BAI DP-MASE (asynchronous: floor 2 one-way a session, the last vote and the decision)"
    echo "| profile | agents | best arm | votes | eliminations | wall ms | wall ms / elimination | wall ms over none | floor: 2 x one-way |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${bai_rows[@]}"
    echo
    echo "P-FCB (a barrier each communication round: floor 1 one-way a communication round)"
    echo "| profile | agents | rounds | communication rounds | wall ms | wall ms / comm. round | over none, ms / comm. round | floor: one-way ms | floor from measured RTT |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${pfcb_rows[@]}"
  fi
  [ -z "$partition_outcome" ] || { echo; echo "Partition: $partition_outcome"; }
  if [ ${#close_rows[@]} -gt 0 ]; then
    echo
    echo "Used-link loss: SAMBA K = 3 on metro, controller <-> comp connections closed ${WAN_CLOSE_MS:-5000} ms after their first byte: $close_outcome"
    echo "| run | outcome | steps | cumulative reward | messages per step | steps seconds | ms/step | node2<->node3 disconnections |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${close_rows[@]}"
  fi
} | tee "$out/summary.md"
exit $status
