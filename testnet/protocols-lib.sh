# protocols-lib.sh — sourced by mpccb.sh, bai.sh, pfcb.sh and wan.sh: the
# session specs and local data of the private contextual bandit (mpccb), BAI
# and P-FCB testnets, so that every script runs the same sessions.

# mpccb_locals DIR DATA P [FIRST]: DIR/nodeI.toml for the P feature parties
# (nodes FIRST … FIRST+P−1, default 1; party i reads DATA/party(i).csv) and
# the reward receiver (node FIRST+P+1, DATA/rewards.csv); files that exist
# are appended to. DATA comes from `bandit-node data mpccb`.
mpccb_locals() {
  local dir=$1 data=$2 p=$3 first=${4:-1} i
  mkdir -p "$dir"
  for i in $(seq 0 $((p - 1))); do
    printf '[local.mpccb.feature_party]\nfeatures = "%s"\n' "$data/party$i.csv" >>"$dir/node$((first + i)).toml"
  done
  printf '[local.mpccb.reward_receiver]\nrewards = "%s"\n' "$data/rewards.csv" >>"$dir/node$((first + p + 1)).toml"
}

# mpccb_spec FILE P STEPS ARMS [FIRST]: the session over those nodes; the
# arm puller is node FIRST+P, the reward receiver FIRST+P+1, the dealer
# FIRST+P+2.
mpccb_spec() {
  local file=$1 p=$2 steps=$3 arms=$4 first=${5:-1} features
  features=$(seq -f '"node%g"' "$first" $((first + p - 1)) | paste -sd, -)
  cat >"$file" <<SPEC
protocol = "mpccb"
[roles]
feature_party = [$features]
arm_puller = "node$((first + p))"
reward_receiver = "node$((first + p + 1))"
dealer = "node$((first + p + 2))"
[params]
steps = $steps
arms = $arms
epsilon = 0.1
SPEC
}

# bai_spec FILE ALGORITHM COORDINATOR FIRST LAST: a BAI session with the
# coordinator node COORDINATOR and agents node FIRST … node LAST, each with
# testnet/problem1-agent.toml in its config. M must stay well below the
# number of agents: DP-MASE δ = 0.05, β = 0.5 gives M = 5; Corrupted
# Elimination η = 0.9, ξ = 0.15 gives η_ξ = 0.568, M = 6. (With ξ = 0.1,
# M = 11 of 16 agents, every agent can stop before an arm gathers 12
# uncorrupted votes, and the session then ends without an answer: "every
# agent stopped before the global set held one arm".)
bai_spec() {
  local names
  names=$(seq -f '"node%g"' "$4" "$5" | paste -sd, -)
  cat >"$1" <<SPEC
protocol = "bai"
[roles]
coordinator = "node$3"
agent = [$names]
[params]
algorithm = "$2"
arms = 10
delta = 0.05
beta = 0.5
epsilon = 0.1
eta = 0.9
xi = 0.15
SPEC
}

# pfcb_spec FILE N ROUNDS: a P-FCB session of agents node1 … nodeN (each
# with a [local.pfcb.agent] of testnet/pfcb-locals.sh).
pfcb_spec() {
  local names
  names=$(seq -f '"node%g"' 1 "$2" | paste -sd, -)
  cat >"$1" <<SPEC
protocol = "pfcb"
[roles]
agent = [$names]
[params]
algorithm = "pfcb"
rounds = $3
SPEC
}
