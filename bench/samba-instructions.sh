#!/usr/bin/env bash
# samba-instructions.sh [K] [N1] [N2] — the instructions a SAMBA step costs
# each role on real daemons, against the bare message pattern, counted by
# valgrind (cachegrind). Unlike CPU time, an instruction count does not
# depend on how fast the machine runs or on what else runs on it, so it
# compares two builds, or SAMBA and the bare pattern, to a fraction of a
# per cent, whatever the machine is doing; but it does not see cache misses,
# which are most of SAMBA's extra at K = 100 (README, "SAMBA speed") —
# CACHESIM=1 (below) simulates the first-level caches for that.
#
# For each role (the controller, comp, data owner 1) it starts a testnet of
# K + 3 daemons at GOMAXPROCS=1 (as testnet/samba-bench.sh), runs the role's
# daemon under cachegrind for one SAMBA session (UCB) of N1 steps, and again,
# in a new process, for one of N2 steps; a step costs the difference over
# N2 - N1. The same for the role's process in the bare pattern
# (`bandit-node bench pattern --processes --party-wrapper`). What varies
# between two runs of the same build — the garbage collector's cycles and the
# connections' Noise handshakes, which follow the wall time rather than the
# steps — is counted apart ("gc+hs"); "rest" is the rest. Then the functions
# whose cost differs most between SAMBA and the pattern.
#
#   bench/samba-instructions.sh            # K = 10, N1 = 1000, N2 = 4000
#   BIN=/tmp/bandit-node bench/samba-instructions.sh 10
#   KEEP=/tmp/instr TOP=60 bench/samba-instructions.sh   # keep every table
#
#   CACHESIM=1 bench/samba-instructions.sh  # and the misses of simulated caches
#
# KEEP=DIR copies the per-function tables (instructions a step, SAMBA's and
# the bare pattern's, per role: DIR/samba-ROLE.tsv, DIR/bare-ROLE.tsv) to
# DIR; TOP is how many functions each list shows (default 15).
#
# CACHESIM=1 has cachegrind simulate first-level caches of this machine's
# size (32 KB for instructions, 32 KB for data, 8-way) and prints the misses
# a step too: the lines of code and data a step needs that it did not touch
# recently — its footprint, which is what costs when other processes have
# evicted it (at K = 100 a data owner runs every few milliseconds, after a
# hundred other processes). Then the functions whose instruction misses
# differ most. The cores' prefetchers are not simulated, so the counts are
# an upper bound; compare them between builds or with the pattern. It runs
# some 30 % slower.
#
# Needs valgrind (Debian's valgrind package). Takes a few minutes: a daemon
# under cachegrind runs some 50 times slower.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
k=${1:-10}
n1=${2:-1000}
n2=${3:-4000}
[ "$k" -ge 2 ] || { echo "samba-instructions.sh: K must be at least 2, got $k" >&2; exit 2; }
[ "$n2" -gt "$n1" ] && [ "$n1" -gt "$k" ] || { echo "samba-instructions.sh: need K < N1 < N2, got K = $k, N1 = $n1, N2 = $n2" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "samba-instructions.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d -t samba-instructions.XXXXXX)
trap '"$root/testnet/down.sh" "$work/tn" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
bin=${BIN:-}
top=${TOP:-15}
case $top in '' | *[!0-9]*) echo "samba-instructions.sh: TOP must be a number of functions, got '$top'" >&2; exit 2 ;; esac
keep=${KEEP:-}
cachesim=--cache-sim=no
[ "${CACHESIM:-0}" != 1 ] || cachesim="--cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64"
if [ -z "$bin" ]; then
  (cd "$root" && go build -o "$work/bandit-node" ./cmd/bandit-node)
  bin=$work/bandit-node
fi
# shellcheck source=testnet/samba-lib.sh
. "$root/testnet/samba-lib.sh"
# The daemon restarts itself to set GODEBUG ([runtime] schedtrace, cmd/bandit-node/cli/schedtrace.go)
# unless GODEBUG sets schedtrace: set it here, so that valgrind follows the
# daemon itself. Async preemption's signals are off under valgrind.
vgdebug=asyncpreemptoff=1,schedtrace=2147483647

# funcs FILE: "function instructions" lines of a cachegrind output.
# With COLUMNS (e.g. "6 9"), the sum of those columns of the cost lines
# instead of the instructions (column 2: cachegrind's events in order, Ir
# I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw, after the line number).
funcs() {
  awk -v cols="${2:-2}" '/^fn=/ { fn = substr($0, 4); sub(/'"'"'[0-9]+$/, "", fn); next }
       /^[0-9]/ { n = split(cols, c, " "); for (j = 1; j <= n; j++) s[fn] += $(c[j]) }
       END { for (f in s) print f "\t" s[f] }' "$1"
}

# perstep A B N OUT [COLUMNS]: instructions (or the COLUMNS' events) a step
# by function, (B - A) / N, into OUT.
perstep() {
  awk -F'\t' -v n="$3" 'FNR == NR { a[$1] = $2; next } { b[$1] = $2 }
    END { for (f in a) b[f] += 0; for (f in b) printf "%s\t%.1f\n", f, (b[f] - a[f]) / n }' \
    <(funcs "$1" "${5:-}") <(funcs "$2" "${5:-}") >"$4"
}

# totals SAMBA BARE: "SAMBA BARE" — the sums a step, without the share that
# follows the wall time.
totals() {
  awk -F'\t' -v noise="$noise" 'FNR == NR { if ($1 !~ noise) st += $2; next } { if ($1 !~ noise) bt += $2 }
    END { printf "%.0f %.0f\n", st, bt }' "$1" "$2"
}

# The daemon's share that follows the wall time, not the steps.
noise='edwards25519|ecdh|x25519|sha256|sha512|scanObject|tryDeferToSpanScan|pcvalue|getStackMap|scanblock|findObject|typePointers|extractHeapBits|greyobject|scanstack|scanframe|markroot|gcDrain|wbBuf|runtime\.step$|textAddr|findfunc|unwinder|adjustframe|adjustpointers|sweep'

# differ ROLE TABLE WHAT: the TOP functions whose WHAT a step differ most
# between SAMBA and the bare pattern, for ROLE (TABLE: "" for the
# instructions, .i1 for the instruction-cache misses).
differ() {
  echo "== $1: the functions whose $3 a step differ most (SAMBA, bare, difference)"
  awk -F'\t' -v noise="$noise" 'FNR == NR { a[$1] = $2; next } { b[$1] = $2 }
    END { for (f in b) a[f] += 0; for (f in a) if (f !~ noise) printf "%10.1f %10.1f %+10.1f  %s\n", a[f], b[f], a[f] - b[f], f }' \
    "$work/samba-$1$2.tsv" "$work/bare-$1$2.tsv" | awk '{ d = $3 < 0 ? -$3 : $3; print d "\t" $0 }' | sort -g -r | awk -F'\t' -v top="$top" 'NR <= top { print $2 }'
}

# session N: a SAMBA session of N steps, started by the data customer.
session() {
  "$bin" session start --config "$work/tn/node1/config.toml" "$work/samba-$1.toml" --wait >"$work/session.log" 2>&1 ||
    { echo "samba-instructions.sh: the session of $1 steps failed:" >&2; tail -5 "$work/session.log" >&2; exit 1; }
}

# stop NODE: stops a daemon of the testnet.
stop() {
  local pid
  pid=$(cat "$work/tn/node$1/pid")
  if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; fi
  while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
}

# start NODE [WRAPPER...]: starts a daemon of the testnet again (through
# WRAPPER, e.g. valgrind) and waits until it is connected to every other.
start() {
  local node=$1 c
  shift
  local godebug=()
  [ $# -eq 0 ] || godebug=("GODEBUG=$vgdebug")
  env GOMAXPROCS=1 ${godebug[@]+"${godebug[@]}"} "$@" "$bin" run --config "$work/tn/node$node/config.toml" >>"$work/tn/node$node/daemon.log" 2>&1 &
  echo $! >"$work/tn/node$node/pid"
  for _ in $(seq 1 120); do
    c=$("$bin" peers --config "$work/tn/node$node/config.toml" --json 2>/dev/null | grep -c '"connected": true' || true)
    [ "$c" -ge $((k + 2)) ] && return
    kill -0 "$(cat "$work/tn/node$node/pid")" || break
    sleep 1
  done
  echo "samba-instructions.sh: node$node did not come back (see $work/tn/node$node/daemon.log)" >&2
  exit 1
}

# samba NODE N OUT: a session of N steps with node NODE under cachegrind.
samba() {
  stop "$1"
  # shellcheck disable=SC2086
  start "$1" valgrind --tool=cachegrind $cachesim --cachegrind-out-file="$3"
  session "$2"
  stop "$1"
}

# bare ROLE INDEX N OUT: the bare pattern of N steps, party ROLE[INDEX]
# under cachegrind.
bare() {
  cat >"$work/wrap.sh" <<WRAP
#!/usr/bin/env bash
# Reads the party's first line (its role) and passes everything on.
IFS= read -r hello
case "\$hello" in
*'"role":"$1","index":$2,'*)
  { printf '%s\n' "\$hello"; cat; } | GODEBUG=$vgdebug valgrind --tool=cachegrind $cachesim --cachegrind-out-file=$4 "\$@" 2>>"$work/bare-valgrind.log"
  exit ;;
esac
{ printf '%s\n' "\$hello"; cat; } | "\$@"
WRAP
  chmod +x "$work/wrap.sh"
  GODEBUG=schedtrace=2147483647 "$bin" bench pattern --processes --procs 1 --k "$k" --steps "$3" --party-wrapper "$work/wrap.sh" >/dev/null
  # The parent does not wait for the wrapped party's valgrind to write.
  for _ in $(seq 1 100); do [ -s "$4" ] && ! pgrep -f "cachegrind-out-file=$4" >/dev/null && break; sleep 0.2; done
}

mkdir -p "$work/tn"
samba_locals "$work/tn" "$k"
for i in $(seq 1 $((k + 3))); do echo "GOMAXPROCS=1" >"$work/tn/locals/node$i.env"; done
for n in "$n1" "$n2"; do samba_spec "$work/samba-$n.toml" "$k" "$n" ucb; done
BANDIT_TESTNET_BIN=$bin BANDIT_TESTNET_LOCAL="$work/tn/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000} \
  "$root/testnet/up.sh" $((k + 3)) "$work/tn" >/dev/null 2>"$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
session "$n1" # every stream open

echo "== instructions a step, K = $k (sessions of $n1 and $n2 steps; cachegrind)"
printf '%-12s %10s %10s %10s   %10s %10s %10s   %6s\n' role samba gc+hs rest bare gc+hs rest rest_ratio
for spec in "controller 2 0" "comp 3 0" "data_owner 5 1"; do
  read -r role node index <<<"$spec"
  samba "$node" "$n1" "$work/s1.out"
  samba "$node" "$n2" "$work/s2.out"
  start "$node"
  perstep "$work/s1.out" "$work/s2.out" $((n2 - n1)) "$work/samba-$role.tsv"
  bare "$role" "$index" "$n1" "$work/b1.out"
  bare "$role" "$index" "$n2" "$work/b2.out"
  perstep "$work/b1.out" "$work/b2.out" $((n2 - n1)) "$work/bare-$role.tsv"
  if [ "$cachesim" != --cache-sim=no ]; then
    perstep "$work/s1.out" "$work/s2.out" $((n2 - n1)) "$work/samba-$role.i1.tsv" 3
    perstep "$work/b1.out" "$work/b2.out" $((n2 - n1)) "$work/bare-$role.i1.tsv" 3
    perstep "$work/s1.out" "$work/s2.out" $((n2 - n1)) "$work/samba-$role.d1.tsv" "6 9"
    perstep "$work/b1.out" "$work/b2.out" $((n2 - n1)) "$work/bare-$role.d1.tsv" "6 9"
  fi
  awk -F'\t' -v role="$role" -v noise="$noise" '
    FNR == NR { st += $2; if ($1 ~ noise) sn += $2; next }
    { bt += $2; if ($1 ~ noise) bn += $2 }
    END { printf "%-12s %10.0f %10.0f %10.0f   %10.0f %10.0f %10.0f   %6.3f\n", role, st, sn, st - sn, bt, bn, bt - bn, (st - sn) / (bt - bn) }' \
    "$work/samba-$role.tsv" "$work/bare-$role.tsv"
done
for role in controller comp data_owner; do differ "$role" "" instructions; done
if [ "$cachesim" != --cache-sim=no ]; then
  echo "== simulated first-level cache misses a step (32 KB each, 8-way; without gc+hs)"
  printf '%-12s %12s %12s %8s   %12s %12s %8s\n' role samba_I1 bare_I1 ratio samba_D1 bare_D1 ratio
  for role in controller comp data_owner; do
    read -r si bi < <(totals "$work/samba-$role.i1.tsv" "$work/bare-$role.i1.tsv")
    read -r sd bd < <(totals "$work/samba-$role.d1.tsv" "$work/bare-$role.d1.tsv")
    awk -v r="$role" -v si="$si" -v bi="$bi" -v sd="$sd" -v bd="$bd" \
      'BEGIN { printf "%-12s %12.0f %12.0f %8.2f   %12.0f %12.0f %8.2f\n", r, si, bi, si / bi, sd, bd, sd / bd }'
  done
  for role in controller comp data_owner; do differ "$role" .i1 "instruction-cache misses"; done
fi
if [ -n "$keep" ]; then
  mkdir -p "$keep"
  cp "$work"/samba-*.tsv "$work"/bare-*.tsv "$keep"/
  echo "== the per-function tables are in $keep"
fi
