package bai

import (
	"context"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// TestNegativeOptions checks that a negative count is an error naming the
// option, not a silent run of the default grid. The context is cancelled, so
// that an experiment that wrongly accepts its options stops at once.
func TestNegativeOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg, err := protocol.NewRegistry(bai.Family{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(out string) error
		want string
	}{
		{"bai runs", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Runs: -1}); return err }, "runs: -1 is negative"},
		{"bai workers", func(out string) error { _, err := Run(ctx, reg, Options{Out: out, Workers: -2}); return err }, "workers: -2 is negative"},
		{"bai agents", func(out string) error {
			_, err := Run(ctx, reg, Options{Out: out, Agents: []int{64, 0}})
			return err
		}, "agents: 0 is not a number of agents"},
		{"bai agents too few", func(out string) error {
			_, err := Run(ctx, reg, Options{Out: out, Agents: []int{64, 4}})
			return err
		}, "with N = 4 agents: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
}
