# wan-net.sh — sourced by wan.sh: an emulated wide-area network of bandit-node
# daemons on this machine, one network namespace per organization.
#
# Layout: a bridge bnwan0 (10.77.0.1/24) in the root namespace; node I lives in
# namespace bnwan-I with address 10.77.0.(10+I) on a veth whose root end,
# bnwan-hI, is a port of the bridge. In each namespace the daemon listens
# only on 127.0.0.1:4001 (TCP only: QUIC is left out of the listen addresses,
# since Toxiproxy proxies TCP), and a wanlink process (testnet/wanlink)
# listens on 10.77.0.(10+I):(20000+J) for each other node J, forwarding to
# 127.0.0.1:4001 through the profile's toxics (and on port 21000+J to
# 127.0.0.1:4101, for a bench pattern party). Node J's address book lists
# node I at /ip4/10.77.0.(10+I)/tcp/(20000+J): the emulated address that leads
# to node I, as a real deployment's would list a public address. Whichever
# side dials (libp2p may dial, be dialed, or both), the connection crosses
# the bridge and exactly one proxy, which adds the one-way latency in each
# direction; no node can reach another's daemon except through a proxy,
# because the daemons listen only on their namespace's loopback. Every
# inbound connection reaches a daemon from 127.0.0.1, which also keeps the
# resource manager's per-IP connection limit (meant for strangers) out of
# the way, as distinct source addresses would in a real deployment.
#
# The control API of every daemon is 127.0.0.1:5001 inside its namespace;
# the CLI reaches it with `ip netns exec bnwan-I`.

wan_bridge=bnwan0
wan_api_port=5001

# wan_ns I: node I's namespace.
wan_ns() { echo "bnwan-$1"; }

# wan_cli I ARGS...: the CLI inside node I's namespace, on node I's config.
wan_cli() {
  local i=$1 sub=$2
  shift 2
  ip netns exec "$(wan_ns "$i")" "$wan_dir/bin/bandit-node" "$sub" "$@"
}

# wan_peers I, wan_alive I, wan_log I: node I's peers, whether its daemon
# runs, its log (for mesh_wait).
wan_peers() { wan_cli "$1" peers --config "$wan_dir/node$1/config.toml" --json; }
wan_alive() { kill -0 "$(cat "$wan_dir/node$1/pid")" 2>/dev/null; }
wan_log() { echo "$wan_dir/node$1/daemon.log"; }

# wan_down: remove every namespace, veth and bridge this testnet makes, and
# end every process inside those namespaces (only ours live there); also a
# leftover of a run that was killed. Idempotent.
wan_down() {
  local ns pids
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^bnwan-[0-9]+$/ { print $1 }'); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -TERM $pids 2>/dev/null || true
  done
  for _ in $(seq 1 100); do
    local left=0
    for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^bnwan-[0-9]+$/ { print $1 }'); do
      [ -n "$(ip netns pids "$ns" 2>/dev/null || true)" ] && left=1
    done
    [ $left = 0 ] && break
    sleep 0.1
  done
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^bnwan-[0-9]+$/ { print $1 }'); do
    pids=$(ip netns pids "$ns" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -KILL $pids 2>/dev/null || true
    ip netns delete "$ns" 2>/dev/null || true
  done
  # Deleting a namespace deletes its veth end and so the pair; a root end
  # left without its namespace is removed by name.
  for l in $(ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//' | grep -E '^bnwan-h[0-9]+$' || true); do
    ip link delete "$l" 2>/dev/null || true
  done
  ip link delete "$wan_bridge" 2>/dev/null || true
}

# wan_up N PROFILE [LOCALS]: build the network of N nodes with PROFILE's links
# under $wan_dir, start the proxies and daemons (LOCALS: a directory of
# nodeI.toml appended to node I's config) and return once every daemon has
# all the others connected. Extra wanlink flags (e.g. -close-links) come from
# the array wan_link_args, if set.
wan_up() {
  local n=$1 profile=$2 locals=${3:-} i j
  wan_down
  rm -rf "$wan_dir"/node*
  ip link add "$wan_bridge" type bridge
  ip addr add 10.77.0.1/24 dev "$wan_bridge"
  ip link set "$wan_bridge" up
  declare -ga wan_ids=()
  for i in $(seq 1 "$n"); do
    ip netns add "$(wan_ns "$i")"
    ip link add "bnwan-h$i" type veth peer name eth0 netns "$(wan_ns "$i")"
    ip link set "bnwan-h$i" master "$wan_bridge" up
    ip -n "$(wan_ns "$i")" addr add "10.77.0.$((10 + i))/24" dev eth0
    ip -n "$(wan_ns "$i")" link set eth0 up
    ip -n "$(wan_ns "$i")" link set lo up
    wan_ids[$i]=$("$wan_dir/bin/bandit-node" init --dir "$wan_dir/node$i" --name "node$i" --policy-open \
      --listen /ip4/127.0.0.1/tcp/4001 --api "127.0.0.1:$wan_api_port" 2>/dev/null)
  done
  for i in $(seq 1 "$n"); do
    : >"$wan_dir/node$i/links"
    for j in $(seq 1 "$n"); do
      [ "$i" = "$j" ] && continue
      # Node j's book: node i behind the proxy in i's namespace reserved for j.
      cat >>"$wan_dir/node$j/config.toml" <<PEER

[[peers]]
name = "node$i"
peer_id = "${wan_ids[$i]}"
addrs = ["/ip4/10.77.0.$((10 + i))/tcp/$((20000 + j))"]
PEER
      echo "node$j-node$i 10.77.0.$((10 + i)):$((20000 + j)) 127.0.0.1:4001" >>"$wan_dir/node$i/links"
      # The same link for `bench pattern`'s party in node i's namespace
      # (wan.sh's pattern rows), which listens on 127.0.0.1:4101.
      echo "pattern-node$j-node$i 10.77.0.$((10 + i)):$((21000 + j)) 127.0.0.1:4101" >>"$wan_dir/node$i/links"
    done
  done
  if [ -n "$locals" ]; then
    for i in $(seq 1 "$n"); do
      [ -f "$locals/node$i.toml" ] && { echo; cat "$locals/node$i.toml"; } >>"$wan_dir/node$i/config.toml"
    done
  fi
  for i in $(seq 1 "$n"); do
    ip netns exec "$(wan_ns "$i")" "$wan_dir/bin/wanlink" -profile "$profile" -links "$wan_dir/node$i/links" \
      -ready "$wan_dir/node$i/wanlink.ready" ${wan_link_args[@]+"${wan_link_args[@]}"} >"$wan_dir/node$i/wanlink.log" 2>&1 9>&- &
  done
  local deadline=$((SECONDS + 30))
  for i in $(seq 1 "$n"); do
    until [ -e "$wan_dir/node$i/wanlink.ready" ]; do
      if [ $SECONDS -ge $deadline ]; then
        echo "wan.sh: node$i's proxies did not come up in 30 s; its log:" >&2
        cat "$wan_dir/node$i/wanlink.log" >&2
        return 1
      fi
      sleep 0.1
    done
  done
  for i in $(seq 1 "$n"); do
    # ip netns exec execs the daemon, so $! is the daemon's PID.
    ip netns exec "$(wan_ns "$i")" "$wan_dir/bin/bandit-node" run --config "$wan_dir/node$i/config.toml" \
      >"$wan_dir/node$i/daemon.log" 2>&1 9>&- &
    echo $! >"$wan_dir/node$i/pid"
  done
  mesh_wait wan.sh "$n" $((60 + 4 * n)) wan_peers wan_alive wan_log
  echo "wan.sh: $n daemons up on the $profile profile" >&2
}
