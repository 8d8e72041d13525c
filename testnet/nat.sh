#!/usr/bin/env bash
# nat.sh DIR
#
# Organizations behind NAT, in network namespaces: node1 (public, runs the
# relay service: [relay] service = true) and node2, node3, each behind its
# own router namespace that masquerades its traffic (iptables MASQUERADE) and
# forwards no inbound connection. node2 and node3 reserve at node1's relay
# ([relay] via = "node1") and reach each other only through it ([[peers]]
# relay = "node1", no address). The script checks that
#   1. node2 cannot open a TCP connection to node3's address (the NAT holds);
#   2. all three connect, node2 and node3 to each other through the relay
#      (`peers --json` says conn = relayed, or direct if hole punching won);
#   3. a ping session between node2 and node3 completes, and prints its
#      round trips beside those of a ping session node1–node2 (direct);
#   4. a SAMBA session (K = 2, N = 300) runs with its controller behind a NAT
#      (node2) and one data owner behind the other (node3), so that the
#      controller's every step crosses the relay, and a second one with the
#      same roles on public organizations (node5, node6, node7) only: both
#      complete, and their ms per step are printed side by side with how each
#      controller reached each data owner (relayed or direct);
#   5. a stranger, node4 (public, in nobody's book), is refused by the relay
#      and reaches neither node1 nor node3.
#
# Layout: namespace bnnat-wan routes 10.88.0.0/16 (node1 10.88.0.2, router
# of node2 10.88.1.2, router of node3 10.88.2.2, node4 10.88.3.2, node5-7
# 10.88.5-7.2); bnnat-r2 / bnnat-r3 are the routers, node2 at 192.168.2.2
# and node3 at 192.168.3.2 behind them.
# Needs root, iproute2 and iptables (installed with apt-get if missing).
# Everything it makes (namespaces bnnat-*, their processes) is removed on
# exit, failure or Ctrl-C, and a leftover of a killed run at start. Logs and
# results stay in DIR.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
if [ "$(id -u)" != 0 ] || ! ip netns list >/dev/null 2>&1; then
  echo "nat.sh: needs root and iproute2's 'ip netns'" >&2
  exit 1
fi
command -v iptables >/dev/null || apt-get install -y -q iptables >/dev/null
command -v python3 >/dev/null || { echo "nat.sh: needs python3 to read JSON" >&2; exit 1; }

nss=(bnnat-wan bnnat-n1 bnnat-r2 bnnat-n2 bnnat-r3 bnnat-n3 bnnat-n4 bnnat-n5 bnnat-n6 bnnat-n7)
nat_down() {
  local ns pids
  for ns in "${nss[@]}"; do
    ip netns list 2>/dev/null | grep -qw "^$ns" || continue
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill $pids 2>/dev/null || true
  done
  sleep 0.5
  for ns in "${nss[@]}"; do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
}
nat_down
trap nat_down EXIT

mkdir -p "$out/bin"
bin=$out/bin/bandit-node
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then # a prebuilt binary (.ci/run's)
  [ "$BANDIT_TESTNET_BIN" -ef "$bin" ] || cp "$BANDIT_TESTNET_BIN" "$bin"
else
  (cd "$root" && go build -o "$bin" ./cmd/bandit-node)
fi

# link NS1 IF1 ADDR1 NS2 IF2 ADDR2: a veth pair between two namespaces.
link() {
  ip link add "$2" netns "$1" type veth peer name "$5" netns "$4"
  ip -n "$1" addr add "$3" dev "$2"
  ip -n "$4" addr add "$6" dev "$5"
  ip -n "$1" link set "$2" up
  ip -n "$4" link set "$5" up
}
for ns in "${nss[@]}"; do
  ip netns add "$ns"
  ip -n "$ns" link set lo up
done
link bnnat-wan w1 10.88.0.1/24 bnnat-n1 eth0 10.88.0.2/24
ip -n bnnat-n1 route add default via 10.88.0.1
link bnnat-wan w4 10.88.3.1/24 bnnat-n4 eth0 10.88.3.2/24
ip -n bnnat-n4 route add default via 10.88.3.1
for k in 5 6 7; do
  link bnnat-wan "w$k" "10.88.$k.1/24" "bnnat-n$k" eth0 "10.88.$k.2/24"
  ip -n "bnnat-n$k" route add default via "10.88.$k.1"
done
for k in 2 3; do
  r=bnnat-r$k n=bnnat-n$k
  link bnnat-wan "w$k" "10.88.$((k - 1)).1/24" "$r" wan "10.88.$((k - 1)).2/24"
  link "$r" lan "192.168.$k.1/24" "$n" eth0 "192.168.$k.2/24"
  ip -n "$r" route add default via "10.88.$((k - 1)).1"
  ip -n "$n" route add default via "192.168.$k.1"
  ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
  # The NAT: outbound masqueraded, inbound only for connections made from inside.
  ip netns exec "$r" iptables -t nat -A POSTROUTING -o wan -j MASQUERADE
  ip netns exec "$r" iptables -A FORWARD -i wan -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT
  ip netns exec "$r" iptables -A FORWARD -i wan -j DROP
done
ip netns exec bnnat-wan sysctl -qw net.ipv4.ip_forward=1

declare -a ids
rm -rf "$out"/node[1-7]
for i in 1 2 3 4 5 6 7; do
  ids[$i]=$("$bin" init --dir "$out/node$i" --name "node$i" --policy-open \
    --listen /ip4/0.0.0.0/tcp/4001 --api 127.0.0.1:4100 2>/dev/null)
done
peer() { printf '\n[[peers]]\nname = "%s"\npeer_id = "%s"\n%s\n' "$1" "$2" "$3"; }
# public J: the [[peers]] entry of public node J (1, 5, 6 or 7).
public() {
  local a=10.88.0.2
  [ "$1" = 1 ] || a=10.88.$1.2
  peer "node$1" "${ids[$1]}" "addrs = [\"/ip4/$a/tcp/4001\"]"
}
{
  peer node2 "${ids[2]}" ""
  peer node3 "${ids[3]}" ""
  for j in 5 6 7; do public "$j"; done
  printf '\n[relay]\nservice = true\n'
} >>"$out/node1/config.toml"
for k in 2 3; do
  o=$((5 - k))
  {
    for j in 1 5 6 7; do public "$j"; done
    peer "node$o" "${ids[$o]}" 'relay = "node1"'
    printf '\n[relay]\nvia = "node1"\n'
  } >>"$out/node$k/config.toml"
done
# node5-7, public: the NATed node2 and node3 dial them (nobody can dial in).
for j in 5 6 7; do
  {
    for p in 1 5 6 7; do [ "$p" = "$j" ] || public "$p"; done
    peer node2 "${ids[2]}" ""
    peer node3 "${ids[3]}" ""
  } >>"$out/node$j/config.toml"
done
# The SAMBA sessions use 1024-bit Paillier keys to keep the run short; a
# daemon refuses keys under 2048 bits unless its policy allows them.
for i in 1 2 3 4 5 6 7; do
  printf '\n[policy.samba.min]\npaillier_bits = 1024\n' >>"$out/node$i/config.toml"
done
# The data owners' arms, for the SAMBA sessions.
printf '\n[local.samba.data_owner]\nbernoulli = 0.6\n' >>"$out/node3/config.toml"
printf '\n[local.samba.data_owner]\nbernoulli = 0.6\n' >>"$out/node6/config.toml"
printf '\n[local.samba.data_owner]\nbernoulli = 0.3\n' >>"$out/node5/config.toml"
# node4, public, is a stranger: in nobody's address book, it knows node1's
# address and that node3 is behind node1's relay.
{
  peer node1 "${ids[1]}" 'addrs = ["/ip4/10.88.0.2/tcp/4001"]'
  peer node3 "${ids[3]}" 'relay = "node1"'
} >>"$out/node4/config.toml"
for i in 1 2 3 4 5 6 7; do
  ip netns exec "bnnat-n$i" "$bin" run --config "$out/node$i/config.toml" >"$out/node$i/daemon.log" 2>&1 &
  echo $! >"$out/node$i/pid"
done
cli() { local i=$1; shift; ip netns exec "bnnat-n$i" "$bin" "$@"; }

if ip netns exec bnnat-n2 timeout 3 bash -c 'exec 3<>/dev/tcp/192.168.3.2/4001' 2>/dev/null; then
  echo "nat.sh: FAIL: node2 opened a TCP connection to node3's private address: the NAT does not hold" >&2
  exit 1
fi
echo "nat.sh: node2 cannot reach node3's address 192.168.3.2 directly (NAT holds)"

conn() { cli "$1" peers --config "$out/node$1/config.toml" --json 2>/dev/null |
  python3 -c 'import json,sys; print(" ".join(p["name"] + "=" + (p.get("conn") or "-") for p in json.load(sys.stdin)))'; }
deadline=$((SECONDS + 60))
# connected I: how many of node I's peers are connected.
connected() { conn "$1" | tr ' ' '\n' | grep -vc -- '=-$' || true; }
until [ "$(connected 2)" = 5 ] && [ "$(connected 3)" = 5 ] && [ "$(connected 1)" = 5 ]; do
  if [ $SECONDS -ge $deadline ]; then
    echo "nat.sh: FAIL: the six organizations did not all connect in 60 s" >&2
    for i in 1 2 3; do echo "--- node$i" >&2; tail -15 "$out/node$i/daemon.log" >&2; done
    exit 1
  fi
  sleep 0.5
done
echo "nat.sh: connected: node2 [$(conn 2)], node3 [$(conn 3)]"

printf 'protocol = "ping"\n[roles]\nparticipant = ["node2", "node3"]\n[params]\ncount = 50\n' >"$out/ping23.toml"
printf 'protocol = "ping"\n[roles]\nparticipant = ["node2", "node1"]\n[params]\ncount = 50\n' >"$out/ping21.toml"
for s in 23 21; do
  if ! cli 2 session start --config "$out/node2/config.toml" "$out/ping$s.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$out/ping$s.json" 2>"$out/ping$s.err"; then
    echo "nat.sh: FAIL: the ping session $s did not complete:" >&2
    cat "$out/ping$s.err" >&2
    exit 1
  fi
done
echo "nat.sh: ping node2-node3 (through the relay) and node2-node1 (direct) completed"
python3 - "$out" <<'PY'
import json, sys
for s, how in (("23", "node2-node3, relayed"), ("21", "node2-node1, direct")):
    d = json.load(open(f"{sys.argv[1]}/ping{s}.json"))
    r = d.get("result") or d
    print(f"nat.sh: ping {how}: median round trip {r['median_us'][0][1] / 1e3:.3f} ms, p99 {r['p99_us'][0][1] / 1e3:.3f} ms ({r['count']} pings)")
PY
echo "nat.sh: node3 after the sessions: [$(conn 3)]"

# SAMBA with the controller and a data owner behind NATs, then the same
# roles on public organizations only. The data customer and comp are node1
# in both (a pair SAMBA allows); node3 and node6 have the same arm.
samba_spec() { printf 'protocol = "samba"\n[roles]\ndata_customer = "node1"\ncomp = "node1"\ncontroller = "%s"\ndata_owner = ["%s", "node5"]\n[params]\nbudget = 300\npaillier_bits = 1024\n' "$1" "$2"; }
samba_spec node2 node3 >"$out/samba-nat.toml"
samba_spec node7 node6 >"$out/samba-public.toml"
for s in nat public; do
  if ! cli 1 session start --config "$out/node1/config.toml" "$out/samba-$s.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-15m}" --json >"$out/samba-$s.json" 2>"$out/samba-$s.err"; then
    echo "nat.sh: FAIL: the SAMBA session ($s) did not complete:" >&2
    cat "$out/samba-$s.err" >&2
    exit 1
  fi
done
echo "nat.sh: node2 (controller behind a NAT) reached: [$(conn 2)]"
echo "nat.sh: node7 (controller, public) reached: [$(conn 7)]"
python3 - "$out" "$(conn 2)" "$(conn 7)" <<'PY'
import json, sys
out, c2, c7 = sys.argv[1], dict(x.split("=") for x in sys.argv[2].split()), dict(x.split("=") for x in sys.argv[3].split())
rows = (("nat", "node2 (NAT)", "node3 (NAT)", c2), ("public", "node7", "node6", c7))
print("nat.sh: | SAMBA K = 2, N = 300 | controller | data owners | controller's connections | ms/step | cumulative reward |")
print("nat.sh: | --- | --- | --- | --- | --- | --- |")
for s, ctl, own, conns in rows:
    d = json.load(open(f"{out}/samba-{s}.json"))
    r = d.get("result") or d
    reach = ", ".join(f"{p} {conns.get(p, '-')}" for p in (own.split()[0], "node5", "node1"))
    print(f"nat.sh: | {s} | {ctl} | {own}, node5 | {reach} | {r['ms_per_step']:.3f} | {r['cumulative_reward']} |")
PY
if [ "$(conn 2 | tr ' ' '\n' | grep -c '^node3=relayed$' || true)" != 1 ]; then
  echo "nat.sh: FAIL: node2's connection to node3 is not relayed: [$(conn 2)]" >&2
  exit 1
fi
# The stranger has been dialing node1 and node3 (through the relay) since
# the start, with backoff: neither may have admitted it.
if [ "$(connected 4)" != 0 ]; then
  echo "nat.sh: FAIL: the stranger node4 is connected: [$(conn 4)]" >&2
  exit 1
fi
if ! grep -q "refused inbound connection from a peer that is not in the address book.*${ids[4]}" "$out/node1/daemon.log"; then
  echo "nat.sh: FAIL: the relay node1 logged no refusal of the stranger node4" >&2
  exit 1
fi
echo "nat.sh: the stranger node4 was refused by the relay and reached nobody: [$(conn 4)]"
echo "nat.sh: PASS"
