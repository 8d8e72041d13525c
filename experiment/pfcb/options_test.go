package pfcb

import (
	"context"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestNegativeOptions checks that a negative count is an error naming the
// option, not a silent run of the default grid. The context is cancelled, so
// that an experiment that wrongly accepts its options stops at once.
func TestNegativeOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg, err := protocol.NewRegistry(pfcb.Family{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(out string) error
		want string
	}{
		{"pfcb rounds", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Rounds: -5}); return err }, "rounds: -5 is negative"},
		{"pfcb rounds too few", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Rounds: 150}); return err }, "rounds 150 does not suit the federated runs: params.t_lo"},
		{"pfcb instances", func(out string) error {
			_, err := Run(ctx, reg, Options{Out: out, Instances: -1})
			return err
		}, "instances: -1 is negative"},
		{"pfcb runs", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Runs: -3}); return err }, "runs: -3 is negative"},
		{"pfcb workers", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Workers: -1}); return err }, "workers: -1 is negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
}
