#!/usr/bin/env bash
# chaos.sh DIR [--short] — scripted faults against long SAMBA, mpccb, BAI and
# P-FCB sessions on one testnet of 7 daemons, and a summary table.
#
#   testnet/chaos.sh /tmp/chaos            # every fault, 23 of them (≈ 3 min)
#   testnet/chaos.sh /tmp/chaos --short    # 6 of them, every family once, for CI (≈ 45 s)
#
# The testnet (node i is every family's party below; node6 initiates mpccb and
# holds no mpccb role, every other session starts at node1):
#   SAMBA  data_customer node1, controller node2, comp node3, data_owner node4, node5
#   mpccb  feature_party node1, node2, arm_puller node3, reward_receiver node4,
#          dealer node5 (5,000 Fashion-MNIST steps; needs dataset-fashion-mnist)
#   BAI    coordinator node1, agents node2 … node7 (DP-MASE, ε = 0.1, 100 interactions/s
#          each: ≈ 14,000 interactions, ≈ 25 s)
#   P-FCB  agents node1 … node7 (200,000 rounds at 5,000 rounds/s)
# Every node's [session] table gets peer_timeout = 6s, heartbeat_interval = 1s
# and propose_timeout = 10s: up.sh creates and starts the testnet, then this
# script stops it (down.sh), edits those lines in place (a second [session]
# table would be a TOML error) and starts the daemons again as up.sh does.
#
# Each fault hits a fresh session 2 s after every member recorded it running:
#   kill -9     of a role's daemon (the full run: every role of every family,
#               and mpccb's initiator); target: every survivor recorded the
#               abort within 5 s, naming the dead organization
#   SIGSTOP     of a participant for peer_timeout + 4 s, then SIGCONT; target:
#               every survivor aborted within peer_timeout + one heartbeat
#               ("… stopped answering"), the stopped daemon blames its pause
#   SIGTERM     of the initiator; target: within 5 s, "… is shutting down"
#   two at once SAMBA (node1–5) and P-FCB (node3–5) share node4, which is
#               killed: both abort within 5 s, while a third session (P-FCB
#               on node6, node7) completes
#   corrupt     four corrupt records (garbage bytes, {}, null, another
#               session's ID) written into node7's sessions/, node7 restarted:
#               it must start and move all four to sessions/corrupt/
# A killed or stopped daemon is restarted (its log appended to daemon.log)
# and must record the session aborted ("… restarted while the session was
# open"). Then every daemon must be connected to every other and a ping
# session over all 7 (count = 5) must complete. The abort time is each
# survivor's record's "finished" minus the time taken just before the
# signal, the largest over the survivors. Records lost: (session, daemon)
# pairs, over every session started so far (pings included), whose record
# is missing or was moved to corrupt/.
#
# Prints the table to stdout and DIR/chaos.md, progress to stderr, and exits
# non-zero if a target is missed, a reason is wrong, a daemon does not start,
# a record is lost or a ping session fails. The testnet is always taken down.
# Ports: BANDIT_TESTNET_BASE_PORT, default 25000.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 DIR [--short]" >&2; exit 2; }
dir="" short=0
for a in "$@"; do
  case $a in
  --short) short=1 ;;
  -*) usage ;;
  *) [ -z "$dir" ] || usage; dir=$a ;;
  esac
done
[ -n "$dir" ] || usage
n=7
peer_timeout=6 heartbeat=1 # seconds, written into every config
kill_target=5              # a killed or terminated peer: every survivor within this
stop_target=$((peer_timeout + heartbeat))
settle=2                   # seconds a session runs before its fault
export BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-25000}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
bin=$dir/bin/bandit-node
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
t_begin=$SECONDS

log() { printf 'chaos: %s\n' "$*" >&2; }
now() { date +%s.%N; }
cfg() { echo "$dir/node$1/config.toml"; }
pid_of() { cat "$dir/node$1/pid" 2>/dev/null || true; }
# alive I: node I's recorded process exists and is not a zombie.
alive() {
  local p st
  p=$(pid_of "$1")
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null || return 1
  st=$(awk '{ print $3 }' "/proc/$p/stat" 2>/dev/null || echo Z)
  [ "$st" != Z ]
}

# start_node I: start node I's daemon as up.sh does (same binary, config,
# nodeI.env, pid file), appending to its daemon.log.
start_node() {
  local i=$1 envs=()
  if [ -f "$dir/locals/node$i.env" ]; then
    mapfile -t envs < <(grep -E '^[A-Za-z_][A-Za-z0-9_]*=' "$dir/locals/node$i.env")
  fi
  echo "=== chaos.sh: (re)starting node$i at $(date -u +%FT%T.%NZ)" >>"$dir/node$i/daemon.log"
  env ${envs[@]+"${envs[@]}"} nohup "$bin" run --config "$(cfg "$i")" >>"$dir/node$i/daemon.log" 2>&1 &
  echo $! >"$dir/node$i/pid"
  disown $! # no "Killed" notice from this shell when a fault kills it
}

# wait_mesh: every daemon running and connected to all the others (60 s).
wait_mesh() {
  local i c deadline=$((SECONDS + 60))
  for i in $(seq 1 $n); do
    while :; do
      if ! alive "$i"; then
        log "node$i is not running; the end of its log:"
        tail -20 "$dir/node$i/daemon.log" >&2
        return 1
      fi
      c=$("$bin" peers --config "$(cfg "$i")" --json 2>/dev/null | grep -c '"connected": true' || true)
      [ "$c" -ge $((n - 1)) ] && break
      if [ $SECONDS -ge $deadline ]; then
        log "node$i has $c of $((n - 1)) peers connected after 60 s"
        return 1
      fi
      sleep 0.2
    done
  done
}

# restart I: start node I again and wait until it answers; counts failures.
start_failures=0
restart() {
  local i=$1 deadline=$((SECONDS + 20))
  start_node "$i"
  while ! "$bin" peers --config "$(cfg "$i")" --json >/dev/null 2>&1; do
    if ! alive "$i" || [ $SECONDS -ge $deadline ]; then
      log "node$i did not start again; the end of its log:"
      tail -20 "$dir/node$i/daemon.log" >&2
      start_failures=$((start_failures + 1))
      return 1
    fi
    sleep 0.2
  done
}

# ---- records ----
rec() { echo "$dir/node$1/sessions/$2.json"; }
# field FILE KEY: a string field of the record's session object.
field() { sed -n -E 's/^    "'"$2"'": "(.*)",?$/\1/p' "$1" 2>/dev/null | head -1; }
state_of() { field "$(rec "$1" "$2")" state; }
final() { local s; s=$(state_of "$1" "$2"); [ "$s" = aborted ] || [ "$s" = completed ]; }
# wait_states ID STATE DEADLINE NODES...: until each node's record of ID is
# in STATE (final: aborted or completed) or SECONDS reaches DEADLINE.
wait_states() {
  local id=$1 want=$2 deadline=$3 i s ok
  shift 3
  while :; do
    ok=1
    for i in "$@"; do
      s=$(state_of "$i" "$id")
      if [ "$want" = final ]; then
        [ "$s" = aborted ] || [ "$s" = completed ] || ok=0
      else
        [ "$s" = "$want" ] || ok=0
      fi
    done
    [ $ok = 1 ] && return 0
    [ $SECONDS -ge "$deadline" ] && return 1
    sleep 0.1
  done
}
# finished_after ID T0 NODES...: the largest "finished" - T0 over the nodes
# (seconds), or "none" if one has not finished.
finished_after() {
  local id=$1 t0=$2 i f t worst=""
  shift 2
  for i in "$@"; do
    f=$(field "$(rec "$i" "$id")" finished)
    [ -n "$f" ] && final "$i" "$id" || { echo none; return; }
    t=$(date -d "$f" +%s.%N)
    worst=$(awk -v a="$worst" -v t="$t" -v t0="$t0" 'BEGIN { d = t - t0; print (a == "" || d > a) ? d : a }')
  done
  echo "$worst"
}

# Every session started: "ID NODE NODE ..." (its members).
started=()
SID=""
# start_session INITIATOR SPEC MEMBERS...: propose; sets SID, fails if the
# daemon refused.
start_session() {
  local init=$1 spec=$2
  shift 2
  SID=$("$bin" session start --config "$(cfg "$init")" "$spec") || { log "node$init refused $spec"; return 1; }
  started+=("$SID $*")
}
# count_lost: (session, member) pairs without a valid record, plus records in
# any sessions/corrupt/ other than the four planted ones.
count_lost() {
  local lost=0 entry id rest i s f
  for entry in "${started[@]}"; do
    read -r id rest <<<"$entry"
    for i in $rest; do
      s=$(state_of "$i" "$id")
      case $s in proposed | running | completed | aborted) ;; *) lost=$((lost + 1)); log "record lost: session $id on node$i" ;; esac
    done
  done
  for f in "$dir"/node*/sessions/corrupt/*; do
    [ -e "$f" ] || continue
    case $(basename "$f") in 000000000000000[1-4].json*) ;; *) lost=$((lost + 1)); log "record moved aside: $f" ;; esac
  done
  echo $lost
}

# shorten: a reason without its error details.
shorten() {
  sed -E 's/; redial failed: .*/; redial failed/; s/(could not send to [^ ]+ \([^)]*\)): .*/\1: …/;
    s/ \((silent for [^,]*),.*/ (\1)/; s/ \(its process stopped.*/ …/; s/ while the session was open.*/ while the session was open/;
    s/\|/\\|/g'
}
# reasons ID NODES...: "node2,node3: reason / node4: reason", grouped.
reasons() {
  local id=$1 i
  shift
  for i in "$@"; do
    printf '%s\t%s\n' "$(field "$(rec "$i" "$id")" reason | shorten)" "node$i"
  done | awk -F'\t' '{ if (!($1 in who)) order[++k] = $1; who[$1] = who[$1] ? who[$1] "," $2 : $2 }
    END { for (j = 1; j <= k; j++) printf "%s%s: %s", (j > 1 ? " / " : ""), who[order[j]], (order[j] == "" ? "(none)" : order[j]) }'
}
# reasons_match ID PATTERN NODES...: every node's reason matches PATTERN (ERE).
reasons_match() {
  local id=$1 pat=$2 i ok=0
  shift 2
  for i in "$@"; do
    if ! field "$(rec "$i" "$id")" reason | grep -Eq -- "$pat"; then
      log "node$i's reason for $id does not match /$pat/: $(field "$(rec "$i" "$id")" reason)"
      ok=1
    fi
  done
  return $ok
}

# ---- the ping after each fault ----
# ping_after: wait for the full mesh, then a ping session over every daemon;
# sets PING to yes or no (…). (Not run in a subshell: it adds to started.)
PING=""
ping_after() {
  PING="no (mesh)"
  wait_mesh || return 0
  local id
  PING="no (refused)"
  start_session 1 "$dir/ping.toml" $(seq 1 $n) || return 0
  id=$SID
  if wait_states "$id" final $((SECONDS + 30)) $(seq 1 $n) && [ "$(state_of 1 "$id")" = completed ]; then
    PING=yes
  else
    log "ping session $id: $(state_of 1 "$id") $(field "$(rec 1 "$id")" reason)"
    PING=no
  fi
}

rows=()
failures=0
# row FAULT FAMILY TARGET TIME MET REASONS PING LOST
row() {
  rows+=("| $1 | $2 | $3 | $4 | $5 | $6 | $7 | $8 |")
  case "$5 $7" in yes\ yes) ;; *) failures=$((failures + 1)) ;; esac
  [ "$8" = 0 ] || failures=$((failures + 1))
  log "→ $1 $2 $3: abort time $4, target met $5, ping $7, records lost $8"
}

# ---- the testnet ----
mkdir -p "$dir/bin"
if [ -n "${BANDIT_TESTNET_BIN:-}" ]; then # a prebuilt binary (.ci/run's)
  [ "$BANDIT_TESTNET_BIN" -ef "$bin" ] || cp "$BANDIT_TESTNET_BIN" "$bin"
else
  (cd "$here/.." && go build -o "$bin" ./cmd/bandit-node)
fi
steps=5000
if ! head -1 "$dir/mpccb-data/rewards.csv" 2>/dev/null | grep -q "^# bandit-node rewards: $steps rows"; then
  "$bin" data mpccb --out "$dir/mpccb-data" --parties 2 --steps $steps >&2
fi
samba_locals "$dir" 2 # node4, node5: the two best MovieLens arms (recreates $dir/locals)
for i in $(seq 1 $n); do
  { echo; sed 's/^rate = .*/rate = 100/' "$here/problem1-agent.toml"; } >>"$dir/locals/node$i.toml"
done
"$here/pfcb-locals.sh" "$dir/locals" $n 10
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party0.csv" >>"$dir/locals/node1.toml"
printf '\n[local.mpccb.feature_party]\nfeatures = "%s"\n' "$dir/mpccb-data/party1.csv" >>"$dir/locals/node2.toml"
printf '\n[local.mpccb.reward_receiver]\nrewards = "%s"\n' "$dir/mpccb-data/rewards.csv" >>"$dir/locals/node4.toml"

# up.sh runs the binary built above rather than building it again.
BANDIT_TESTNET_BIN="$bin" BANDIT_TESTNET_LOCAL="$dir/locals" "$here/up.sh" $n "$dir"
cleanup() {
  local i p
  for i in $(seq 1 $n); do # a stopped daemon cannot take SIGTERM
    p=$(pid_of "$i")
    [ -n "$p" ] && kill -CONT "$p" 2>/dev/null || true
  done
  "$here/down.sh" "$dir" || true
}
trap cleanup EXIT
log "stopping the testnet to shorten its session timeouts"
"$here/down.sh" "$dir"
for i in $(seq 1 $n); do
  sed -i -E "s/^peer_timeout = \"[^\"]*\"/peer_timeout = \"${peer_timeout}s\"/;
    s/^heartbeat_interval = \"[^\"]*\"/heartbeat_interval = \"${heartbeat}s\"/;
    s/^propose_timeout = \"[^\"]*\"/propose_timeout = \"10s\"/" "$(cfg "$i")"
  grep -q "^peer_timeout = \"${peer_timeout}s\"" "$(cfg "$i")" && grep -q "^heartbeat_interval = \"${heartbeat}s\"" "$(cfg "$i")" ||
    { log "could not set the session timeouts in $(cfg "$i")"; exit 1; }
  start_node "$i"
done
wait_mesh || { log "the testnet did not come up again"; exit 1; }
log "testnet of $n daemons up (peer_timeout ${peer_timeout}s, heartbeat ${heartbeat}s)"

# ---- session specs ----
names() { for i in "$@"; do printf '"node%s"\n' "$i"; done | paste -sd, -; }
samba_spec "$dir/samba.toml" 2 10000000 ucb
cat >"$dir/mpccb.toml" <<SPEC
protocol = "mpccb"
[roles]
feature_party = ["node1", "node2"]
arm_puller = "node3"
reward_receiver = "node4"
dealer = "node5"
[params]
steps = $steps
epsilon = 0.1
SPEC
cat >"$dir/bai.toml" <<SPEC
protocol = "bai"
[roles]
coordinator = "node1"
agent = [$(names 2 3 4 5 6 7)]
[params]
algorithm = "dp_mase"
arms = 10
epsilon = 0.1
beta = 0.5
delta = 0.25
SPEC
pfcb_spec() { # FILE ROUNDS AGENTS...
  local f=$1 r=$2
  shift 2
  printf 'protocol = "pfcb"\n[roles]\nagent = [%s]\n[params]\nalgorithm = "pfcb"\nrounds = %s\n' "$(names "$@")" "$r" >"$f"
}
pfcb_spec "$dir/pfcb.toml" 200000 $(seq 1 $n)
pfcb_spec "$dir/pfcb-b.toml" 200000 3 4 5
pfcb_spec "$dir/pfcb-c.toml" 50000 6 7
printf 'protocol = "ping"\n[roles]\nparticipant = [%s]\n[params]\ncount = 5\n' "$(names $(seq 1 $n))" >"$dir/ping.toml"

# family_init FAMILY / family_members FAMILY: who starts it, who takes part.
family_init() { case $1 in mpccb) echo 6 ;; *) echo 1 ;; esac; }
family_members() {
  case $1 in
  samba) echo 1 2 3 4 5 ;;
  mpccb) echo 1 2 3 4 5 6 ;;
  *) seq -s' ' 1 $n ;;
  esac
}

# ---- the faults ----
# signal_fault KIND FAMILY TARGET LABEL: KIND is kill, stop or term.
signal_fault() {
  local kind=$1 fam=$2 t=$3 label=$4 init members survivors=() i id t0 limit pat tpat p
  init=$(family_init "$fam")
  read -r -a members <<<"$(family_members "$fam")"
  for i in "${members[@]}"; do [ "$i" = "$t" ] || survivors+=("$i"); done
  local fault
  case $kind in
  kill) fault="kill -9" limit=$kill_target pat="(connection to node$t closed|could not send to [^ ]+ \\(node$t\\))" tpat="^node$t restarted while the session was open" ;;
  stop) fault="SIGSTOP $((peer_timeout + 4)) s" limit=$stop_target pat="^node$t stopped answering" tpat="^node$t was paused for" ;;
  term) fault="SIGTERM" limit=$kill_target pat="^node$t is shutting down" tpat="^node$t is shutting down" ;;
  esac
  log "== $fault of node$t ($label) in a $fam session"
  if ! start_session "$init" "$dir/$fam.toml" "${members[@]}"; then
    ping_after
    row "$fault" "$fam" "node$t ($label)" "—" "no (refused)" "—" "$PING" "$(count_lost)"
    return
  fi
  id=$SID
  if ! wait_states "$id" running $((SECONDS + 30)) "${members[@]}"; then
    log "session $id did not run on every member"
    ping_after
    row "$fault" "$fam" "node$t ($label)" "—" "no (did not start)" "$(reasons "$id" "${members[@]}")" "$PING" "$(count_lost)"
    return
  fi
  sleep $settle
  final 1 "$id" 2>/dev/null && log "warning: session $id already ended before the fault"
  p=$(pid_of "$t")
  t0=$(now)
  case $kind in
  kill) kill -KILL "$p" ;;
  stop) kill -STOP "$p" ;;
  term) kill -TERM "$p" ;;
  esac
  wait_states "$id" final $((SECONDS + limit + 15)) "${survivors[@]}" || log "not every survivor recorded an end of $id"
  case $kind in
  stop)
    sleep "$(awk -v t0="$t0" -v now="$(now)" -v d=$((peer_timeout + 4)) 'BEGIN { s = t0 + d - now; print (s > 0 ? s : 0) }')"
    kill -CONT "$p"
    ;;
  kill | term)
    for _ in $(seq 1 200); do alive "$t" || break; sleep 0.1; done
    restart "$t" || true
    ;;
  esac
  wait_states "$id" final $((SECONDS + 15)) "$t" || log "node$t did not record an end of $id"
  local dt met=yes
  dt=$(finished_after "$id" "$t0" "${survivors[@]}")
  if [ "$dt" = none ]; then
    met="no (not aborted)"
  else
    for i in "${survivors[@]}"; do [ "$(state_of "$i" "$id")" = aborted ] || met="no (${i} $(state_of "$i" "$id"))"; done
    awk -v d="$dt" -v l="$limit" 'BEGIN { exit !(d <= l) }' || met="no (> $limit s)"
    dt=$(printf '%.2f' "$dt")
  fi
  if [ "$met" = yes ]; then
    reasons_match "$id" "$pat" "${survivors[@]}" || met="no (reason)"
    reasons_match "$id" "$tpat" "$t" || met="no (reason)"
  fi
  ping_after
  row "$fault" "$fam" "node$t ($label)" "$dt" "$met" "$(reasons "$id" "${members[@]}")" "$PING" "$(count_lost)"
}

# two_at_once: SAMBA on node1–5 and P-FCB on node3–5, node4 killed; P-FCB on
# node6, node7 meanwhile must complete.
two_at_once() {
  local a="" b="" c="" t=4 t0 i dt dtb met=yes pat="(connection to node4 closed|could not send to [^ ]+ \\(node4\\))"
  log "== kill -9 of node4 in two sessions at once (SAMBA, P-FCB), P-FCB on node6, node7 beside them"
  if ! { start_session 1 "$dir/samba.toml" 1 2 3 4 5 && a=$SID && start_session 3 "$dir/pfcb-b.toml" 3 4 5 && b=$SID &&
    start_session 7 "$dir/pfcb-c.toml" 6 7 && c=$SID; }; then
    ping_after
    row "kill -9, two sessions at once" "samba + pfcb" "node4 (data_owner[0], agent[1])" "—" "no (refused)" "—" "$PING" "$(count_lost)"
    return
  fi
  wait_states "$a" running $((SECONDS + 30)) 1 2 3 4 5 && wait_states "$b" running $((SECONDS + 30)) 3 4 5 &&
    wait_states "$c" running $((SECONDS + 30)) 6 7 || log "the three sessions did not all run"
  sleep $settle
  t0=$(now)
  kill -KILL "$(pid_of $t)"
  wait_states "$a" final $((SECONDS + kill_target + 15)) 1 2 3 5 || true
  wait_states "$b" final $((SECONDS + kill_target + 15)) 3 5 || true
  for _ in $(seq 1 200); do alive $t || break; sleep 0.1; done
  restart $t || true
  wait_states "$a" final $((SECONDS + 15)) $t || true
  wait_states "$b" final $((SECONDS + 15)) $t || true
  dt=$(finished_after "$a" "$t0" 1 2 3 5)
  dtb=$(finished_after "$b" "$t0" 3 5)
  if [ "$dt" = none ] || [ "$dtb" = none ]; then
    met="no (not aborted)" dt=none
  else
    dt=$(awk -v a="$dt" -v b="$dtb" 'BEGIN { printf "%.2f", (a > b ? a : b) }')
    awk -v d="$dt" -v l=$kill_target 'BEGIN { exit !(d <= l) }' || met="no (> $kill_target s)"
    for i in 1 2 3 5; do [ "$(state_of "$i" "$a")" = aborted ] || met="no (samba on node$i $(state_of "$i" "$a"))"; done
    for i in 3 5; do [ "$(state_of "$i" "$b")" = aborted ] || met="no (pfcb on node$i $(state_of "$i" "$b"))"; done
  fi
  if [ "$met" = yes ]; then
    { reasons_match "$a" "$pat" 1 2 3 5 && reasons_match "$b" "$pat" 3 5 &&
      reasons_match "$a" "^node4 restarted while" 4 && reasons_match "$b" "^node4 restarted while" 4; } || met="no (reason)"
  fi
  wait_states "$c" final $((SECONDS + 60)) 6 7 || true
  local third
  third=$(state_of 6 "$c")/$(state_of 7 "$c")
  [ "$third" = completed/completed ] || met="no (third session $third)"
  ping_after
  row "kill -9, two sessions at once" "samba + pfcb" "node4 (data_owner[0], agent[1])" "$dt" "$met" \
    "samba: $(reasons "$a" 1 2 3 4 5); pfcb: $(reasons "$b" 3 4 5); pfcb on node6,7: $third" "$PING" "$(count_lost)"
}

# corrupt_record: four corrupt records in node7's sessions/, node7 restarted.
corrupt_record() {
  local t=7 s i met=yes moved warned
  log "== corrupt records in node$t's sessions/, node$t restarted"
  s=$dir/node$t/sessions
  kill -TERM "$(pid_of $t)"
  for _ in $(seq 1 200); do alive $t || break; sleep 0.1; done
  mkdir -p "$s"
  printf '\x00\xff\x13garbage{"session"' >"$s/0000000000000001.json"
  printf '{}' >"$s/0000000000000002.json"
  printf 'null' >"$s/0000000000000003.json"
  printf '{"session":{"id":"zz"}}' >"$s/0000000000000004.json"
  local lines
  lines=$(wc -l <"$dir/node$t/daemon.log")
  restart $t || met="no (did not start)"
  sleep 1
  moved=0
  for i in 1 2 3 4; do
    [ -e "$s/corrupt/000000000000000$i.json" ] && [ ! -e "$s/000000000000000$i.json" ] && moved=$((moved + 1))
  done
  warned=$(tail -n +$((lines + 1)) "$dir/node$t/daemon.log" | grep -c 'corrupt' || true)
  [ $moved = 4 ] || met="no ($moved of 4 moved)"
  ping_after
  row "corrupt records, restart" "—" "node$t" "—" "$met" "$moved of 4 moved to sessions/corrupt/, $warned log lines name them" "$PING" "$(count_lost)"
}

if [ $short = 1 ]; then
  signal_fault kill samba 4 "data_owner[0]"
  signal_fault kill bai 1 "coordinator, initiator"
  signal_fault stop pfcb 3 "agent[2]"
  signal_fault term mpccb 6 "initiator, no role"
  two_at_once
  corrupt_record
else
  signal_fault kill samba 1 "data_customer, initiator"
  signal_fault kill samba 2 "controller"
  signal_fault kill samba 3 "comp"
  signal_fault kill samba 4 "data_owner[0]"
  signal_fault kill mpccb 6 "initiator, no role"
  signal_fault kill mpccb 2 "feature_party[1]"
  signal_fault kill mpccb 3 "arm_puller"
  signal_fault kill mpccb 4 "reward_receiver"
  signal_fault kill mpccb 5 "dealer"
  signal_fault kill bai 1 "coordinator, initiator"
  signal_fault kill bai 6 "agent[4]"
  signal_fault kill pfcb 1 "agent[0], initiator"
  signal_fault kill pfcb 7 "agent[6]"
  signal_fault stop samba 5 "data_owner[1]"
  signal_fault stop mpccb 5 "dealer"
  signal_fault stop bai 7 "agent[5]"
  signal_fault stop pfcb 3 "agent[2]"
  signal_fault term samba 1 "data_customer, initiator"
  signal_fault term mpccb 6 "initiator, no role"
  signal_fault term bai 1 "coordinator, initiator"
  signal_fault term pfcb 1 "agent[0], initiator"
  two_at_once
  corrupt_record
fi

lost=$(count_lost)
elapsed=$((SECONDS - t_begin))
{
  echo "## testnet/chaos.sh$([ $short = 1 ] && echo ' --short'): $n daemons, session.peer_timeout = ${peer_timeout}s, heartbeat_interval = ${heartbeat}s"
  echo
  echo "Targets: a killed or terminated organization → every survivor recorded the abort within ${kill_target} s; a stopped one → within peer_timeout + one heartbeat = ${stop_target} s. Records lost counts every session started so far."
  echo
  echo "| fault | family | target | abort time max (s) | target met | reasons | ping after | records lost |"
  echo "|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "${#started[@]} sessions, $start_failures daemon start failures, $lost records lost, $failures faults failed; $elapsed s in all ($(date -u +%F), $(cd "$here/.." && git rev-parse --short HEAD 2>/dev/null || echo '?'))."
} | tee "$dir/chaos.md"
[ "$failures" = 0 ] && [ "$start_failures" = 0 ] && [ "$lost" = 0 ]
