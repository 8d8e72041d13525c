package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestDiffConfig compares a base config with edited versions: what a reload
// changes live, and what it refuses, naming the key.
func TestDiffConfig(t *testing.T) {
	const (
		id2 = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
		id3 = "12D3KooWJWoaqZhDaoEFshF7Rh1bpY9ohihFhzcW6d69Lr2NASuq"
		id4 = "12D3KooWSkKtEc7khF1hfoJJTtJPSaEBDJyhmB9uAx2eKQuxbDBB"
	)
	peer := func(name, id, addr string) string {
		return "[[peers]]\nname = \"" + name + "\"\npeer_id = \"" + id + "\"\naddrs = [\"" + addr + "\"]\n"
	}
	head := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	policy := "[policy.ping]\nroles = [\"*\"]\ninitiators = [\"*\"]\n"
	local := "[local.samba.data_owner]\nbernoulli = 0.5\n"
	b2, b3 := peer("b", id2, "/ip4/127.0.0.1/tcp/4002"), peer("c", id3, "/ip4/127.0.0.1/tcp/4003")
	base := head + policy + local + b2 + b3

	tests := []struct {
		name    string
		next    string
		want    string // ConfigChange.String()
		restart []string
	}{
		{"same", base, "nothing changed", nil},
		{"comments and order only", "# a comment\n" + head + local + policy + b2 + b3, "nothing changed", nil},
		{"peer added", base + peer("d", id4, "/ip4/127.0.0.1/tcp/4004"), "peers added: d", nil},
		{"peer removed", head + policy + local + b2, "peers removed: c", nil},
		{"peer renamed", head + policy + local + b2 + peer("c2", id3, "/ip4/127.0.0.1/tcp/4003"), "peers added: c2; peers removed: c", nil},
		{"peer with a new identity", head + policy + local + b2 + peer("c", id4, "/ip4/127.0.0.1/tcp/4003"), "peers added: c; peers removed: c", nil},
		{"peer readdressed", head + policy + local + b2 + peer("c", id3, "/ip4/127.0.0.1/tcp/5003"), "peers with new addresses: c", nil},
		{"policy changed", head + "[policy.ping]\nroles = [\"*\"]\ninitiators = [\"b\"]\n" + local + b2 + b3, "policy changed: policy.ping", nil},
		{"policy added", base + "[policy.samba]\nroles = [\"data_owner\"]\ninitiators = [\"*\"]\n", "policy changed: policy.samba", nil},
		{"policy removed", head + local + b2 + b3, "policy changed: policy.ping", nil},
		{"local data changed", head + policy + "[local.samba.data_owner]\nbernoulli = 0.6\n" + b2 + b3, "local data changed: local.samba.data_owner", nil},
		{"local data removed", head + policy + b2 + b3, "local data changed: local.samba.data_owner", nil},
		{"session timeout", base + "[session]\npeer_timeout = \"45s\"\n", "settings changed: session.peer_timeout", nil},
		{"listen", strings.Replace(base, "tcp/4001", "tcp/4009", 1), "", []string{"node.listen"}},
		{"name", strings.Replace(base, "name = \"a\"", "name = \"z\"", 1), "", []string{"node.name"}},
		{"several", strings.Replace(base, "tcp/4001", "tcp/4009", 1) + "[api]\nlisten = \"127.0.0.1:5609\"\n[runtime]\nschedtrace = false\n[log]\nlevel = \"debug\"\n",
			"", []string{"node.listen", "api.listen", "log.level", "runtime.schedtrace"}},
		{"mdns", base + "[discovery]\nmdns = true\n", "", []string{"discovery.mdns"}},
		{"data dir", strings.Replace(base, "name = \"a\"", "name = \"a\"\ndata_dir = \"elsewhere\"", 1), "", []string{"node.data_dir", "node.identity", "api.token_file"}},
		{"frame size", base + "[session]\nmax_frame_size = 2048\n", "", []string{"session.max_frame_size"}},
	}
	dir := t.TempDir()
	parse := func(t *testing.T, text string) *Config {
		t.Helper()
		cfg, err := ParseConfig(filepath.Join(dir, "config.toml"), []byte(text), testRegistry(t))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	old := parse(t, base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := DiffConfig(old, parse(t, tc.next))
			if tc.restart != nil {
				var re *RestartError
				if !errors.As(err, &re) || !slices.Equal(re.Keys, tc.restart) {
					t.Fatalf("DiffConfig: %v, want a restart of %v", err, tc.restart)
				}
				if want := tc.restart[0] + ", "; len(tc.restart) > 1 && !strings.Contains(err.Error(), want) ||
					!strings.Contains(err.Error(), "changed: restart the daemon to apply it") {
					t.Errorf("the error %q does not name the keys and say to restart", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ch.String(); got != tc.want {
				t.Errorf("change = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestEveryConfigKeyIsClassified: each key of Config is either read only at
// start (restartKeys: a reload refuses its change), taken live by new
// sessions (liveKeys) or in a table a reload applies live (liveTables).
// A key added to Config without deciding which fails here, since a reload
// would otherwise take its change silently and do nothing with it.
func TestEveryConfigKeyIsClassified(t *testing.T) {
	known := map[string]bool{}
	for _, k := range restartKeys {
		known[k.key] = true
	}
	for _, k := range liveKeys {
		known[k.key] = true
	}
	for _, k := range liveTables {
		known[k] = true
	}
	ct := reflect.TypeFor[Config]()
	for i := range ct.NumField() {
		f := ct.Field(i)
		table := strings.Split(f.Tag.Get("toml"), ",")[0]
		if table == "" || table == "-" || known[table] {
			continue
		}
		if f.Type.Kind() != reflect.Struct {
			t.Errorf("config key %s: not classified for reloads (restartKeys, liveKeys or liveTables in config_diff.go)", table)
			continue
		}
		for j := range f.Type.NumField() {
			key := table + "." + strings.Split(f.Type.Field(j).Tag.Get("toml"), ",")[0]
			if !known[key] {
				t.Errorf("config key %s: not classified for reloads (restartKeys, liveKeys or liveTables in config_diff.go)", key)
			}
		}
	}
}
