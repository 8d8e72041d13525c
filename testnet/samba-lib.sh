# samba-lib.sh — sourced by samba.sh, samba-bench.sh and samba-ab.sh: a
# SAMBA testnet's local data and session specs (node 1 is the data
# customer, node 2 the controller, node 3 comp, nodes 4 … K+3 the data
# owners), and the statistics the benches print.

# samba_locals DIR K: DIR/locals/nodeI.toml giving data owner i the i-th
# largest MovieLens mean (the SAMBA prototype's, as protocol/samba/testdata).
samba_locals() {
  local dir=$1 k=$2 i mu
  local means
  means="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/../protocol/samba/testdata/movielens_K100_sorted_desc.csv"
  rm -rf "$dir/locals"
  mkdir -p "$dir/locals"
  for i in $(seq 1 "$k"); do
    mu=$(awk -F, -v r="$i" 'NR == r + 1 { print $2 }' "$means")
    printf '[local.samba.data_owner]\nbernoulli = %s\n' "$mu" >"$dir/locals/node$((i + 3)).toml"
  done
}

# samba_spec FILE K BUDGET ALGORITHM [BATCH]: a session spec over those
# nodes (params.batch = BATCH when given and not 1).
samba_spec() {
  local owners
  owners=$(seq -f '"node%g"' 4 $(($2 + 3)) | paste -sd, -)
  cat >"$1" <<SPEC
protocol = "samba"
[roles]
data_customer = "node1"
controller = "node2"
comp = "node3"
data_owner = [$owners]
[params]
algorithm = "$4"
budget = $3
SPEC
  if [ "${5:-1}" != 1 ]; then
    echo "batch = $5" >>"$1"
  fi
}

# sorted COLUMN LINES...: a column of the lines, sorted numerically.
sorted() {
  local c=$1
  shift
  printf '%s\n' "$@" | awk -v c="$c" '{ print $c }' | sort -g
}

# median COLUMN LINES...: the median of a column of the lines.
median() {
  sorted "$@" | awk '
    { v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# interval COLUMN LINES...: a distribution-free confidence interval for the
# median of a column, from its order statistics: the widest-apart pair
# (k, n + 1 - k) whose coverage, 1 - 2 P(Binomial(n, 1/2) < k), is still at
# least 90 %, printed with that coverage. On a machine whose speed swings
# from minute to minute, it says how far the median can be trusted.
interval() {
  sorted "$@" | awk '
    { v[NR] = $1 }
    END {
      n = NR; k = 0; cov = 0; cdf = 0; p = 0.5 ^ n # p = P(B = j), cdf = P(B < j)
      for (j = 1; j <= n / 2; j++) {
        cdf += p; p *= (n - j + 1) / j
        if (1 - 2 * cdf < 0.9) break
        k = j; cov = 1 - 2 * cdf
      }
      if (k == 0) print "fewer than 5 repetitions: no interval"
      else printf "%.2f–%.2f (%.0f %%: order statistics %d and %d of %d)\n", v[1 + (k - 1)], v[n - k + 1], cov * 100, k, n - k + 1, n
    }'
}
