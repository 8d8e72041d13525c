#!/usr/bin/env bash
# failsafe.sh DIR — the daemon fails safely, checked on real daemons
# (docs/security.md, docs/operations.md):
#
#  1. secrets: six daemons run SAMBA (node1 data customer, node2 controller,
#     node3 comp, node4…node6 data owners); node5's data owner is a program
#     that writes a secret to its stderr and into a malformed answer, then
#     exits. The session aborts everywhere; the secret is then in node5's
#     own record and log, and in no file, log or control-API answer of the
#     five others.
#  2. out-of-range rewards: a BAI DP-MASE session (5 agents, so β = 0.3: M =
#     4 votes) whose spec's reward range is [0, 0.001] (the agents' programs
#     answer rewards of 0 or 1 from a log) completes, the rewards clamped, or aborts without a reward
#     value in its reason.
#  3. weak keys: a SAMBA proposal with paillier_bits = 512, from an
#     initiator whose policy allows it, is declined by a participant with the
#     policy `init --policy-open` writes, the reason naming both sizes.
#  4. onboarding: two more daemons, A listing B but B not yet listing A, for
#     10 s: A logs fewer than 50 lines and `peers` gives a reason; once B adds
#     A's card, they connect within 5 s.
#  5. storage (root only: it mounts a tmpfs): a participant's sessions
#     directory turns read-only while a session runs; the session completes;
#     within 30 s of the directory becoming writable again its record says
#     completed, and still does after a restart.
#  6. configs: an empty config and one without [node] name are refused.
#  7. go.mod names the patched toolchain and golang.org/x/net.
#
# Exits non-zero at the first check that fails, saying which and why. Ports:
# BANDIT_TESTNET_BASE_PORT (default 28000; see up.sh) and the 60 after it.
set -euo pipefail
# The Go toolchain go.mod names (fetched from the module proxy; go1.26 has known vulnerabilities).
export GOTOOLCHAIN=go1.27.3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
dir=$(cd "$1" && pwd)
export BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000}
base=$BANDIT_TESTNET_BASE_PORT
bn=$dir/bin/bandit-node

fail() { echo "failsafe.sh: FAIL: $*" >&2; exit 1; }
# start_wait NAME: node1 starts the session of DIR/NAME.toml and waits for
# its end (5 min at most), its output in DIR/NAME.out, its exit code in code.
start_wait() {
  set +e
  "$bn" session start --config "$dir/node1/config.toml" "$dir/$1.toml" --wait --timeout 5m --json >"$dir/$1.out" 2>&1
  code=$?
  set -e
}
ok() { echo "failsafe.sh: ok: $*" >&2; }

# --- 7. go.mod --------------------------------------------------------------
grep -q '^go 1\.27\.3$' "$root/go.mod" || fail "go.mod does not name go 1.27.3"
xnet=$(awk '$1 == "golang.org/x/net" { print $2 }' "$root/go.mod")
[ "$(printf '%s\n%s\n' v0.60.0 "$xnet" | sort -V | head -n 1)" = v0.60.0 ] || fail "go.mod names golang.org/x/net $xnet, older than v0.60.0"
ok "go.mod names go 1.27.3 and golang.org/x/net $xnet"

# --- the six daemons ----------------------------------------------------------
secret="hunter2-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
mkdir -p "$dir/locals"
cat >"$dir/leaky_owner.sh" <<'OWNER'
#!/bin/sh
# A SAMBA data owner (exec protocol, version 1) that fails at its first pull,
# with the secret $1 in its stderr and in its malformed answer.
read -r hello || exit 0
echo '{"hello":"bandit-node/environment","version":1}'
read -r line || exit 0
echo "connecting to postgres://bandit:$1@db.internal/ratings; customer 4411 reward=0.83" >&2
echo "this is not an answer: $1"
sleep 2
exit 3
OWNER
chmod +x "$dir/leaky_owner.sh"
# node1, the initiator of 3, allows itself 512-bit keys (its own policy's
# choice): the participants, with init --policy-open's policy, must not.
printf '[policy.samba.min]\npaillier_bits = 512\n' >"$dir/locals/node1.toml"
# Every agent of 2 answers from a log of 0/1 rewards through a program
# (examples/environments/bai_agent.sh): rewards the daemon takes as they come.
envdir=$root/examples/environments
for i in 2 3 4 5 6; do
  {
    echo "[local.bai.agent]"
    echo 'source = "exec"'
    echo "command = [\"sh\", \"$envdir/bai_agent.sh\", \"$envdir/bai_log.csv\", \"--wrap\"]"
    echo "rate = 2000"
    [ "$i" -ge 4 ] || continue
    echo "[local.samba.data_owner]"
    if [ "$i" = 5 ]; then
      echo 'source = "exec"'
      echo "command = [\"$dir/leaky_owner.sh\", \"$secret\"]"
    else
      echo "bernoulli = 0.$i"
    fi
  } >"$dir/locals/node$i.toml"
done
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true; cleanup_pair' EXIT
cleanup_pair() {
  for d in "$dir/pairA" "$dir/pairB"; do
    [ -f "$d/pid" ] && kill -TERM "$(cat "$d/pid")" 2>/dev/null || true
  done
  if mountpoint -q "$dir/pairA/sessions" 2>/dev/null; then
    sleep 1
    umount "$dir/pairA/sessions" || umount -l "$dir/pairA/sessions" || true
  fi
}
BANDIT_TESTNET_LOCAL="$dir/locals" "$here/up.sh" 6 "$dir"

# --- 1. a program's secret stays at its organization ---------------------------
cat >"$dir/samba.toml" <<'SPEC'
protocol = "samba"
[roles]
data_customer = "node1"
controller = "node2"
comp = "node3"
data_owner = ["node4", "node5", "node6"]
[params]
budget = 300
SPEC
start_wait samba
[ "$code" = 3 ] || fail "1: the SAMBA session with node5's failing program did not abort (exit code $code): $(tail -3 "$dir/samba.out")"
id=$(grep -o '"id": *"[0-9a-f]*"' "$dir/samba.out" | head -n 1 | grep -o '[0-9a-f]*"$' | tr -d '"')
[ -n "$id" ] || fail "1: no session ID in $dir/samba.out"
for i in 1 2 3 4 5 6; do
  cfg=$dir/node$i/config.toml
  "$bn" session status --config "$cfg" "$id" --json >"$dir/status-node$i.json" 2>&1 || true
  "$bn" session logs --config "$cfg" "$id" >"$dir/logs-node$i.txt" 2>&1 || true
  grep -q '"state": *"aborted"' "$dir/status-node$i.json" || fail "1: node$i does not show session $id aborted: $(head -c 400 "$dir/status-node$i.json")"
  grep -q 'data_owner\[1\] (node5)' "$dir/status-node$i.json" || fail "1: node$i's reason does not name data_owner[1] (node5)"
  if [ "$i" = 5 ]; then
    grep -q -- "$secret" "$dir/node5/sessions/$id.json" || fail "1: node5's own record does not hold the detail of its program's failure"
    continue
  fi
  if where=$(grep -rl -- "$secret" "$dir/node$i" "$dir/status-node$i.json" "$dir/logs-node$i.txt"); then
    fail "1: node$i holds node5's secret in: $where"
  fi
done
ok "1: session $id aborted everywhere ($(grep -o '"reason": *"[^"]*"' "$dir/status-node1.json")); node5's secret is in its own record and in nothing node1-4 or node6 store, log or serve"

# --- 2. rewards outside the spec's range ----------------------------------------
cat >"$dir/bai.toml" <<'SPEC'
protocol = "bai"
[roles]
coordinator = "node1"
agent = ["node2", "node3", "node4", "node5", "node6"]
[params]
algorithm = "dp_mase"
arms = 10
delta = 0.05
beta = 0.3
epsilon = 0.1
reward_min = 0
reward_max = 0.001
SPEC
start_wait bai
case $code in
0) ok "2: the BAI session with reward range [0, 0.001] completed (rewards clamped)" ;;
3)
  if grep '"reason"' "$dir/bai.out" | grep -Eq 'reward [0-9]|outside the session'; then
    fail "2: the BAI session aborted with a reward value in its reason: $(grep '"reason"' "$dir/bai.out")"
  fi
  ok "2: the BAI session aborted without a reward value: $(grep '"reason"' "$dir/bai.out")"
  ;;
*) fail "2: session start failed (exit code $code): $(tail -3 "$dir/bai.out")" ;;
esac

# --- 3. weak keys -------------------------------------------------------------------
sed 's/^budget = 300$/budget = 50\npaillier_bits = 512/' "$dir/samba.toml" | sed 's/"node5"/"node4"/; s/\["node4", "node4", "node6"\]/["node4", "node6"]/' >"$dir/samba512.toml"
start_wait samba512
reason=$(grep -o '"reason": *"[^"]*"' "$dir/samba512.out" | head -n 1 || true)
[ "$code" = 3 ] && echo "$reason" | grep -q 'declined' && echo "$reason" | grep -q '512' && echo "$reason" | grep -q '2048' ||
  fail "3: a SAMBA proposal with paillier_bits = 512 was not declined naming 512 and 2048 (exit code $code): $reason"
ok "3: paillier_bits = 512 declined: $reason"
"$here/down.sh" "$dir" >/dev/null 2>&1

# --- 6. configs that cannot start a node wrongly -----------------------------------
mkdir -p "$dir/badconfig"
: >"$dir/badconfig/empty.toml"
printf '[node]\nlisten = ["/ip4/127.0.0.1/tcp/%d"]\n' $((base + 60)) >"$dir/badconfig/noname.toml"
for c in empty noname; do
  set +e
  timeout 20 "$bn" run --config "$dir/badconfig/$c.toml" >"$dir/badconfig/$c.out" 2>&1
  code=$?
  set -e
  [ "$code" != 0 ] && [ "$code" != 124 ] || fail "6: bandit-node run with the $c config was not refused (exit code $code)"
  ok "6: the $c config refused: $(head -n 1 "$dir/badconfig/$c.out")"
done

# --- 4. onboarding: one-sided peer cards ------------------------------------------------
pair_init() { # NAME PORT
  "$bn" init --dir "$dir/pair$1" --name "pair$1" --policy-open --listen "/ip4/127.0.0.1/tcp/$2" \
    --api "127.0.0.1:$(($2 + 500))" >/dev/null 2>&1
}
pair_start() { # NAME
  nohup "$bn" run --config "$dir/pair$1/config.toml" >>"$dir/pair$1/daemon.log" 2>&1 &
  echo $! >"$dir/pair$1/pid"
}
rm -rf "$dir/pairA" "$dir/pairB"
pair_init A $((base + 51))
pair_init B $((base + 52))
"$bn" id --config "$dir/pairA/config.toml" --peer-card >"$dir/pairA.card" 2>/dev/null
"$bn" id --config "$dir/pairB/config.toml" --peer-card >"$dir/pairB.card" 2>/dev/null
"$bn" peers add --config "$dir/pairA/config.toml" "$dir/pairB.card" >/dev/null
if [ "$(id -u)" = 0 ] && command -v mount >/dev/null; then
  # 5 needs pairA's sessions directory on a file system it can turn
  # read-only: a tmpfs of its own.
  mkdir -p "$dir/pairA/sessions"
  mount -t tmpfs -o size=16m,mode=0700 failsafe "$dir/pairA/sessions"
fi
pair_start A
pair_start B
sleep 10
lines=$(wc -l <"$dir/pairA/daemon.log")
reason=$("$bn" peers --config "$dir/pairA/config.toml" --json | grep -o '"reason": *"[^"]*"' | head -n 1 || true)
[ "$lines" -lt 50 ] || fail "4: pairA logged $lines lines in 10 s of a one-sided peer card (want fewer than 50): $(sort "$dir/pairA/daemon.log" | uniq -c | sort -rn | head -3)"
[ -n "$reason" ] || fail "4: pairA's peers shows no reason for pairB"
ok "4: one-sided peer cards for 10 s: pairA logged $lines lines; its peers says $reason"
"$bn" peers add --config "$dir/pairB/config.toml" "$dir/pairA.card" >/dev/null
t0=$(date +%s.%N)
connected=""
for _ in $(seq 1 100); do
  if "$bn" peers --config "$dir/pairA/config.toml" --json | grep -q '"connected": *true'; then
    connected=$(date +%s.%N)
    break
  fi
  sleep 0.1
done
[ -n "$connected" ] || fail "4: pairA and pairB did not connect within 10 s of the second card"
secs=$(awk -v a="$t0" -v b="$connected" 'BEGIN { printf "%.1f", b - a }')
awk -v s="$secs" 'BEGIN { exit !(s <= 5) }' || fail "4: pairA and pairB connected $secs s after the second card (want within 5 s)"
ok "4: connected $secs s after pairB added pairA's card"

# --- 5. a completed session is never lost ------------------------------------------------
if ! mountpoint -q "$dir/pairA/sessions" 2>/dev/null; then
  echo "failsafe.sh: 5 skipped: it needs root to mount a tmpfs it can turn read-only" >&2
else
  printf 'protocol = "ping"\n[roles]\nparticipant = ["pairB", "pairA"]\n[params]\ncount = 20000\n' >"$dir/ping.toml"
  "$bn" session start --config "$dir/pairB/config.toml" "$dir/ping.toml" --json >"$dir/ping.out"
  pid=$(grep -o '"id": *"[0-9a-f]*"' "$dir/ping.out" | head -n 1 | grep -o '[0-9a-f]*"$' | tr -d '"')
  for _ in $(seq 1 100); do
    grep -q '"state": *"running"' "$dir/pairA/sessions/$pid.json" 2>/dev/null && break
    sleep 0.1
  done
  mount -o remount,ro "$dir/pairA/sessions"
  state=""
  for _ in $(seq 1 600); do
    state=$("$bn" session status --config "$dir/pairA/config.toml" "$pid" --json | grep -o '"state": *"[a-z]*"' | grep -o '[a-z]*"$' | tr -d '"')
    case $state in completed | aborted) break ;; esac
    sleep 0.1
  done
  [ "$state" = completed ] || fail "5: with its sessions directory read-only, pairA shows the session $state, not completed"
  grep -q '"state": *"completed"' "$dir/pairA/sessions/$pid.json" && fail "5: the record was written to a read-only directory?"
  mount -o remount,rw "$dir/pairA/sessions"
  stored=""
  for _ in $(seq 1 300); do
    if grep -q '"state": *"completed"' "$dir/pairA/sessions/$pid.json" 2>/dev/null; then stored=yes; break; fi
    sleep 0.1
  done
  [ -n "$stored" ] || fail "5: 30 s after its sessions directory became writable, pairA's record of session $pid does not say completed"
  kill -TERM "$(cat "$dir/pairA/pid")"
  for _ in $(seq 1 200); do kill -0 "$(cat "$dir/pairA/pid")" 2>/dev/null || break; sleep 0.1; done
  pair_start A
  sleep 2
  "$bn" session status --config "$dir/pairA/config.toml" "$pid" --json | grep -q '"state": *"completed"' ||
    fail "5: after a restart pairA does not show session $pid completed"
  ok "5: a session completed while pairA's sessions directory was read-only is recorded completed once it is writable, and after a restart"
fi
echo "failsafe.sh: every check passed" >&2
