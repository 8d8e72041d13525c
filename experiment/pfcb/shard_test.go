package pfcb

import (
	"context"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/shardtest"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// detStamp is the deterministic clock of the sharding tests: a session's
// time a function of its job alone.
func detStamp(s *Session) {
	s.Elapsed = time.Duration(s.Agents)*time.Millisecond + time.Duration(s.Instance)*10*time.Millisecond + time.Duration(s.Run)*time.Microsecond +
		time.Duration(len(s.Algorithm))*time.Nanosecond
}

// TestShardMerge checks that the grid run as 4 shards of 2 workers and
// merged writes the unsharded run's (on 8 workers) files byte for byte,
// with the same verdicts; and that merge refuses what is not one grid's
// shards (shardtest.ShardMerge).
func TestShardMerge(t *testing.T) {
	reg, err := protocol.NewRegistry(pfcb.Family{})
	if err != nil {
		t.Fatal(err)
	}
	shardtest.ShardMerge(t, shardtest.Grid[*Report]{
		Experiment: Experiment,
		Run: func(out string, sh experiment.Shard, workers int, seed int64) (*Report, error) {
			return Run(context.Background(), reg, Options{Out: out, Rounds: 600, Instances: 2, Runs: 1, Epsilons: []float64{1, 4}, Agents: []int{2, 4},
				Workers: workers, Seed: seed,
				Shard: sh, stamp: detStamp})
		},
		Merge: Merge,
		Output: func(rep *Report) shardtest.Output {
			return shardtest.Output{Files: rep.Files, Runs: len(rep.Runs), Claims: rep.Claims}
		},
		WholeWorkers: 8, ShardWorkers: 2, Seed: 3,
	})
}
