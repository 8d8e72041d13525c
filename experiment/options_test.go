package experiment_test

import (
	"context"
	"strings"
	"testing"

	baiexp "github.com/bandit-node/bandit-node/experiment/bai"
	mpccbexp "github.com/bandit-node/bandit-node/experiment/mpccb"
	pfcbexp "github.com/bandit-node/bandit-node/experiment/pfcb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// TestNegativeOptions checks, for each family's experiments, that a negative
// count is an error naming the option, not a silent run of the default grid.
// The context is cancelled, so that an experiment that wrongly accepts its
// options stops at once.
func TestNegativeOptions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg, err := protocol.NewRegistry(bai.Family{}, pfcb.Family{}, mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(out string) error
		want string
	}{
		{"bai runs", func(out string) error { _, err := baiexp.Run(ctx, reg, baiexp.Options{Out: out, Runs: -1}); return err }, "runs: -1 is negative"},
		{"bai workers", func(out string) error {
			_, err := baiexp.Run(ctx, reg, baiexp.Options{Out: out, Workers: -2})
			return err
		}, "workers: -2 is negative"},
		{"bai agents", func(out string) error {
			_, err := baiexp.Run(ctx, reg, baiexp.Options{Out: out, Agents: []int{64, 0}})
			return err
		}, "agents: 0 is not a number of agents"},
		{"bai agents too few", func(out string) error {
			_, err := baiexp.Run(ctx, reg, baiexp.Options{Out: out, Agents: []int{64, 4}})
			return err
		}, "with N = 4 agents: "},
		{"pfcb rounds", func(out string) error {
			_, err := pfcbexp.Run(ctx, reg, pfcbexp.Options{Out: out, Rounds: -5})
			return err
		}, "rounds: -5 is negative"},
		{"pfcb rounds too few", func(out string) error {
			_, err := pfcbexp.Run(ctx, reg, pfcbexp.Options{Out: out, Rounds: 150})
			return err
		}, "rounds 150 does not suit the federated runs: params.t_lo"},
		{"pfcb instances", func(out string) error {
			_, err := pfcbexp.Run(ctx, reg, pfcbexp.Options{Out: out, Instances: -1})
			return err
		}, "instances: -1 is negative"},
		{"pfcb runs", func(out string) error {
			_, err := pfcbexp.Run(ctx, reg, pfcbexp.Options{Out: out, Runs: -3})
			return err
		}, "runs: -3 is negative"},
		{"pfcb workers", func(out string) error {
			_, err := pfcbexp.Run(ctx, reg, pfcbexp.Options{Out: out, Workers: -1})
			return err
		}, "workers: -1 is negative"},
		{"mpccb runs", func(out string) error {
			_, err := mpccbexp.Run(ctx, reg, mpccbexp.Options{Out: out, Runs: -1})
			return err
		}, "must be positive"},
		{"mpccb steps", func(out string) error {
			_, err := mpccbexp.Run(ctx, reg, mpccbexp.Options{Out: out, Steps: 50})
			return err
		}, "steps: 50 is outside 100..60000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.run(t.TempDir()); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
}
