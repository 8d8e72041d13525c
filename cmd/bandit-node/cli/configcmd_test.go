package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigExample: the binary prints the repository's annotated example
// config, so that an operator with only the binary has every key
// explained, and init's config points at the command.
func TestConfigExample(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, "config", "example")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("config example printed %d bytes, config.example.toml has %d", len(out), len(want))
	}
	if _, _, err := run(t, "config", "nope"); err == nil {
		t.Error("config nope: no error")
	}
	dir := filepath.Join(t.TempDir(), "n")
	if _, _, err := run(t, "init", "--dir", dir); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), `"bandit-node config example"`) {
		t.Errorf("init's config does not name the command that explains its keys:\n%.400s", cfg)
	}
}
