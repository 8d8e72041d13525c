package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A config that does not state [node] name and listen is refused, with a
// reason that names the key and says what to write: no daemon starts
// under a made-up name, or on every interface, from an empty file.
func TestConfigMustStateNode(t *testing.T) {
	const listen = "listen = [\"/ip4/127.0.0.1/tcp/4001\"]\n"
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "the config is empty"},
		{"blanks and comments", "\n  \n# [node]\n# name = \"a\"\n", "the config is empty"},
		{"no [node]", "[log]\nlevel = \"info\"\n", "[node]: missing: give the [node] table with name and listen"},
		{"no name", "[node]\n" + listen, "node.name: missing: give this organization's name"},
		{"empty name", "[node]\nname = \"\"\n" + listen, "node.name: must not be empty"},
		{"no listen", "[node]\nname = \"a\"\n", "node.listen: missing, and there is no default"},
		{"no listen, other keys", "[node]\nname = \"a\"\ndata_dir = \".\"\n[api]\nlisten = \"127.0.0.1:5601\"\n", "node.listen: missing"},
		{"empty listen", "[node]\nname = \"a\"\nlisten = []\n", "node.listen: give at least one multiaddr"},
		// A misspelt key is named as such, not as a missing one.
		{"misspelt name", "[node]\nnmae = \"a\"\n" + listen, "unknown key node.nmae"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("/etc/bandit/config.toml", []byte(tt.text), testRegistry(t))
			if err == nil {
				t.Fatalf("loaded: name %q, listen %v; want an error naming %q", cfg.Node.Name, cfg.Node.Listen, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "/etc/bandit/config.toml: ") {
				t.Errorf("err = %v, want one naming the file and %q", err, tt.want)
			}
		})
	}
	cfg, err := ParseConfig("/etc/bandit/config.toml", []byte("[node]\nname = \"a\"\n"+listen), testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node.Name != "a" || !slices.Equal(cfg.Node.Listen, []string{"/ip4/127.0.0.1/tcp/4001"}) {
		t.Errorf("node = %+v", cfg.Node)
	}
}

// config.example.toml cut at every line boundary, as a disk that filled up
// or a copy that stopped would leave it: every prefix is refused with a
// reason or loads as written, and none loads with a name or a listen
// address it does not state. The prefix that ends after [node] and before
// the address book and the policies loads with both warnings.
func TestTruncatedConfig(t *testing.T) {
	// Parsed as the example's own path: the files it names are beside it.
	path := filepath.Join("..", "..", "config.example.toml")
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reg := testRegistry(t)
	lines := strings.SplitAfter(string(full), "\n")
	loaded, refused := 0, 0
	for i := range lines {
		text := strings.Join(lines[:i], "")
		cfg, err := ParseConfig(path, []byte(text), reg)
		if err != nil {
			refused++
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("cut after line %d: %v does not name the file", i, err)
			}
			continue
		}
		loaded++
		if cfg.Node.Name != "acme" || len(cfg.Node.Listen) != 2 {
			t.Errorf("cut after line %d: loaded with node %+v, which the text does not state", i, cfg.Node)
		}
	}
	t.Logf("%d prefixes of %d lines refused, %d loaded", refused, len(lines), loaded)
	if loaded == 0 {
		t.Fatal("no prefix loaded, not even the whole file")
	}
	cut := strings.Index(string(full), "\n[[peers]]")
	if p := strings.Index(string(full), "\n[policy."); p < cut {
		cut = p
	}
	cfg, err := ParseConfig(path, full[:cut+1], reg)
	if err != nil {
		t.Fatalf("cut before [[peers]] and [policy.*]: %v", err)
	}
	w := cfg.Warnings()
	if len(w) != 2 || !strings.HasPrefix(w[0], "no [[peers]]: this node can connect to no organization until peers are added (bandit-node peers add)") ||
		!strings.HasPrefix(w[1], "no [policy.*]: this node declines every proposal") {
		t.Errorf("warnings = %q", w)
	}
	if cfg, err := ParseConfig(path, full, reg); err != nil {
		t.Errorf("the whole example: %v", err)
	} else if w := cfg.Warnings(); len(w) != 0 {
		t.Errorf("the whole example: warnings %q", w)
	}
}
