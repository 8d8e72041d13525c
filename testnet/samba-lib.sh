# samba-lib.sh — sourced by samba.sh and samba-bench.sh: a SAMBA testnet's
# local data and session specs. Node 1 is the data customer, node 2 the
# controller, node 3 comp, nodes 4 … K+3 the data owners.

# samba_locals DIR K: DIR/locals/nodeI.toml giving data owner i the i-th
# largest MovieLens mean (shared/data/samba, as protocol/samba/testdata).
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

# samba_spec FILE K BUDGET ALGORITHM: a session spec over those nodes.
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
}
