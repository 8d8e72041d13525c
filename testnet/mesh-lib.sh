# mesh-lib.sh — sourced by up.sh and wan-net.sh: waiting for a testnet's
# full mesh.

# mesh_wait WHO N SECONDS PEERS ALIVE LOG: return once each node I of N
# reports all N - 1 others connected ("PEERS I" prints its `peers --json`), or
# fail, saying why (WHO: the script's name) with the tail of the file that
# "LOG I" names: at once when "ALIVE I" says node I's daemon has exited, or
# after SECONDS.
mesh_wait() {
  local who=$1 n=$2 wait_s=$3 peers=$4 alive=$5 log=$6 i connected deadline
  deadline=$((SECONDS + wait_s))
  for i in $(seq 1 "$n"); do
    while :; do
      if ! "$alive" "$i"; then
        echo "$who: node$i exited; its log:" >&2
        tail -20 "$("$log" "$i")" >&2
        return 1
      fi
      connected=$("$peers" "$i" 2>/dev/null | grep -c '"connected": true' || true)
      [ "$connected" -ge $((n - 1)) ] && break
      if [ $SECONDS -ge $deadline ]; then
        echo "$who: node$i has $connected of $((n - 1)) peers connected after ${wait_s}s; the end of its log:" >&2
        tail -20 "$("$log" "$i")" >&2
        return 1
      fi
      sleep 0.2
    done
  done
}
