#!/usr/bin/env bash
# pfcb-locals.sh OUTDIR N M — write OUTDIR/nodeI.toml for I = 1…N, each a
# [local.pfcb.agent] table for M producers: qualities common to all (the
# simulated environment), costs ~ U[0, 1] and capacities ~ U{1…50} of that
# agent alone, as in the paper's uniform setup; deterministic.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 OUTDIR N M" >&2; exit 2; }
out=$1 n=$2 m=$3
mkdir -p "$out"
qualities=$(awk -v m="$m" 'BEGIN { srand(42); for (i = 0; i < m; i++) printf "%s%.3f", (i ? ", " : ""), rand() }')
for i in $(seq 1 "$n"); do
  awk -v m="$m" -v seed=$((100 + i)) -v q="$qualities" 'BEGIN {
    srand(seed)
    printf "[local.pfcb.agent]\nqualities = [%s]\n", q
    printf "costs = ["; for (j = 0; j < m; j++) printf "%s%.3f", (j ? ", " : ""), rand(); printf "]\n"
    printf "capacities = ["; for (j = 0; j < m; j++) printf "%s%d", (j ? ", " : ""), 1 + int(50 * rand()); printf "]\n"
    printf "rate = 5000\n"
  }' >>"$out/node$i.toml"
done
