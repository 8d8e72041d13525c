package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/configexample"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestInitConfigDefaultsFromNode: the config init writes takes every default
// it sets from config.DefaultValues (config.DefaultConfig), none is a literal
// in its template, so that a default changed in node follows into new
// nodes' configs.
func TestInitConfigDefaultsFromNode(t *testing.T) {
	poisoned, err := configexample.Poison(config.DefaultValues())
	if err != nil {
		t.Fatal(err)
	}
	// api.listen is init's --api, whose default is node.DefaultAPIListen.
	api, err := strconv.Unquote(poisoned["api.listen"])
	if err != nil {
		t.Fatal(err)
	}
	for _, open := range []bool{false, true} {
		data := templateData{Name: "acme", PeerID: "(test)", API: api,
			Listen: []string{"/ip4/127.0.0.1/tcp/4001"}, Open: open, Protocols: []string{"ping"}}
		text, err := executeConfig(data, poisoned)
		if err != nil {
			t.Fatal(err)
		}
		found, err := configexample.Follows(text, poisoned)
		if err != nil {
			t.Fatalf("open=%v: %v\n%s", open, err, text)
		}
		// The keys init writes with their defaults, for the operator to
		// see and change.
		want := []string{
			"api.listen", "api.token_file", "discovery.dial_backoff_max", "discovery.dial_backoff_min", "discovery.mdns",
			"log.format", "log.level", "metrics.listen", "metrics.min_peers", "node.data_dir", "node.identity",
			"runtime.schedtrace", "session.heartbeat_interval", "session.max_active", "session.max_frame_size",
			"session.peer_timeout", "session.propose_timeout", "session.stall_timeout",
		}
		for _, key := range want {
			if !slices.Contains(found, key) {
				t.Errorf("open=%v: init's config does not set %s", open, key)
			}
		}
	}
}

// TestInitWritesFilesWhereItsConfigSays: the identity key and the API
// token are where the config init writes points (node.identity and
// api.token_file at their defaults, under node.data_dir), so that a default
// changed in config.DefaultConfig moves the files with it.
func TestInitWritesFilesWhereItsConfigSays(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acme")
	if _, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0"); err != nil {
		t.Fatal(err)
	}
	reg, err := families.Registry()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadConfig(filepath.Join(dir, "config.toml"), reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{cfg.Node.Identity, cfg.API.TokenFile} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("the config names %s: %v (want a file of mode 0600)", f, err)
		}
	}
}
