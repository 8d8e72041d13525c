#!/usr/bin/env bash
# release/manpage.sh BIN VERSION DATE: prints bandit-node(1) in roff, made
# from the binary's own help (`help`, and `-h` of every command and
# subcommand), so the man page says what the binary does. DATE is
# YYYY-MM-DD (the release commit's).
set -euo pipefail
bin=$1 version=$2 date=$3

# esc makes help text safe in a roff no-fill block.
esc() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'; }
# usage CMD...: the command's -h output (it exits 0 with help, or 2).
usage() { "$bin" "$@" -h 2>&1 || true; }

cat <<HEAD
.TH BANDIT-NODE 1 "$date" "bandit-node $version" "User Commands"
.SH NAME
bandit-node \- private federated multi-armed bandits among organizations
.SH SYNOPSIS
.B bandit-node
.I COMMAND
.RI [ flags ]
.RI [ args ]
.SH DESCRIPTION
Each organization runs one bandit-node daemon; the daemons form a private
libp2p network of known peers and run privacy-preserving multi-armed bandit
protocols (SAMBA, a secure contextual bandit, multi-agent best-arm
identification, P-FCB) while each organization's data stays on its own machine.
The same binary is the operator's command line: it reaches the local daemon
through its control API (loopback, bearer token).
.SH COMMANDS
.nf
HEAD
"$bin" help | sed -n '/^Commands:/,/^$/p' | sed '1d;$d' | esc
echo ".fi"
for cmd in $("$bin" help | sed -n '/^Commands:/,/^$/p' | sed '1d;$d' | awk '{print $1}'); do
  echo ".SS $cmd"
  echo ".nf"
  usage "$cmd" | esc
  echo ".fi"
  for sub in $(usage "$cmd" | sed -n '/^Subcommands:/,/^$/p' | sed '1d;$d' | awk '{print $1}'); do
    echo ".SS $cmd $sub"
    echo ".nf"
    usage "$cmd" "$sub" | esc
    echo ".fi"
  done
done
cat <<'TAIL'
.SH EXIT STATUS
0 success; 1 an error; 2 a usage mistake; 3 a session ended aborted;
4 a wait that \-\-timeout ended (the session goes on).
.SH FILES
.TP
.I /var/lib/bandit\-node/config.toml
the node's configuration (the packaged service's; `bandit\-node config` prints
an annotated example with every key)
.TP
.I /var/lib/bandit\-node/identity.key
the node's libp2p identity: its peer ID, which its partners list; back it up
.TP
.I /var/lib/bandit\-node/api.token
the control API's bearer token
.TP
.I /var/lib/bandit\-node/sessions/
the session records and results
.SH ENVIRONMENT
.TP
.B BANDIT_NODE_CONFIG
the config file a command reads when \-\-config is not given (else ./config.toml)
.SH SEE ALSO
.BR systemctl (1),
.BR systemd.exec (5),
.BR sysusers.d (5);
/usr/share/doc/bandit\-node/
TAIL
