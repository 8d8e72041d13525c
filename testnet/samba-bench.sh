#!/usr/bin/env bash
# samba-bench.sh [DIR] [K] [N] [ALGORITHM] [REPS] — SAMBA on K+3 daemon
# processes against the bare message pattern, side by side in the same run.
#
# Starts a testnet like samba.sh (a data customer, a controller, comp and K
# data owners on the top-K MovieLens means; every daemon at GOMAXPROCS=$PROCS,
# default 1: K+3 processes share this machine's cores, and a Go process with
# more Ps than it can use spins looking for work), then REPS times (default
# 3), one after the other:
#   - a SAMBA session of budget 200, which times the setup;
#   - the bare pattern of N/2 steps, every party its own process at the same
#     GOMAXPROCS (`bandit-node bench pattern --processes`);
#   - a SAMBA session of budget N (ALGORITHM, default ucb), timed by the
#     data customer's daemon from its creation to its end: proposal, setup
#     (Paillier keys, the AES key, the seeds) and N steps;
#   - the bare pattern of N/2 steps again. Its time is the mean of the two
#     halves, run before and after the session: the speed of a shared
#     machine drifts from minute to minute (a loaded 2-core VM: by a third
#     within a repetition), and a drift that is steady over the repetition
#     cancels out.
# Prints one line per repetition and the medians: the session's ms per step
# over its steps alone, measured two ways: from the data customer's records,
# (T(N) - T(200)) / (N - 200), which leaves the setup out on average but
# carries the random time of two key generations; and on the controller's
# clock, from the first score to the last bits of the N session (the
# result's ms_per_step), which leaves the setup out exactly. Each has its
# ratio to the bare pattern. Then the drift: the second bare
# half's ms per step over the first's (far from 1, the machine's speed
# changed during the repetition and its ratio says little). Then the cost in
# CPU time, which the scheduler's luck on a shared machine moves less than
# the wall time: idle_cpu, the CPU seconds a second the idle testnet's
# daemons use beside the bare pattern (their timers, pings, gossip); the bare
# pattern's CPU ms per step, all its processes during its timed steps; the
# session's, all the daemons but the data customer's (idle during the steps;
# its key generation takes a random time) over (N - 200) steps as above,
# less the idle testnet's rate over the same wall time; and their ratio.
# Under the medians, an interval for the median of each ratio (order
# statistics, ≥ 90 % coverage; 5 repetitions or more): run-to-run medians of
# 8 repetitions have differed by 0.13 on this kind of machine, and the
# interval shows it. Then the same CPU cost by role (controller, comp, one data owner; µs per
# step), which says where SAMBA's extra goes.
# Last, where perf(1) can count a process's events (root, or
# kernel.perf_event_paranoid ≤ 0; Debian's linux-perf), the controller's CPU
# per step counted inside the steps, the same way for both: perf stat counts
# the controller's process's CPU time (task-clock) and its writes longer than
# a bit's frame — one a step, the batch to comp — second by second, and of
# the seconds from the first batch to the last, the first and the last
# (partly setup or teardown) are dropped. No session is differenced and no
# setup enters it; for SAMBA the controller's daemon's idle rate (above) is
# taken off. PERF=0 turns it off.
# PIN=1 gives the controller a core of its own, in both runs: its daemon (or
# the bare pattern's controller process) on the last CPU, every other
# daemon and party process, perf and this script on the others — closer to
# each organization on its own machine, and the controller's instructions
# no longer share a core with what its co-runners do (SAMBA's data owners
# and comp work more than the bare pattern's). It needs taskset(1) and two
# CPUs or more; the steps take longer (the other parties share fewer
# cores), so each frame tends to wake the controller on its own.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$(mktemp -d -t bandit-sambabench.XXXXXX)}
k=${2:-10}
n=${3:-10000}
algo=${4:-ucb}
reps=${5:-3}
procs=${PROCS:-1}
small=200
# perf_ok: 1 where perf can count the controller's events (see the header).
perf_ok=0
pin=${PIN:-0}
ncpu=$(nproc)
if [ "$pin" = 1 ]; then
  command -v taskset >/dev/null 2>&1 || { echo "samba-bench.sh: PIN=1 needs taskset (util-linux)" >&2; exit 2; }
  [ "$ncpu" -ge 2 ] || { echo "samba-bench.sh: PIN=1 needs two CPUs or more, this machine has $ncpu" >&2; exit 2; }
  own=$((ncpu - 1)) rest=0-$((ncpu - 2))
fi
if [ "${PERF:-1}" != 0 ] && command -v perf >/dev/null 2>&1 &&
  perf stat -e task-clock -e syscalls:sys_enter_write -- true >/dev/null 2>&1; then
  perf_ok=1
fi
[ "$n" -gt "$small" ] || { echo "samba-bench.sh: N must exceed $small, got $n" >&2; exit 2; }
# The setup session of budget $small must have steps of its own (t > K).
[ "$k" -lt "$small" ] || { echo "samba-bench.sh: K must be below $small (the setup session's budget), got $k" >&2; exit 2; }
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# shellcheck source=testnet/samba-lib.sh
. "$here/samba-lib.sh"
samba_locals "$dir" "$k"
if [ "$procs" -gt 0 ]; then
  for i in $(seq 1 $((k + 3))); do echo "GOMAXPROCS=$procs" >"$dir/locals/node$i.env"; done
fi
trap '"$here/down.sh" "$dir" >/dev/null 2>&1 || true' EXIT
BANDIT_TESTNET_LOCAL="$dir/locals" BANDIT_TESTNET_BASE_PORT=${BANDIT_TESTNET_BASE_PORT:-28000} "$here/up.sh" $((k + 3)) "$dir"
bin=$dir/bin/bandit-node
if [ "$pin" = 1 ]; then
  # Once the testnet is up (all its daemons on one CPU would take minutes
  # to connect): this script and what it starts on the other CPUs, every
  # thread of every daemon too but the controller's (node2), on its own.
  taskset -pc "$rest" $$ >/dev/null
  for i in $(seq 1 $((k + 3))); do
    taskset -a -pc "$([ "$i" = 2 ] && echo "$own" || echo "$rest")" "$(cat "$dir/node$i/pid")" >/dev/null
  done
fi

for budget in "$n" "$small"; do
  samba_spec "$dir/samba-$budget.toml" "$k" "$budget" "$algo"
done

# The controller writes one frame a step longer than a bit's (≤ 116 bytes
# with the muxer's and Noise's overhead, any K below 16,384): its batch to
# comp, 79 + 38 K bytes at least; the bare pattern's controller the same.
batch_min=$((117 + 19 * k))
perf_events=(-e task-clock -e syscalls:sys_enter_write --filter "count > $batch_min")
# The bare pattern's party processes start through this wrapper, which
# counts the controller's (party 0) into $PERF_OUT.
pin_own=() pin_rest=()
if [ "$pin" = 1 ]; then pin_own=(taskset -c "$own") pin_rest=(taskset -c "$rest"); fi
cat >"$dir/perf-party.sh" <<EOS
#!/bin/sh
if [ "\$BANDIT_PATTERN_PARTY" = 0 ]; then
  if [ -n "\$PERF_OUT" ]; then
    exec ${pin_rest[*]} perf stat -I 1000 -x, -o "\$PERF_OUT" $(printf '%q ' "${perf_events[@]}")-- ${pin_own[*]} "\$@"
  fi
  exec ${pin_own[*]} "\$@"
fi
exec "\$@"
EOS
chmod +x "$dir/perf-party.sh"

# window FILE: "CPU_MS SECONDS STEPS" from perf stat's intervals in FILE:
# the CPU milliseconds, the seconds and the steps (batches) of the intervals
# after the first with a batch and before the last with one.
window() {
  awk -F, '
    /^#/ || NF < 4 { next }
    { ts = $1 + 0; v = ($2 ~ /^[0-9.]+$/) ? $2 + 0 : 0 }
    $4 == "task-clock" { n++; t[n] = ts; cpu[n] = v; w[n] = 0 }
    $4 ~ /sys_enter_write/ { w[n] = v }
    END {
      first = 0; last = 0
      for (i = 1; i <= n; i++) if (w[i] > 0) { if (!first) first = i; last = i }
      c = 0; s = 0; st = 0
      for (i = first + 1; i < last; i++) { c += cpu[i]; s += t[i] - t[i - 1]; st += w[i] }
      printf "%.3f %.3f %d\n", c, s, st
    }' "$1"
}

# daemons_cpu: the CPU seconds (user and system) the testnet's daemons have
# used so far, by role: "DC CONTROLLER COMP OWNERS" (node1 is the data
# customer, node2 the controller, node3 comp, the others the data owners).
daemons_cpu() {
  local i f t=(0 0 0 0)
  for i in $(seq 1 $((k + 3))); do
    read -r -a f <"/proc/$(cat "$dir/node$i/pid")/stat"
    t[$((i < 4 ? i - 1 : 3))]=$((t[i < 4 ? i - 1 : 3] + f[13] + f[14]))
  done
  awk -v a="${t[0]}" -v b="${t[1]}" -v c="${t[2]}" -v d="${t[3]}" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.2f %.2f %.2f %.2f\n", a / hz, b / hz, c / hz, d / hz }'
}

# delta BEFORE AFTER: AFTER - BEFORE, field by field (CPU seconds, or
# seconds since the epoch).
delta() {
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " "); for (i = 1; i <= n; i++) printf "%.2f%s", y[i] - x[i], (i < n ? " " : "\n") }'
}

# session BUDGET [PERFFILE]: "RECORD WALL CPU×4 CTRL" for one SAMBA session: its seconds
# from its creation to its end as the data customer's daemon recorded them,
# the wall seconds of the whole `session start --wait`, the CPU seconds each
# role's daemons used meanwhile (see daemons_cpu), and the ms per step of the
# steps alone on the controller's clock (the result's ms_per_step). With
# PERFFILE, perf counts the controller's daemon into it (see window).
session() {
  local id times c0 c1 w0 w1 rec ctrl perf_pid=
  if [ -n "${2:-}" ]; then
    "${pin_rest[@]}" perf stat -I 1000 -x, -o "$2" "${perf_events[@]}" -p "$(cat "$dir/node2/pid")" &
    perf_pid=$!
  fi
  c0=$(daemons_cpu)
  w0=$(date +%s.%N)
  if ! "$bin" session start --config "$dir/node1/config.toml" "$dir/samba-$1.toml" --wait --timeout "${BANDIT_WAIT_TIMEOUT:-12h}" >"$dir/session-$1.out" 2>&1; then
    echo "samba-bench.sh: the SAMBA session of budget $1 failed:" >&2
    tail -5 "$dir/session-$1.out" >&2
    exit 1
  fi
  w1=$(date +%s.%N)
  c1=$(daemons_cpu)
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" || true
  fi
  id=$(awk '/^session [0-9a-f]+ proposed/ { print $2; exit }' "$dir/session-$1.out")
  times=$("$bin" session status --config "$dir/node1/config.toml" "$id" --json |
    awk -F'"' '/"created"|"finished"/ { print $4 }')
  # shellcheck disable=SC2086
  set -- $times
  rec=$(awk -v s="$(date -d "$1" +%s.%N)" -v e="$(date -d "$2" +%s.%N)" 'BEGIN { printf "%.3f", e - s }')
  ctrl=$("$bin" session result --config "$dir/node1/config.toml" "$id" --json |
    awk -F': ' '/"ms_per_step"/ { gsub(/,/, "", $2); print $2; exit }')
  [ -n "$ctrl" ] || { echo "samba-bench.sh: session $id's result has no ms_per_step" >&2; exit 1; }
  echo "$rec $(delta "$w0" "$w1") $(delta "$c0" "$c1") $ctrl"
}

# bare STEPS [PERFFILE]: "MS WALL CPU×3 IDLE×4" for the bare pattern of STEPS steps:
# its ms per step; the wall seconds of the whole run; the CPU ms per step of
# its controller, its comp and its data owners (together) during the timed
# steps; and the CPU seconds the idle testnet's daemons used beside it, by
# role (see daemons_cpu). With PERFFILE, perf counts its controller into it
# (see window).
bare() {
  local c0 c1 w0 w1 out wrap=()
  [ -z "${2:-}" ] && [ "$pin" = 0 ] || wrap=(--party-wrapper "$dir/perf-party.sh")
  c0=$(daemons_cpu)
  w0=$(date +%s.%N)
  out=$(PERF_OUT=${2:-} "$bin" bench pattern --processes --k "$k" --steps "$1" --procs "$procs" --json "${wrap[@]}")
  w1=$(date +%s.%N)
  c1=$(daemons_cpu)
  echo "$out" | awk -v steps="$1" -v wall="$(delta "$w0" "$w1")" -v idle="$(delta "$c0" "$c1")" -F': ' '
    /"ms_per_step"/ { gsub(/,/, "", $2); ms = $2 }
    /"steps_cpu_seconds"/ { in_cpu = 1; next }
    in_cpu && /}/ { in_cpu = 0 }
    in_cpu { gsub(/[",]/, "", $1); gsub(/ /, "", $1); gsub(/,/, "", $2); cpu[$1] = 1000 * $2 / steps }
    END { printf "%s %s %.6f %.6f %.6f %s\n", ms, wall, cpu["controller"], cpu["comp"], cpu["data_owner"], idle }'
}

echo "== SAMBA ($algo) on $((k + 3)) daemons vs the bare message pattern: K = $k, N = $n, every process at GOMAXPROCS=$procs, $reps repetitions$([ "$pin" = 1 ] && echo ", the controller alone on CPU $own") ==" >&2
printf '%-4s %14s %14s %12s %16s %8s %14s %10s %8s %10s %10s %10s %8s\n' rep bare_ms/step samba_wall_s setup_s steps_ms/step ratio ctrl_ms/step ctrl_ratio drift idle_cpu bare_cpu samba_cpu cpu_ratio
rows=()
roles=()
wins=()
for r in $(seq 1 "$reps"); do
  pf=()
  [ "$perf_ok" = 0 ] || pf=("$dir/perf-$r-bare1.csv" "$dir/perf-$r-samba.csv" "$dir/perf-$r-bare2.csv")
  small_run=$(session "$small")
  before=$(bare $((n / 2)) "${pf[0]:-}")
  big_run=$(session "$n" "${pf[1]:-}")
  after=$(bare $((n / 2)) "${pf[2]:-}")
  # Columns of the runs: session: 1 record, 2 wall, 3-6 CPU by role, 7 the
  # controller's ms per step; bare:
  # 1 ms per step, 2 wall, 3-5 steps CPU ms per step, 6-9 idle CPU by role.
  out=$(awk -v r="$r" -v n="$n" -v m="$small" -v k="$k" -v S="$small_run" -v L="$big_run" -v B1="$before" -v B2="$after" 'BEGIN {
    split(S, s, " "); split(L, l, " "); split(B1, a, " "); split(B2, b, " ")
    bms = (a[1] + b[1]) / 2
    steps = 1000 * (l[1] - s[1]) / (n - m)
    idle = 0
    for (i = 0; i < 4; i++) {
      rate[i] = (a[6 + i] + b[6 + i]) / (a[2] + b[2])   # CPU seconds a second, role i idle
      idle += rate[i]
      # the session role i cost per step (ms), less its idle rate
      scpu[i] = 1000 * ((l[3 + i] - rate[i] * l[2]) - (s[3 + i] - rate[i] * s[2])) / (n - m)
    }
    for (i = 0; i < 3; i++) bcpu[i] = (a[3 + i] + b[3 + i]) / 2    # controller, comp, owners
    bt = bcpu[0] + bcpu[1] + bcpu[2]
    # The data customer does nothing during the steps; its key generation,
    # a prime search, takes a random time that would swamp the difference
    # of two sessions: it is left out of the total (its column shows it).
    st = scpu[1] + scpu[2] + scpu[3]
    printf "%-4s %14.3f %14.2f %12.2f %16.3f %8.2f %14.3f %10.2f %8.2f %10.2f %10.3f %10.3f %8.2f\n", r, bms, l[1], s[1], steps, steps / bms, l[7], l[7] / bms, b[1] / a[1], idle, bt, st, st / bt
    printf "%-4s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n", r, scpu[1] * 1000, bcpu[0] * 1000, scpu[2] * 1000, bcpu[1] * 1000, scpu[3] * 1000 / k, bcpu[2] * 1000 / k, scpu[0] * 1000
    print rate[1] }')
  row=$(echo "$out" | sed -n 1p)
  echo "$row"
  rows+=("$row")
  roles+=("$(echo "$out" | sed -n 2p)")
  if [ "$perf_ok" = 1 ]; then
    # The controller's CPU µs a step inside the steps: SAMBA's less its
    # daemon's idle rate, the bare pattern's over both halves.
    # idle: the controller daemon's idle CPU seconds a second (rate[1] above).
    wins+=("$(awk -v r="$r" -v S="$(window "${pf[1]}")" -v B1="$(window "${pf[0]}")" -v B2="$(window "${pf[2]}")" \
      -v idle="$(echo "$out" | sed -n 3p)" 'BEGIN {
        split(S, s, " "); split(B1, a, " "); split(B2, b, " ")
        if (s[3] == 0 || a[3] + b[3] == 0) exit   # no whole second of steps
        sc = 1000 * (s[1] - 1000 * idle * s[2]) / s[3]
        bc = 1000 * (a[1] + b[1]) / (a[3] + b[3])
        printf "%-4s %12.1f %12.1f %8.3f %10d %10d\n", r, sc, bc, sc / bc, s[3], a[3] + b[3] }')")
    [ -n "${wins[-1]}" ] || { unset 'wins[-1]'; echo "samba-bench.sh: repetition $r: perf counted no whole second of steps (N too small?)" >&2; }
  fi
done
printf '%-4s %14.3f %14.2f %12.2f %16.3f %8.2f %14.3f %10.2f %8.2f %10.2f %10.3f %10.3f %8.2f\n' med \
  "$(median 2 "${rows[@]}")" "$(median 3 "${rows[@]}")" "$(median 4 "${rows[@]}")" "$(median 5 "${rows[@]}")" "$(median 6 "${rows[@]}")" "$(median 7 "${rows[@]}")" \
  "$(median 8 "${rows[@]}")" "$(median 9 "${rows[@]}")" "$(median 10 "${rows[@]}")" "$(median 11 "${rows[@]}")" "$(median 12 "${rows[@]}")" "$(median 13 "${rows[@]}")"
echo "median's interval: ratio $(interval 6 "${rows[@]}"); controller's clock $(interval 8 "${rows[@]}"); CPU ratio $(interval 13 "${rows[@]}")"
echo
echo "CPU µs per step by role during the steps, SAMBA (less the idle testnet) against the bare pattern:"
printf '%-4s %10s %10s %10s %10s %10s %10s %10s\n' rep ctrl_samba ctrl_bare comp_samba comp_bare owner_samba owner_bare dc_samba
printf '%s\n' "${roles[@]}"
printf '%-4s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f\n' med \
  "$(median 2 "${roles[@]}")" "$(median 3 "${roles[@]}")" "$(median 4 "${roles[@]}")" "$(median 5 "${roles[@]}")" "$(median 6 "${roles[@]}")" "$(median 7 "${roles[@]}")" "$(median 8 "${roles[@]}")"
if [ "$perf_ok" = 1 ] && [ "${#wins[@]}" -gt 0 ]; then
  echo
  echo "The controller's CPU µs per step counted by perf inside the steps (SAMBA less its daemon's idle rate; see the header):"
  printf '%-4s %12s %12s %8s %10s %10s\n' rep ctrl_samba ctrl_bare ratio samba_steps bare_steps
  printf '%s\n' "${wins[@]}"
  printf '%-4s %12.1f %12.1f %8.3f\n' med "$(median 2 "${wins[@]}")" "$(median 3 "${wins[@]}")" "$(median 4 "${wins[@]}")"
  echo "median's interval: ratio $(interval 4 "${wins[@]}")"
else
  echo
  echo "(no CPU count inside the steps: perf could not count the controller's events here, or the steps took under 3 seconds; see the header)"
fi
