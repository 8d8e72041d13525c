#!/bin/sh
# owner.sh DIR — a SAMBA data owner speaking the exec protocol (version 1)
# for node's tests (environment_test.go). Its behaviour is read from
# DIR/mode when it starts: "MODE AFTER", where it answers AFTER pulls well
# and then, by MODE:
#   ok       goes on answering well
#   garbage  prints a line that is not JSON
#   slow     sleeps 5 s before it answers (beyond request_timeout)
#   exits    exits, and exits again at every start (DIR/count-SESSION
#            counts its answers across restarts)
#   half     answers a reward of 0.5
# A good answer is a reward of 1 when step + index is a multiple of 3, 0
# otherwise; each is appended to DIR/log-SESSION as "STEP REWARD", so the
# test can add up what the programs handed out. Each fault is announced on
# stderr first, with a secret (a database password, a customer and a
# reward), and the garbage answer carries one too: the daemon quotes the
# program's last stderr line and the answer in its own organization's record
# and log, and must send neither to a peer.
dir=$1
read -r mode after <"$dir/mode" || exit 2
read -r hello || exit 0
idx=${hello#*\"index\":}
idx=${idx%%[,\}]*}
session=${hello#*\"session\":\"}
session=${session%%\"*}
echo '{"hello":"bandit-node/environment","version":1}'
count=$dir/count-$session
n=0
if [ "$mode" = exits ] && [ -f "$count" ]; then
  read -r n <"$count"
fi
while read -r line; do
  id=${line#*\"id\":}
  id=${id%%,*}
  step=${line#*\"step\":}
  step=${step%%,*}
  r=$(((step + idx) % 3 == 0 ? 1 : 0))
  if [ "$n" -ge "$after" ]; then
    case $mode in
    garbage)
      echo "owner.sh: printing garbage at step $step; connecting to postgres://bandit:hunter2@db.internal/ratings" >&2
      echo "this is not JSON: customer 4411 reward=0.83 hunter2"
      continue
      ;;
    slow)
      echo "owner.sh: too slow at step $step; connecting to postgres://bandit:hunter2@db.internal/ratings" >&2
      sleep 5
      ;;
    exits)
      echo "owner.sh: exiting at step $step after $n answers; connecting to postgres://bandit:hunter2@db.internal/ratings" >&2
      exit 3
      ;;
    half)
      echo "owner.sh: answering 0.5 at step $step; customer 4411 hunter2" >&2
      r=0.5
      ;;
    esac
  fi
  echo "{\"id\":$id,\"reward\":$r}"
  n=$((n + 1))
  echo "$step $r" >>"$dir/log-$session"
  if [ "$mode" = exits ]; then echo "$n" >"$count"; fi
done
