package samba

import (
	"context"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/shardtest"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// detStamp is the deterministic clock of the sharding tests: each session's
// times a function of its job alone.
func detStamp(s *Session) {
	x := float64(s.K)*1e-3 + float64(s.Budget)*1e-6 + float64(s.Run)*1e-7 + float64(len(s.Algorithm))*1e-5
	s.SecureSeconds, s.SetupSeconds, s.SecureWallSeconds, s.StandardSeconds = x, x/4, 1.5*x, x/1000
	costs := map[string]samba.RoleCost{}
	for role, c := range s.Costs {
		c.BusySeconds = x * float64(1+len(role))
		costs[role] = c
	}
	s.Costs = costs
}

// TestShardMerge checks that the grid run as 4 shards of 2 workers and
// merged writes the unsharded run's (on 8 workers) files byte for byte,
// with the same verdicts; and that merge refuses what is not one grid's
// shards (shardtest.ShardMerge).
func TestShardMerge(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	shardtest.ShardMerge(t, shardtest.Grid[*Report]{
		Experiment: Experiment,
		Run: func(out string, sh experiment.Shard, workers int, seed int64) (*Report, error) {
			return Run(context.Background(), reg, Options{Out: out, Runs: 2, Budget: 24, Ks: []int{3, 4}, PaillierBits: 512,
				Workers: workers, Seed: seed, Command: "bandit-lab experiment samba --budget 24", Shard: sh, stamp: detStamp})
		},
		Merge: Merge,
		Output: func(rep *Report) shardtest.Output {
			return shardtest.Output{Files: rep.Files, Runs: len(rep.Runs), Claims: rep.Claims}
		},
		WholeWorkers: 8, ShardWorkers: 2, Seed: 7,
	})
}
