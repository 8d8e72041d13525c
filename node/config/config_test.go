package config

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

func TestConfigExampleLoads(t *testing.T) {
	path := filepath.Join("..", "..", "config.example.toml")
	cfg, err := LoadConfig(path, testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node.Name != "acme" || len(cfg.Peers) != 2 || cfg.Policy["ping"].Max["count"] != 100000 {
		t.Fatalf("example config decoded wrongly: %+v", cfg)
	}
	if !filepath.IsAbs(cfg.Node.Identity) || !filepath.IsAbs(cfg.API.TokenFile) {
		t.Errorf("paths not made absolute: %q %q", cfg.Node.Identity, cfg.API.TokenFile)
	}
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	const peerID = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	tests := []struct {
		name, text, want string
	}{
		{"unknown top key", "colour = 1\n" + base, "unknown key colour"},
		{"unknown key in a table", base + "colour = 1\n", "unknown key node.colour"},
		{"unknown nested key", base + "[session]\npeer_timout = \"3s\"\n", "unknown key session.peer_timout"},
		{"bad duration", base + "[session]\npeer_timeout = \"soon\"\n", "not a duration"},
		{"heartbeat too slow", base + "[session]\npeer_timeout = \"4s\"\nheartbeat_interval = \"3s\"\n", "session.heartbeat_interval"},
		{"remote api", base + "[api]\nlisten = \"0.0.0.0:5601\"\n", "api.listen"},
		{"remote api without TLS", base + "[api]\nlisten = \"0.0.0.0:5601\"\nallow_remote = true\n",
			"api.listen: \"0.0.0.0:5601\" is not a loopback address, and a remote control API must use TLS (its bearer token would cross the network in the clear): set api.cert_file and api.key_file"},
		{"api cert without key", base + "[api]\ncert_file = \"api.crt\"\n", "api.cert_file and api.key_file: give both"},
		{"api ca without TLS", base + "[api]\nca_file = \"ca.crt\"\n", "api.ca_file"},
		{"bad listen", "[node]\nname = \"a\"\nlisten = [\"/ip4/1.2.3.4/tcpp/1\"]\n", "node.listen[0]"},
		{"bad peer id", base + "[[peers]]\nname = \"b\"\npeer_id = \"nope\"\n", "peers[0] (b).peer_id"},
		{"duplicate peer", base + "[[peers]]\nname = \"b\"\npeer_id = \"" + peerID + "\"\n[[peers]]\nname = \"c\"\npeer_id = \"" + peerID + "\"\n", "listed twice"},
		{"peer named like self", base + "[[peers]]\nname = \"a\"\npeer_id = \"" + peerID + "\"\n", "used twice"},
		{"unknown policy protocol", base + "[policy.pong]\nroles = [\"*\"]\n", "policy.pong"},
		{"unknown policy role", base + "[policy.ping]\nroles = [\"observer\"]\n", "policy.ping.roles"},
		{"unknown initiator", base + "[policy.ping]\ninitiators = [\"zed\"]\n", "policy.ping.initiators"},
		{"local for unknown role", base + "[local.ping.observer]\nx = 1\n", "local.ping.observer"},
		{"local ping data", base + "[local.ping.participant]\nx = 1\n", "local.ping.participant"},
		{"local value of the wrong kind", base + "[local.samba.data_owner]\nbernoulli = \"0.5\"\n", "local.samba.data_owner.bernoulli: want a number, got text \"0.5\""},
		{"unknown local key", base + "[local.samba.data_owner]\nbernoulli = 0.5\nbogus = 1\n", "unknown key local.samba.data_owner.bogus"},
		{"local data for a role without", base + "[local.samba.comp]\nx = 1\n", "local.samba.comp: role comp of samba needs no local data; remove x"},
		{"local role not a table", base + "[local.ping]\nparticipant = \"yes\"\n", "local.ping.participant: want a table ([local.ping.participant]), got text"},
		{"local role an array of tables", base + "[[local.samba.data_owner]]\nbernoulli = 0.5\n", "local.samba.data_owner: want a table ([local.samba.data_owner]), got an array of tables"},
		{"local role a date", base + "[local.samba]\ncomp = 1979-05-27\n", "local.samba.comp: want a table ([local.samba.comp]), got a date or time"},
		{"local family not a table", base + "[local]\nsamba = 5\n", "local.samba: want a table of roles ([local.samba.ROLE]), got 5"},
		{"local data out of range", base + "[local.samba.data_owner]\nbernoulli = 1.5\n", "local.samba.data_owner.bernoulli: 1.5 is not a mean in [0, 1]"},
		{"bad log level", base + "[log]\nlevel = \"loud\"\n", "log.level"},
		{"session buffer under a frame", base + "[session]\nmax_frame_size = 65536\nmax_buffered_bytes = 65536\n", "session.max_buffered_bytes: 65536 is out of range [session.max_frame_size + 64 = 65600"},
		{"peer buffer under a session's", base + "[session]\nmax_buffered_bytes = 8388608\nmax_peer_buffered_bytes = 8388607\n", "session.max_peer_buffered_bytes: 8388607 is out of range [session.max_buffered_bytes = 8388608"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("/etc/bandit/config.toml", []byte(tt.text), testRegistry(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "config.toml") {
				t.Fatalf("err = %v, want one naming the file and %q", err, tt.want)
			}
		})
	}
}

// TestLocalErrorsNameTheirKey holds every family to DecodeLocal's
// convention, which the daemon relies on to show the error as it is: a
// missing table, or one with a key it has no place for, is an error naming
// the table's key.
func TestLocalErrorsNameTheirKey(t *testing.T) {
	reg := testRegistry(t)
	for _, name := range reg.Names() {
		f, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Info().Roles {
			key := protocol.LocalKey(name, r.Name)
			if _, err := f.DecodeLocal(r.Name, nil); err != nil && !strings.HasPrefix(err.Error(), key+": ") {
				t.Errorf("%s without its table: %v, want an error beginning with %s", key, err, key)
			}
			table := &protocol.LocalTable{Key: key, Raw: map[string]any{"zzz": 1}}
			if _, err := f.DecodeLocal(r.Name, table); err == nil || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "zzz") {
				t.Errorf("%s with a stray key zzz: %v, want an error naming both", key, err)
			}
		}
	}
}

func TestAdmit(t *testing.T) {
	cfg, err := ParseConfig("c.toml", []byte(`
[node]
name = "a"
listen = ["/ip4/127.0.0.1/tcp/4001"]
[[peers]]
name = "b"
peer_id = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
[[peers]]
name = "c"
peer_id = "12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq"
[policy.ping]
roles = ["participant"]
initiators = ["b"]
[policy.ping.max]
count = 50
[policy.ping.min]
count = 5
`), testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	f := ping.Family{}
	tests := []struct {
		name      string
		count     int
		initiator string
		self      bool
		want      string
	}{
		{"accepted", 10, "b", false, ""},
		{"self may always initiate", 10, "a", true, ""},
		{"initiator not allowed", 10, "c", false, "policy.ping.initiators"},
		{"over the limit", 51, "b", false, "params.count = 51 exceeds a's limit of 50"},
		{"at the limits", 50, "b", false, ""},
		{"at the minimum", 5, "b", false, ""},
		{"under the minimum", 4, "b", false, "params.count = 4 is under a's minimum of 5 (policy.ping.min.count)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cfg.Admit(f, ping.Params{Count: tt.count}, tt.initiator, tt.self, []string{"participant"})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	cfg.Policy = nil
	if _, err := cfg.Admit(f, ping.Params{Count: 1}, "b", false, []string{"participant"}); err == nil || !strings.Contains(err.Error(), "not enabled") {
		t.Fatalf("err = %v, want protocol not enabled", err)
	}
}

// TestLocalPathsFromTheConfigDir: a relative file path in a [local] table is
// taken from the config file's directory, whatever the daemon's working
// directory (a service manager's is /): here the test's, which is not the
// config's.
func TestLocalPathsFromTheConfigDir(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	rewards := filepath.Join(elsewhere, "rewards.csv")
	for name, text := range map[string]string{
		filepath.Join(dir, "item.csv"):           "user,rating\n1,5\n2,3\n",
		filepath.Join(dir, "data", "party0.csv"): "0.5,0.25\n",
		rewards:                                  "1,0\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	text := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n" +
		"[local.samba.data_owner]\nratings = \"item.csv\"\n" +
		"[local.mpccb.feature_party]\nfeatures = \"data/party0.csv\"\n" +
		"[local.mpccb.reward_receiver]\nrewards = \"" + rewards + "\"\n"
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(path, testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := cfg.LocalData["samba"]["data_owner"].(samba.RatingsFile); !ok || r.Path != filepath.Join(dir, "item.csv") {
		t.Errorf("samba data owner: %#v, want the ratings file %s", cfg.LocalData["samba"]["data_owner"], filepath.Join(dir, "item.csv"))
	}
	if err := cfg.CheckLocalData(); err != nil {
		t.Errorf("the data files are all there: %v", err)
	}
	for _, c := range []struct{ role, want string }{
		{"feature_party", filepath.Join(dir, "data", "party0.csv")},
		{"reward_receiver", rewards},
	} {
		got, _ := json.Marshal(cfg.LocalData["mpccb"][c.role])
		if !bytes.Contains(got, []byte(`"`+c.want+`"`)) {
			t.Errorf("mpccb %s: %s, want the path %s", c.role, got, c.want)
		}
	}
}

// TestPolicyLimitsAreChecked: a limit on a parameter the family does not
// have, a NaN limit and a minimum above the maximum are config errors that
// say which.
func TestPolicyLimitsAreChecked(t *testing.T) {
	for _, tt := range []struct{ limits, want string }{
		{"[policy.ping.max]\nzzz = 1", "policy.ping.max.zzz: ping has no numeric parameter or figure zzz"},
		{"[policy.ping.min]\nzzz = 1", "policy.ping.min.zzz: ping has no numeric parameter or figure zzz"},
		{"[policy.ping.min]\ncount = nan", "policy.ping.min.count: NaN is not a limit"},
		{"[policy.ping.max]\ncount = 5\n[policy.ping.min]\ncount = 6", "policy.ping: min.count = 6 is above max.count = 5"},
	} {
		_, err := ParseConfig("c.toml", []byte(`
[node]
name = "a"
listen = ["/ip4/127.0.0.1/tcp/4001"]
[policy.ping]
roles = ["participant"]
initiators = ["*"]
`+tt.limits+"\n"), testRegistry(t))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.limits, err, tt.want)
		}
	}
}

// TestLocalEnvironments: a role's [local] table names its environment with
// source; the environment's keys are taken out before the family decodes
// the rest, and a wrong combination is refused naming the key.
func TestLocalEnvironments(t *testing.T) {
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	for _, tc := range []struct {
		name    string
		local   string
		source  string // want, when no error
		wantErr string // substring, "" for none
	}{
		{"simulated by default", "[local.samba.data_owner]\nbernoulli = 0.5\n", "", ""},
		{"exec", "[local.samba.data_owner]\nsource = \"exec\"\ncommand = [\"/bin/cat\"]\nrequest_timeout = \"2s\"\n", "exec", ""},
		{"replay", "[local.samba.data_owner]\nsource = \"replay\"\nfile = \"r.csv\"\n", "replay", ""},
		{"simulated keys with exec", "[local.samba.data_owner]\nsource = \"exec\"\ncommand = [\"/bin/cat\"]\nbernoulli = 0.5\n", "", "bernoulli"},
		{"exec without a command", "[local.samba.data_owner]\nsource = \"exec\"\n", "", "local.samba.data_owner"},
		{"unknown source", "[local.samba.data_owner]\nsource = \"ftp\"\n", "", "local.samba.data_owner.source"},
		{"bad duration", "[local.samba.data_owner]\nsource = \"exec\"\ncommand = [\"/bin/cat\"]\nrequest_timeout = \"soon\"\n", "", "local.samba.data_owner.request_timeout"},
		{"a family without environments", "[local.ping.participant]\nsource = \"exec\"\ncommand = [\"/bin/cat\"]\n", "", "local.ping.participant.source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig(filepath.Join(t.TempDir(), "config.toml"), []byte(base+tc.local), testRegistry(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			env := cfg.Environments["samba"]["data_owner"]
			if string(env.Source) != tc.source && !(tc.source == "" && env.Simulated()) {
				t.Errorf("source %q, want %q", env.Source, tc.source)
			}
		})
	}
}

// TestEnvironmentMissingAtStart: a daemon whose replay file or exec program
// is missing does not start, and says which key names it.
func TestEnvironmentMissingAtStart(t *testing.T) {
	for _, local := range []string{
		"[local.samba.data_owner]\nsource = \"replay\"\nfile = \"missing.csv\"\n",
		"[local.samba.data_owner]\nsource = \"exec\"\ncommand = [\"./no-such-program\"]\n",
	} {
		cfg, err := ParseConfig(filepath.Join(t.TempDir(), "config.toml"), []byte("[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"+local), testRegistry(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := cfg.CheckLocalData(); err == nil || !strings.Contains(err.Error(), "local.samba.data_owner") {
			t.Errorf("%q: CheckLocalData = %v, want an error naming local.samba.data_owner", local, err)
		}
	}
}

// TestLocalEnvironmentInlineTable: an inline table in a [local] table (an
// exec program's env) is the environment's key, not an unknown one.
func TestLocalEnvironmentInlineTable(t *testing.T) {
	local := "[local.samba.data_owner]\nsource = \"exec\"\ncommand = [\"/bin/cat\"]\nenv = { DB_USER = \"bandit\" }\n"
	cfg, err := ParseConfig(filepath.Join(t.TempDir(), "config.toml"), []byte("[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"+local), testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Environments["samba"]["data_owner"].Exec.Env; len(got) != 1 {
		t.Errorf("env = %v, want DB_USER's", got)
	}
}
