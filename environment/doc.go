// Package environment implements protocol.Environment for the sources of
// a role's outcomes that no family owns: the organization's own program
// (Exec), its own service (HTTP) and a replayed CSV file (Replay). The
// daemon builds one per role that touches the world, from the role's
// [local.<protocol>.<role>] table (DecodeConfig, Config.New), checks it at
// admission (Config.Check), and answers the role's queries with it; roles
// never call it. source = "simulated", the default, is the family's own
// and not built here (ErrSimulated).
//
// # The exec protocol, version 1
//
// The program is started once per role and session, without a shell, and
// lives as long as the session. It reads requests on its stdin and writes
// answers on its stdout, one JSON object per line (UTF-8, ending in "\n";
// no line of the program may exceed 1 MiB). Its stderr is free text for
// the operator: the daemon keeps its last 4 KiB and quotes its last lines
// in errors, and forwards nothing else.
//
// Hello. The daemon writes first:
//
//	{"hello":"bandit-node/environment","version":1,"session":"<id>","protocol":"samba","role":"data_owner","index":3}
//
// and the program answers, within start_timeout (10 s by default):
//
//	{"hello":"bandit-node/environment","version":1}
//
// Anything else — another version, another line, nothing — fails the
// session with an error that quotes what the program printed. A program
// that cannot serve may answer {"error":"text"} instead.
//
// Requests. Then, for each query of the role, one request, answered
// before the next is written, within request_timeout (5 s by default):
//
//	{"id":7,"kind":"pull","step":12,"arm":4,"arms":[4]}               → {"id":7,"reward":0.73}
//	{"id":8,"kind":"pull","step":3,"arms":[0,2,5]}                     → {"id":8,"rewards":[0.1,0.9,0.4]}
//	{"id":9,"kind":"context","step":5}                                 → {"id":9,"x":[0.12,-0.5,0.33]}
//	{"id":10,"kind":"rewards","step":5}                                → {"id":10,"rewards":[0,1,0,0]}
//	{"id":11,"kind":"procure","step":2,"producers":[0,3],"quantities":[10,5]} → {"id":11,"qualities":[0.8,0.6]}
//
// id numbers the role's queries from 1 and the answer carries it back;
// step is the role's step, from 0. A pull of one arm carries both arm and
// arms, and its answer may give reward or rewards (one number per pulled
// arm, in the order of arms). rewards answers a rewards query with one
// number per arm, arm 0 first; qualities give one number per producer, in
// the order of producers.
//
// An answer holds id and exactly the field its kind asks for; numbers are
// finite JSON numbers. An unknown field, a missing or repeated one, a
// field of another kind, a wrong count, an id that is not the request's,
// a line that is not one JSON object: each is an error that aborts the
// session, quoting the answer. So is {"id":7,"error":"text"}, the
// program's own way to abort the session with its text. Whether a reward
// lies in its declared range, or an x has its declared dimension and
// norm, the family checks.
//
// Faults. A program that exits or closes its pipes is restarted, with
// backoff (100 ms, doubling up to 5 s), greets again and is asked the
// same request once more; more than max_restarts (3) restarts within
// restart_window (1 min) fail the session. A program that does not answer
// in time, or answers badly, is stopped and the session fails. Every error
// names the role (its label, "samba data_owner[3] of acme"), the query's
// kind and step, what went wrong, and ends with the last lines of the
// program's stderr. Closing the environment closes the program's stdin
// and sends SIGTERM to its process group, SIGKILL after stop_grace (2 s).
//
// # The http protocol, version 1
//
// Each request above (without the newline) is POSTed, with Content-Type
// application/json, to the configured URL (https, or http to a loopback
// address), with headers Bandit-Environment-Version: 1, Bandit-Session
// and Bandit-Role ("samba data_owner 3"); the answer, as above, is the
// body of a 2xx response of at most 1 MiB. There is no hello. A request
// that fails, times out, or gets another status or a bad body fails the
// session; nothing is retried. Redirects are not followed.
//
// # Replay files
//
// A replay file is CSV: lines starting with # are comments; a first row
// without any number in it is a header (names are free, e.g. arm0,arm1);
// every other row holds finite numbers and is as wide as the first. A
// row answers a pull with its columns of the pulled arms (column a is arm
// a; a file of one column holds one arm's rewards, the role's own, and
// answers a pull of any one arm), a procurement with those of the producers, a context (x) or a
// rewards query with the whole row. With order = "sequential" (the
// default, without replacement) row t (from 0, after the header) answers
// step t's queries, and a step beyond the last row is an error ("replay
// file X has N rows; step S asked for more"); CheckReplay refuses a file
// too short for the session at admission. With order = "sample" each
// query gets a row drawn uniformly with replacement from the randomness
// the daemon injects (a seeded stream in simulations).
//
// # Configuration
//
//	[local.samba.data_owner]
//	source = "exec"                      # or "http", "replay", "simulated" (the default)
//	command = ["python3", "owner.py"]    # exec: program and arguments, no shell
//	dir = "owners"                       # exec: working directory, from the config's directory
//	env = { DB = "ratings.db" }          # exec: added to the daemon's environment
//	start_timeout = "10s"                # exec
//	request_timeout = "5s"               # exec and http
//	max_restarts = 3                     # exec, within restart_window = "1m"
//	# url = "http://127.0.0.1:8080/answer"   http
//	# file = "ratings.csv"                   replay
//	# order = "sequential"                   replay: or "sample"
//
// Other keys of the table belong to the family; DecodeConfig returns them.
package environment
