#!/bin/sh
# bai_agent.sh LOG [--wrap] — a BAI agent whose rewards come from a CSV log,
# speaking bandit-node's exec protocol, version 1 (docs/environments.md).
#
# LOG holds one logged reward a row, "arm,reward" (arm from 0; a first row
# "arm,reward" is a header; lines starting with # are comments), in the
# order the rewards were observed: an A/B platform's export, say. "%i" in
# LOG is replaced by the agent's index (the hello's "index"), so that one
# command line serves every agent of an organization: logs/agent%i.csv.
#
# Each pull {"id":7,"kind":"pull","step":12,"arms":[0,3]} is answered with
# the next unused logged reward of each pulled arm, in the order of arms:
# {"id":7,"rewards":[1,0.25]}. The log is replayed in order, without
# replacement; when an arm's rewards run out the program answers an error
# ({"id":7,"error":"…"}: the session aborts with it), or with --wrap starts
# that arm's rewards over.
#
# POSIX sh only (dash, busybox sh, bash). Configure it as
#   [local.bai.agent]
#   source = "exec"
#   command = ["sh", "bai_agent.sh", "bai_log.csv", "--wrap"]
set -u
log=${1:?usage: bai_agent.sh LOG [--wrap]}
wrap=0
[ "${2:-}" = --wrap ] && wrap=1

read -r hello || exit 0
case $hello in
*'"hello":"bandit-node/environment"'*'"version":1'*) ;;
*)
  echo "bai_agent.sh: not the hello of version 1: $hello" >&2
  echo '{"error":"bai_agent.sh speaks version 1 of bandit-node/environment"}'
  exit 1
  ;;
esac
index=${hello#*\"index\":}
index=${index%%[,\}]*}
case $log in *%i*) log="${log%%%i*}$index${log#*%i}" ;; esac

# Load the log: r_A_N is arm A's N-th reward (from 0), c_A how many it has.
if ! [ -r "$log" ]; then
  echo "bai_agent.sh: cannot read the log $log" >&2
  echo "{\"error\":\"cannot read the log $log\"}"
  exit 1
fi
line=0
while IFS=, read -r arm reward rest; do
  line=$((line + 1))
  case $arm in '#'* | '' | arm) continue ;; esac
  case $arm in *[!0-9]*)
    echo "bai_agent.sh: $log:$line: arm \"$arm\" is not a number" >&2
    echo "{\"error\":\"$log:$line: arm is not a number\"}"
    exit 1
    ;;
  esac
  eval "n=\${c_$arm:-0}"
  eval "r_${arm}_$n=\$reward"
  eval "c_$arm=$((n + 1))"
done <"$log"
echo "bai_agent.sh: agent $index answers from $log ($line lines)" >&2
echo '{"hello":"bandit-node/environment","version":1}'

while read -r req; do
  id=${req#*\"id\":}
  id=${id%%,*}
  case $req in *'"kind":"pull"'*) ;; *)
    echo "{\"id\":$id,\"error\":\"a BAI agent answers pulls only\"}"
    continue
    ;;
  esac
  arms=${req#*\"arms\":[}
  arms=${arms%%]*}
  out="" err=""
  oldifs=$IFS
  IFS=,
  for a in $arms; do
    case $a in '' | *[!0-9]*)
      err="arm $a is not a number"
      break
      ;;
    esac
    eval "n=\${c_$a:-0} u=\${u_$a:-0}"
    if [ "$u" -ge "$n" ]; then
      if [ "$wrap" = 1 ] && [ "$n" -gt 0 ]; then
        u=0
      else
        err="the log $log has no more rewards of arm $a (it held $n)"
        break
      fi
    fi
    eval "r=\$r_${a}_$u"
    eval "u_$a=$((u + 1))"
    out="$out${out:+,}$r"
  done
  IFS=$oldifs
  if [ -n "$err" ]; then
    echo "bai_agent.sh: $err" >&2
    echo "{\"id\":$id,\"error\":\"$err\"}"
  else
    echo "{\"id\":$id,\"rewards\":[$out]}"
  fi
done
