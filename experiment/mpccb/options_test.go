package mpccb

import (
	"context"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// TestNegativeOptions checks that a negative count is an error naming the
// option, not a silent run of the default grid. The context is cancelled, so
// that an experiment that wrongly accepts its options stops at once.
func TestNegativeOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg, err := protocol.NewRegistry(mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(out string) error
		want string
	}{
		{"mpccb runs", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Runs: -1}); return err }, "must be positive"},
		{"mpccb steps", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Steps: 50}); return err }, "steps: 50 is outside 100..60000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
}

// TestMPCCBSeedZero checks that seed 0 is kept, not replaced by a default.
func TestMPCCBSeedZero(t *testing.T) {
	o := Options{Seed: 0}
	o.defaults()
	if o.Seed != 0 {
		t.Errorf("seed 0 became %d", o.Seed)
	}
}
