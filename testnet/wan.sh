#!/usr/bin/env bash
# wan.sh DIR [--short] [--profile none|lan|metro|continental|lossy]... [--no-partition]
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
# prints the table profile | floor | measured | ratio (also against the floor
# that the links really give, 2 ping medians a step), then runs the partition
# scenario (unless --no-partition): a long ping session on metro during which
# node2's link is cut for $WAN_PARTITION_S seconds (default 10, shorter than
# session.peer_timeout's 30 s), and reports whether the session completed,
# with the daemons' log lines about it.
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
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

usage() { echo "usage: $0 DIR [--short] [--profile none|lan|metro|continental|lossy]... [--no-partition]" >&2; exit 2; }
[ $# -ge 1 ] || usage
out=$1
shift
short=0 partition=1 chosen=()
while [ $# -gt 0 ]; do
  case $1 in
  --short) short=1 ;;
  --no-partition) partition=0 ;;
  --profile)
    [ $# -ge 2 ] || usage
    case $2 in none | lan | metro | continental | lossy) chosen+=("$2") ;; *) echo "wan.sh: unknown profile '$2'" >&2; usage ;; esac
    shift
    ;;
  *) usage ;;
  esac
  shift
done

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
(cd "$root" && go build -o "$out/bin/bandit-node" ./cmd/bandit-node && go build -o "$out/bin/wanlink" ./testnet/wanlink)

# one_way_ms PROFILE: the profile's one-way latency (testnet/wanlink/profile.go).
one_way_ms() {
  case $1 in none) echo 0 ;; lan) echo 0.5 ;; metro | lossy) echo 5 ;; continental) echo 25 ;; esac
}

# json FILE PYTHON-EXPR: a value of a session's JSON result (as r).
json() {
  python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# run_session I SPEC RESULT: start SPEC from node I and wait for it (10 min at
# most); the JSON result goes to RESULT. Returns the CLI's status.
run_session() {
  # In the background and waited for, so that a SIGTERM to this script runs
  # its trap at once instead of after the session.
  timeout 600 ip netns exec "$(wan_ns "$1")" "$wan_dir/bin/bandit-node" session start \
    --config "$wan_dir/node$1/config.toml" "$2" --wait --json >"$3" 9>&- &
  wait $!
}

# ping_spec FILE COUNT: a ping session between node1 and node2.
ping_spec() {
  printf 'protocol = "ping"\n[roles]\nparticipant = ["node1", "node2"]\n[params]\ncount = %s\n' "$2" >"$1"
}

# measure PROFILE K N PINGS: the profile's ping and SAMBA rows.
measure() {
  local profile=$1 k=$2 n=$3 pings=$4 d
  d=$out/$profile
  mkdir -p "$d"
  wan_dir=$d
  mkdir -p "$d/bin"
  ln -sf "$out/bin/bandit-node" "$out/bin/wanlink" "$d/bin/"
  samba_locals "$d" "$k"
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
  local state ms floor drops efloor
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
  wan_down
  wan_dir=$out
}

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

status=0
ping_rows=() samba_rows=() partition_outcome=""
if [ $short = 1 ]; then
  measure lan 3 200 200
else
  [ ${#chosen[@]} -gt 0 ] || chosen=(none lan metro continental lossy)
  for p in "${chosen[@]}"; do
    case $p in
    none) measure none 10 2000 500 ;;
    lan) measure lan 10 2000 500 ;;
    metro) measure metro 10 1000 200 ;;
    continental) measure continental 10 300 100 ;;
    lossy) measure lossy 10 1000 200 ;;
    esac
  done
  [ $partition = 1 ] && partition "${WAN_PARTITION_S:-10}"
fi

{
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
  [ -z "$partition_outcome" ] || { echo; echo "Partition: $partition_outcome"; }
} | tee "$out/summary.md"
exit $status
