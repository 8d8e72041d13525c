package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestDataMPCCBParties checks that data mpccb accepts exactly the numbers of
// feature parties a session does (2..mpccb.MaxParties): the files of any
// other number could never be used.
func TestDataMPCCBParties(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" when accepted
	}{
		{[]string{"--parties", "1"}, "--parties 1: a session has 2..16 feature parties"},
		{[]string{"--parties", "0"}, "--parties 0: a session has 2..16 feature parties"},
		{[]string{"--parties", "-2"}, "--parties -2"},
		{[]string{"--parties", "17"}, "--parties 17: a session has 2..16 feature parties"},
		{[]string{"--parties", "20"}, "--parties 20"},
		{[]string{"--steps", "-1"}, "--steps -1: must be 0 (all contexts) or more"},
		{[]string{"--parties", "2"}, ""},
		{[]string{"--parties", "16"}, ""},
	}
	if mpccb.MaxParties != 16 {
		t.Fatalf("mpccb.MaxParties is %d; update the messages above", mpccb.MaxParties)
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// An empty --source: an accepted command fails only when it
			// looks for the Fashion-MNIST files, quickly, with no data set
			// installed.
			out, source := filepath.Join(t.TempDir(), "data"), t.TempDir()
			args := append([]string{"data", "mpccb", "--out", out, "--source", source, "--dataset", dataset.Synthetic, "--arms", "3", "--steps", "40"}, tt.args...)
			_, _, err := run(t, args...)
			if tt.want == "" {
				if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), "Fashion-MNIST file") {
					t.Errorf("err = %v (exit %d), want the flags accepted and the missing data set reported", err, ExitCode(err))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
				t.Errorf("err = %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused data mpccb wrote %s (%v)", out, err)
			}
		})
	}
}
