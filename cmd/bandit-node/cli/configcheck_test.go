package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheck: config check validates a config with the daemon's own
// code and, against the running daemon, says what a reload would change or
// why it would refuse it, changing nothing; it checks a session spec as
// session start does.
func TestConfigCheck(t *testing.T) {
	root := t.TempDir()
	nodes := initPair(t, root)
	cfg := nodes[0].cfg
	startDaemon(t, cfg)
	waitServing(t, cfg)
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	candidate := func(name, text string) string {
		p := filepath.Join(filepath.Dir(cfg), name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const globex = "\n[[peers]]\nname = \"globex\"\npeer_id = \"12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx\"\naddrs = [\"/ip4/127.0.0.1/tcp/9\"]\n"
	for _, tc := range []struct {
		name string
		args []string
		want string // in stdout, or in the error when bad
		bad  bool
	}{
		{"the file in force", []string{"config", "check", "--config", cfg}, "a reload would change nothing", false},
		{"a peer added", []string{"config", "check", "--config", cfg, candidate("added.toml", string(orig)+globex)}, "a reload would apply: peers added: globex", false},
		{"a key that needs a restart", []string{"config", "check", "--config", cfg,
			candidate("listen.toml", strings.Replace(string(orig), fmt.Sprintf("tcp/%d", nodes[0].port), fmt.Sprintf("tcp/%d", nodes[0].port+1), 1))},
			"would refuse it at a reload", true},
		{"an unknown key", []string{"config", "check", candidate("typo.toml", string(orig)+"\n[sesion]\nmax_active = 2\n")}, "sesion", true},
		{"a spec", []string{"config", "check", writeSpec(t, root, "ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncount = 5\n")},
			"a valid ping session spec (participant: node1, node2)", false},
		{"a bad spec", []string{"config", "check", writeSpec(t, root, "bad.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n[params]\ncont = 5\n")}, "params.cont", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := run(t, tc.args...)
			if tc.bad {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("err = %v, want one naming %q\n%s%s", err, tc.want, out, stderr)
				}
				return
			}
			if err != nil || !strings.Contains(out, tc.want) {
				t.Fatalf("%v\n%s%s\nwant %q", err, out, stderr, tc.want)
			}
		})
	}
	if after, _ := os.ReadFile(cfg); !bytes.Equal(after, orig) {
		t.Error("config check changed the config")
	}
	if out, _, err := run(t, "peers", "--config", cfg); err != nil || strings.Contains(out, "globex") {
		t.Errorf("config check applied a candidate: %v\n%s", err, out)
	}
}
