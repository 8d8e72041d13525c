package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/bench/pattern"
)

// TestReadRoutes checks the --routes file of bench pattern.
func TestReadRoutes(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[pattern.Route]string
		wantErr    string
	}{
		{"two routes, a comment and a blank line", "# from to addr\n0 1 /ip4/10.77.0.13/tcp/20002\n\n1 0 /ip4/10.77.0.12/tcp/20003\n",
			map[pattern.Route]string{{From: 0, To: 1}: "/ip4/10.77.0.13/tcp/20002", {From: 1, To: 0}: "/ip4/10.77.0.12/tcp/20003"}, ""},
		{"two fields", "0 /ip4/1.2.3.4/tcp/1\n", nil, `:1: want "FROM TO MULTIADDR"`},
		{"a name for a number", "comp 0 /ip4/1.2.3.4/tcp/1\n", nil, `:1: want "FROM TO MULTIADDR"`},
		{"a bad address", "0 1 10.77.0.13:20002\n", nil, `:1: address "10.77.0.13:20002"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "routes")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readRoutes(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readRoutes: error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("readRoutes = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestBenchPatternPlacementNeedsProcesses checks that --listen and --routes
// are refused without --processes.
func TestBenchPatternPlacementNeedsProcesses(t *testing.T) {
	for _, args := range [][]string{{"--listen", "/ip4/127.0.0.1/tcp/4001"}, {"--routes", "routes"}} {
		_, _, err := run(t, append([]string{"bench", "pattern"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "need --processes") || ExitCode(err) != 2 {
			t.Errorf("%v: err = %v (exit %d), want a usage error saying they need --processes", args, err, ExitCode(err))
		}
	}
}
