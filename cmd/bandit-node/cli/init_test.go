package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/config"
)

// TestInitAPI checks that init accepts exactly the --api values run accepts:
// a refused one is a usage error naming --api that leaves nothing behind,
// and an accepted one gives a config that loads.
func TestInitAPI(t *testing.T) {
	reg, err := families.Registry()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		api  string
		want string // "" when init must accept it
	}{
		{"0.0.0.0:5601", `--api "0.0.0.0:5601" is not a loopback address; the control API is local only unless api.allow_remote = true (set both in config.toml after init)`},
		{"192.0.2.1:5601", `--api "192.0.2.1:5601" is not a loopback address`},
		{"example.com:5601", `--api "example.com:5601" is not a loopback address`},
		{":5601", `--api ":5601" is not a loopback address`},
		{"localhost", `--api "localhost": missing port in address`},
		{"127.0.0.1", `--api "127.0.0.1": missing port in address`},
		{"127.0.0.1:abc", `--api "127.0.0.1:abc": the port "abc" is not a number`},
		{"127.0.0.1:70000", `the port "70000" is not a number in 0..65535`},
		{"127.0.0.1:5601", ""},
		{"127.0.0.2:0", ""},
		{"localhost:5601", ""},
		{"[::1]:5601", ""},
	}
	for _, tt := range tests {
		t.Run(tt.api, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "acme")
			_, _, err := run(t, "init", "--dir", dir, "--listen", "/ip4/127.0.0.1/tcp/0", "--api", tt.api)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
					t.Errorf("err = %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.want)
				}
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Errorf("a refused init left %s behind (%v)", dir, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadConfig(filepath.Join(dir, "config.toml"), reg)
			if err != nil {
				t.Fatalf("the config of init --api %s does not load: %v", tt.api, err)
			}
			if cfg.API.Listen != tt.api {
				t.Errorf("api.listen = %q, want %q", cfg.API.Listen, tt.api)
			}
		})
	}
}
