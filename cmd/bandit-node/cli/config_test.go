package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
)

// TestConfigPath checks the order in which the config file is chosen:
// --config, then $BANDIT_NODE_CONFIG, then ./config.toml if it exists.
func TestConfigPath(t *testing.T) {
	exists := func(string) (fs.FileInfo, error) { return nil, nil }
	missing := func(string) (fs.FileInfo, error) { return nil, fs.ErrNotExist }
	denied := func(string) (fs.FileInfo, error) { return nil, fs.ErrPermission }
	tests := []struct {
		name    string
		flag    string
		env     string
		stat    func(string) (fs.FileInfo, error)
		want    string
		wantErr string
	}{
		{"flag wins over all", "a.toml", "b.toml", exists, "a.toml", ""},
		{"flag alone", "a.toml", "", missing, "a.toml", ""},
		{"variable wins over the default", "", "b.toml", exists, "b.toml", ""},
		{"variable alone", "", "b.toml", missing, "b.toml", ""},
		{"default when it exists", "", "", exists, "config.toml", ""},
		{"none", "", "", missing, "", "pass --config FILE, set BANDIT_NODE_CONFIG=FILE, or run in the directory holding config.toml"},
		{"default unreadable", "", "", denied, "", "looking for ./config.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k != configEnv {
					t.Errorf("read variable %q, want %s", k, configEnv)
				}
				return tt.env
			}
			got, err := configPath(tt.flag, getenv, tt.stat)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("configPath = %q, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("configPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestConfigFromEnvironment runs a daemon-facing command with the config
// named by the variable, then by ./config.toml, on the real loading path:
// the config is found (the command then fails only at its token file).
func TestConfigFromEnvironment(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "named.toml")
	if err := os.WriteFile(bad, []byte("[node]\nfrobnicate = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(configEnv, bad)
	_, _, err := run(t, "peers")
	if err == nil || !strings.Contains(err.Error(), "frobnicate") {
		t.Fatalf("peers with %s=%s: %v, want the file's unknown key named", configEnv, bad, err)
	}
	// With the variable unset, ./config.toml is read.
	t.Setenv(configEnv, "")
	t.Chdir(dir)
	if err := os.WriteFile(defaultConfig, []byte("[api]\nfrobnicate2 = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "peers")
	if err == nil || !strings.Contains(err.Error(), "frobnicate2") {
		t.Fatalf("peers in a directory with config.toml: %v, want its unknown key named", err)
	}
	if err := os.Remove(defaultConfig); err != nil {
		t.Fatal(err)
	}
	_, _, err = run(t, "peers")
	var ue clikit.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), configEnv) {
		t.Fatalf("peers with no config anywhere: %v, want a usage error naming %s", err, configEnv)
	}
}
