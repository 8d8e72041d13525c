#!/usr/bin/env bash
# fleet.sh DIR [--short] — issue 24's operator's checks, end to end, on real
# daemons driven only through the bandit-node CLI and HTTP (curl):
#
#  1. readyz   node1 (metrics listener on, min_peers = 2) starts before its
#              peers: its /readyz answers 503, then 200 once node2 and node3
#              are up and connected.
#  2. metrics  /metrics on the metrics listener answers 200 without a token;
#              the control API's /metrics refuses the same request (401) and
#              serves it with the token.
#  3. standing a standing session "fleet-ping" (a ping among node1…node3,
#              every PERIOD: 20 s; 5 s with --short) is added to node1's
#              config, which node1 reloads on SIGHUP (as `systemctl reload`
#              sends it). It runs three times unattended; node1 is stopped
#              (SIGTERM) right after the first run and started again, and the
#              schedule resumes without running it twice: exactly 3 runs, all
#              completed, named; the second proposed at the due time node1
#              had stored before the stop (a schedule started afresh would
#              propose at once), the third a period later; and
#              `session list --name` on the participants shows the same 3.
#  4. join     a 4th organization, node4, starts with the three peer cards in
#              its config (`id --peer-card` + `peers add --config` while it is
#              down) and its own metrics listener (min_peers = 3): its /readyz
#              says 503 until each of the three running daemons has its card
#              (`peers add --config`, which reloads the daemon through the
#              control API: no restart), then 200. The standing session's spec
#              is changed to include node4 and node1 reloads on SIGHUP; the
#              first run proposed after the reload completes with node4
#              taking part (node4 records it under the session's name).
#  5. down     every daemon is stopped and none of the fleet's ports listens.
#
# It prints one PASS/FAIL line per check with its figures, exits 1 if any
# failed, and takes every daemon down on exit (by recorded PID; SIGTERM, then
# SIGKILL), leaving the logs in DIR/node*/daemon.log.
#
# Ports: node i listens on TCP port BASE+i, its control API on BASE+500+i, its
# metrics listener on BASE+600+i; BASE is $BANDIT_TESTNET_BASE_PORT (default
# 30000). $BANDIT_TESTNET_BIN may name a prebuilt binary. Needs curl.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
usage() { echo "usage: $0 DIR [--short]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
dir=$1
period=20
case ${2:-} in
"") ;;
--short) period=5 ;;
*) usage ;;
esac
command -v curl >/dev/null 2>&1 || { echo "fleet.sh: curl missing (Debian: apt-get install -y curl)" >&2; exit 1; }
base=${BANDIT_TESTNET_BASE_PORT:-30000}
if read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null && [ $((base + 604)) -ge "$lo" ] && [ $((base + 1)) -le "$hi" ]; then
  echo "fleet.sh: ports $((base + 1))-$((base + 604)) overlap the ephemeral port range $lo-$hi; choose a BANDIT_TESTNET_BASE_PORT below $((lo - 604))" >&2
  exit 2
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
if compgen -G "$dir/node*/pid" >/dev/null; then
  echo "fleet.sh: $dir already holds running daemons (pid files); run testnet/down.sh $dir first" >&2
  exit 1
fi
rm -rf "$dir"/node* "$dir"/*.card "$dir"/*.toml "$dir"/*.json
bin=$dir/bin/bandit-node
mkdir -p "$dir/bin"
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then
  [ "$BANDIT_TESTNET_BIN" -ef "$bin" ] || cp "$BANDIT_TESTNET_BIN" "$bin"
else
  echo "building bandit-node into $dir/bin ..." >&2
  (cd "$root" && go build -o "$bin" ./cmd/bandit-node)
fi
t0=$SECONDS

# Everything started here is stopped on exit, whatever happens.
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fails=0
results=()
# check NAME OK DETAILS: records a PASS or FAIL line.
check() {
  local status=PASS
  if [ "$2" != 1 ]; then status=FAIL fails=$((fails + 1)); fi
  results+=("$(printf '%-4s %-9s %s' "$status" "$1" "$3")")
  echo "$status $1: $3" >&2
}
cfg() { echo "$dir/node$1/config.toml"; }
cli() { "$bin" "$@"; }

# new_node I: init node I; its peer card in DIR/nodeI.card.
new_node() {
  cli init --dir "$dir/node$1" --name "node$1" --policy-open \
    --listen "/ip4/127.0.0.1/tcp/$((base + $1))" --api "127.0.0.1:$((base + 500 + $1))" >/dev/null 2>&1
  cli id --config "$(cfg "$1")" --peer-card >"$dir/node$1.card" 2>/dev/null
}
# metrics_on I MIN_PEERS: turns node I's metrics listener on (once its
# address book has MIN_PEERS peers: a min_peers it could never reach is refused).
metrics_on() {
  local i=$1
  sed -i -e "s|^listen = \"\" .*|listen = \"127.0.0.1:$((base + 600 + i))\"|" \
    -e "s|^min_peers = 1 .*|min_peers = $2|" "$(cfg "$i")"
  grep -q "^listen = \"127.0.0.1:$((base + 600 + i))\"" "$(cfg "$i")" || { echo "fleet.sh: could not turn on node$i's metrics listener" >&2; exit 1; }
}
start() {
  nohup "$bin" run --config "$(cfg "$1")" >>"$dir/node$1/daemon.log" 2>&1 &
  echo $! >"$dir/node$1/pid"
}
stop() {
  local pid
  pid=$(cat "$dir/node$1/pid")
  kill -TERM "$pid"
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then echo "fleet.sh: node$1 did not stop in 30 s" >&2; kill -KILL "$pid"; fi
  rm -f "$dir/node$1/pid"
}
# http_code URL [CURL ARGS]: the HTTP status of a GET (000 when nothing answers).
http_code() {
  local url=$1
  shift
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "$url" || true
}
readyz() { http_code "http://127.0.0.1:$((base + 600 + $1))/readyz"; }
# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds; fails after SECONDS.
wait_for() {
  local s=$1 what=$2 deadline
  shift 2
  deadline=$((SECONDS + s))
  until "$@"; do
    if [ $SECONDS -ge $deadline ]; then echo "fleet.sh: timed out after ${s}s waiting for $what" >&2; return 1; fi
    sleep 0.2
  done
}
is_code() { [ "$(readyz "$1")" = "$2" ]; }
# runs I: node I's runs of fleet-ping, one line each: ID STATE CREATED(epoch s), oldest first.
runs() {
  cli session list --config "$(cfg "$1")" --name fleet-ping --json 2>/dev/null | awk '
    /^  "sessions": \[/ { in_s = 1; next }
    in_s && /^    \{/ { id = ""; st = ""; cr = ""; nm = "" }
    in_s && /^      "id": /      { id = $2 }
    in_s && /^      "name": /    { nm = $2 }
    in_s && /^      "state": /   { st = $2 }
    in_s && /^      "created": / { cr = $2 }
    in_s && /^    \}/ { gsub(/[",]/, "", id); gsub(/[",]/, "", st); gsub(/[",]/, "", cr); gsub(/[",]/, "", nm)
                        if (nm == "fleet-ping") print id, st, cr }' |
    while read -r id st cr; do echo "$id $st $(date -d "$cr" +%s.%N)"; done | sort -k3 -g
}
completed_runs() { runs "$1" | awk '$2 == "completed"' | wc -l; }
have_runs() { [ "$(completed_runs "$1")" -ge "$2" ]; }

# --- 1. readyz: node1 starts before its peers -------------------------------
for i in 1 2 3; do new_node "$i"; done
for i in 1 2 3; do
  for j in 1 2 3; do
    [ "$i" = "$j" ] || cli peers add --config "$(cfg "$i")" "$dir/node$j.card" >/dev/null 2>&1
  done
  metrics_on "$i" 2
done
cat >"$dir/fleet-ping.toml" <<'SPEC'
protocol = "ping"
[roles]
participant = ["node1", "node2", "node3"]
[params]
count = 20
SPEC
start 1
wait_for 30 "node1's metrics listener" is_code 1 503 || true
before=$(readyz 1)
start 2
connected() { [ "$(cli peers --config "$(cfg 1)" --json 2>/dev/null | grep -c '"connected": true' || true)" -ge "$1" ]; }
wait_for 60 "node2 to connect to node1" connected 1 || true
middle=$(readyz 1)
start 3
wait_for 60 "node1's /readyz to answer 200" is_code 1 200 || true
after=$(readyz 1)
check readyz "$([ "$before" = 503 ] && [ "$middle" = 503 ] && [ "$after" = 200 ] && echo 1)" \
  "node1 (min_peers = 2) /readyz $before with 0 peers connected, $middle with node2, $after with node2 and node3"

# --- 2. /metrics with and without a token ------------------------------------
m_open=$(http_code "http://127.0.0.1:$((base + 601))/metrics")
m_lines=$(curl -s --max-time 5 "http://127.0.0.1:$((base + 601))/metrics" | grep -c '^bandit_' || true)
a_none=$(http_code "http://127.0.0.1:$((base + 501))/metrics")
a_tok=$(http_code "http://127.0.0.1:$((base + 501))/metrics" -H "Authorization: Bearer $(cat "$dir/node1/api.token")")
check metrics "$([ "$m_open" = 200 ] && [ "$m_lines" -gt 0 ] && [ "$a_none" = 401 ] && [ "$a_tok" = 200 ] && echo 1)" \
  "metrics listener /metrics $m_open without a token ($m_lines bandit_ lines); control API /metrics $a_none without, $a_tok with the token"

# --- 3. standing session: 3 runs, a restart in between -----------------------
# The session is added to node1's config and node1 reloads (SIGHUP, as
# `systemctl reload` sends it): its first run is due at once, with its peers
# already connected, and the next ones every period after it.
cat >>"$(cfg 1)" <<SESS

[[sessions]]
name = "fleet-ping"
spec = "../fleet-ping.toml"
every = "${period}s"
SESS
t_std=$SECONDS
kill -HUP "$(cat "$dir/node1/pid")"
wait_for $((period + 60)) "fleet-ping's first run" have_runs 1 1 || true
# When the second run is due, as the scheduler stored it, read before the stop.
due2=$(cli session list --config "$(cfg 1)" --name fleet-ping --json 2>/dev/null |
  awk -F'"' '/"next_due":/ { print $4; exit }')
due2=$(date -d "${due2:-1970-01-01T00:00:00Z}" +%s.%N)
stop 1
runs_at_stop=$(runs 1 | wc -l)
t_restart=$(date +%s.%N)
start 1
wait_for 60 "node1's /readyz after its restart" is_code 1 200 || true
wait_for $((3 * period + 90)) "fleet-ping's third run" have_runs 1 3 || true
runs 1 >"$dir/runs1.txt"
n_runs=$(wc -l <"$dir/runs1.txt")
n_done=$(awk '$2 == "completed"' "$dir/runs1.txt" | wc -l)
gaps=$(awk 'NR > 1 { printf "%s%.1f", sep, $3 - prev; sep = "/" } { prev = $3 }' "$dir/runs1.txt")
# Not twice: the restarted daemon proposes the second run when it was due
# (not at once, as a schedule started afresh would), and the third a period
# later. The margin says how long before that due time node1 was started
# again: with none, a catch-up run at start would be legitimate.
margin=$(awk -v d="$due2" -v r="$t_restart" 'BEGIN { printf "%.1f", d - r }')
ok_times=$(awk -v d="$due2" -v p="$period" 'NR == 2 { r2 = $3 } NR == 3 { r3 = $3 }
  END { print (r2 >= d - 0.01 && r3 - r2 >= p / 2) ? 1 : 0 }' "$dir/runs1.txt")
late2=$(awk -v d="$due2" 'NR == 2 { printf "%+.2f", $3 - d }' "$dir/runs1.txt")
# What Prometheus sees on node1's metrics listener: the runs ended since the
# restart (2), the last one completed. (The scheduler counts a run just
# after its record says it ended.)
prom_read() {
  local prom
  prom=$(curl -s --max-time 5 "http://127.0.0.1:$((base + 601))/metrics" || true)
  prom_runs=$(echo "$prom" | awk '/^bandit_standing_runs_total\{/ && /name="fleet-ping"/ && /state="completed"/ { print $2 }')
  prom_last=$(echo "$prom" | awk '/^bandit_standing_last_run_completed\{/ && /name="fleet-ping"/ { print $2 }')
  [ "$prom_runs" = 2 ] && [ "$prom_last" = 1 ]
}
wait_for 10 "fleet-ping's runs in node1's metrics" prom_read || true
part=""
ok_part=1
for i in 2 3; do
  # The participant records the initiator's runs, by ID, under their name.
  runs "$i" >"$dir/runs$i.txt"
  pn=$(cut -d' ' -f1,2 "$dir/runs1.txt" | grep -cxFf - <(cut -d' ' -f1,2 "$dir/runs$i.txt") || true)
  part="$part node$i $pn of them;"
  [ "$pn" = 3 ] || ok_part=0
done
check standing "$([ "$runs_at_stop" = 1 ] && [ "$n_runs" = 3 ] && [ "$n_done" = 3 ] && [ "$ok_times" = 1 ] && [ "$ok_part" = 1 ] &&
  [ "$prom_runs" = 2 ] && [ "$prom_last" = 1 ] && echo 1)" \
  "every ${period}s: $n_done of $n_runs runs completed in $((SECONDS - t_std))s; node1 stopped after run $runs_at_stop and started ${margin}s before run 2 was due, which it proposed at ${late2:-?}s from that time; proposals ${gaps}s apart; participants:$part /metrics: ${prom_runs:-no} completed runs since the restart, last completed ${prom_last:-?}"
cli session list --config "$(cfg 1)" --name fleet-ping >"$dir/list-node1.txt" 2>&1 || true

# --- 4. node4 joins the running network ---------------------------------------
t_join=$SECONDS
new_node 4
for j in 1 2 3; do cli peers add --config "$(cfg 4)" "$dir/node$j.card" >/dev/null 2>&1; done
metrics_on 4 3
start 4
wait_for 30 "node4's metrics listener" is_code 4 503 || true
r4_before=$(readyz 4)
pids_before=$(cat "$dir"/node[123]/pid | sort | paste -sd' ')
added=0
for j in 1 2 3; do
  if cli peers add --config "$(cfg "$j")" "$dir/node4.card" >"$dir/add$j.out" 2>&1 && grep -q 'peers added: node4' "$dir/add$j.out"; then
    added=$((added + 1))
  else
    echo "fleet.sh: peers add on node$j:" >&2
    cat "$dir/add$j.out" >&2
  fi
done
wait_for 60 "node4's /readyz to answer 200" is_code 4 200 || true
r4_after=$(readyz 4)
pids_after=$(cat "$dir"/node[123]/pid | sort | paste -sd' ')
alive=0
for p in $pids_after; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
sed -i 's|^participant = .*|participant = ["node1", "node2", "node3", "node4"]|' "$dir/fleet-ping.toml"
# SIGHUP, as `systemctl reload` sends it. The daemon logs the reload once
# the scheduler has the new spec: runs proposed from then on carry it.
hups() { grep -c 'msg="config reloaded".*standing sessions changed: sessions.fleet-ping' "$dir/node1/daemon.log" || true; }
hups_before=$(hups)
kill -HUP "$(cat "$dir/node1/pid")"
reloaded() { [ "$(hups)" -gt "$hups_before" ]; }
wait_for 30 "node1's reload on SIGHUP" reloaded || true
t_reload=$(date +%s.%N)
# The first run proposed after the reload.
first_after() { runs 1 | awk -v t="$t_reload" '$3 > t { print; exit }'; }
run_done() { [ "$(first_after | cut -d' ' -f2)" = completed ]; }
wait_for $((2 * period + 60)) "fleet-ping's first run after the reload" run_done || true
run4=$(first_after)
id4=${run4%% *}
n4=$(runs 4 | awk -v id="$id4" '$1 == id && $2 == "completed"' | wc -l)
check join "$([ "$r4_before" = 503 ] && [ "$added" = 3 ] && [ "$pids_before" = "$pids_after" ] && [ "$alive" = 3 ] &&
  [ "$r4_after" = 200 ] && reloaded && [ -n "$id4" ] && [ "$(echo "$run4" | cut -d' ' -f2)" = completed ] && [ "$n4" = 1 ] && echo 1)" \
  "node4 /readyz $r4_before before its cards were added, $r4_after after; peers add reloaded $added of 3 (same PIDs, none restarted); first run after the spec reload (SIGHUP) ${id4:-none} ${run4:+$(echo "$run4" | cut -d' ' -f2)}, node4 recorded it: $n4; $((SECONDS - t_join))s"

echo
echo "== fleet.sh: $((SECONDS - t0))s in all (every = ${period}s)"
printf '%s\n' "${results[@]}"
"$here/down.sh" "$dir" >/dev/null 2>&1 || true
# Nothing may listen on the fleet's ports any more.
busy=""
for i in 1 2 3 4; do
  for p in $((base + i)) $((base + 500 + i)) $((base + 600 + i)); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then busy="$busy $p"; fi
  done
done
alive=0
for i in 1 2 3 4; do pgrep -f "$dir/bin/bandit-node run --config $dir/node$i/" >/dev/null && alive=$((alive + 1)); done
check down "$([ -z "$busy" ] && [ "$alive" = 0 ] && echo 1)" "after down.sh: ${alive} daemons running, ports still listening:${busy:- none}"
printf '%s\n' "${results[@]: -1}"
[ "$fails" -eq 0 ] || { echo "fleet.sh: $fails check(s) failed; logs in $dir/node*/daemon.log" >&2; exit 1; }
