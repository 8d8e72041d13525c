#!/usr/bin/env bash
# ab.sh [-n PAIRS] [--warmup W] -- 'COMMAND A' 'COMMAND B'
#
# Times two whole commands in turn, pair by pair (A, B, A, B, …; each pair
# starts with the other command than the last, so that neither always runs
# first on a warm or a cold cache), and prints for each pair and over all of
# them the CPU time (user + system, of the command and its children), the
# wall time and the peak RSS of A and of B, with the ratio B / A. The CPU
# time of two commands run in turn moves far less with the machine's other
# jobs than their wall time: the ratios of docs/performance.md that say
# "CPU, pairs" are measured this way.
#
# Each command is a string run by `bash -c`; its output is discarded, and a
# command that fails stops the script. The peak RSS needs GNU time
# (/usr/bin/time, Debian's package `time`); without it the times come from
# bash's own `time` and the RSS columns read 0.
#
#   bench/ab.sh -n 5 -- 'env GOGC=400 ./mpccb.test -test.run ^$ -test.bench PrivateStep -test.benchtime 1000x' \
#                       'env GOGC=100 ./mpccb.test -test.run ^$ -test.bench PrivateStep -test.benchtime 1000x'
set -euo pipefail

usage() {
  echo "usage: $0 [-n PAIRS] [--warmup W] -- 'COMMAND A' 'COMMAND B'" >&2
  exit 2
}

pairs=5 warmup=1
while [ $# -gt 0 ]; do
  case $1 in
  -n)
    [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "ab.sh: -n takes a positive number of pairs, not '${2:-}'" >&2; usage; }
    pairs=$2
    shift 2
    ;;
  --warmup)
    [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "ab.sh: --warmup takes a number of runs of each command, not '${2:-}'" >&2; usage; }
    warmup=$2
    shift 2
    ;;
  --)
    shift
    break
    ;;
  *) usage ;;
  esac
done
[ $# -eq 2 ] || usage
cmds=("$1" "$2")
work=$(mktemp -d -t ab.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run I: runs command I (0 = A, 1 = B) once; prints "cpu_s wall_s rss_kib".
run() {
  local ok=1
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S %e %M' -o "$work/t" bash -c "${cmds[$1]}" >/dev/null 2>"$work/err" || ok=0
  else
    local TIMEFORMAT='%U %S %R 0'
    { time bash -c "${cmds[$1]}" >/dev/null 2>"$work/err" || ok=0; } 2>"$work/t"
  fi
  if [ $ok = 0 ]; then
    echo "ab.sh: command $([ "$1" -eq 0 ] && echo A || echo B) failed: ${cmds[$1]}" >&2
    tail -5 "$work/err" >&2
    exit 1
  fi
  awk '{ printf "%.3f %.3f %d\n", $1 + $2, $3, $4 }' "$work/t"
}

for ((i = 0; i < warmup; i++)); do
  run 0 >/dev/null
  run 1 >/dev/null
done

echo "A: ${cmds[0]}"
echo "B: ${cmds[1]}"
printf '%-5s %10s %10s %8s %10s %10s %8s %10s %10s\n' pair "A cpu s" "B cpu s" "B/A" "A wall s" "B wall s" "B/A" "A MiB" "B MiB"
: >"$work/rows"
for ((p = 1; p <= pairs; p++)); do
  if ((p % 2)); then
    a=$(run 0) b=$(run 1)
  else
    b=$(run 1) a=$(run 0)
  fi
  echo "$p $a $b" >>"$work/rows"
  awk -v p="$p" -v a="$a" -v b="$b" 'BEGIN {
    split(a, x, " "); split(b, y, " ")
    printf "%-5s %10.2f %10.2f %7.2fx %10.2f %10.2f %7.2fx %10.0f %10.0f\n", p, x[1], y[1], (x[1] > 0 ? y[1] / x[1] : 0), x[2], y[2], (x[2] > 0 ? y[2] / x[2] : 0), x[3] / 1024, y[3] / 1024
  }'
done
# Medians over the pairs, and the range of the pairs' CPU ratios.
awk '
  function median(v, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  { n++; ac[n] = $2; aw[n] = $3; ar[n] = $4; bc[n] = $5; bw[n] = $6; br[n] = $7
    r = $2 > 0 ? $5 / $2 : 0; lo = (n == 1 || r < lo) ? r : lo; hi = (n == 1 || r > hi) ? r : hi }
  END {
    mac = median(ac, n); mbc = median(bc, n); maw = median(aw, n); mbw = median(bw, n); mar = median(ar, n); mbr = median(br, n)
    printf "median: CPU %.2f against %.2f s, B/A %.2fx (pairs %.2f–%.2fx); wall %.2f against %.2f s, %.2fx; peak RSS %.0f against %.0f MiB\n",
      mac, mbc, (mac > 0 ? mbc / mac : 0), lo, hi, maw, mbw, (maw > 0 ? mbw / maw : 0), mar / 1024, mbr / 1024
  }' "$work/rows"
