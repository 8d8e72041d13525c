package mpccb

import (
	"context"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/shardtest"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// detStamp is the deterministic clock of the sharding tests: a session's
// times a function of its job alone.
func detStamp(s *Session) {
	s.MsPerStep = float64(s.Arms*s.Parties) + float64(s.Run)/10 + s.Epsilon
	s.Elapsed = time.Duration(s.Arms)*time.Millisecond + time.Duration(s.Run)*time.Microsecond
}

// TestShardMerge checks that the reward grid run as 4 shards of 1 worker
// (shard 1 also running the timing runs and Table 1) and merged writes the
// unsharded run's (on 4 workers) files byte for byte, with the same
// verdicts; and that merge refuses what is not one grid's shards
// (shardtest.ShardMerge).
func TestShardMerge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("loads Fashion-MNIST and runs the grid six times: too slow under -short or -race (.ci/run runs it without -race)")
	}
	fm, err := dataset.FashionMNISTContexts(dataset.FashionMNISTDir)
	if err != nil {
		t.Skipf("no Fashion-MNIST: %v", err)
	}
	reg, err := protocol.NewRegistry(mpccb.NewFamily())
	if err != nil {
		t.Fatal(err)
	}
	shardtest.ShardMerge(t, shardtest.Grid[*Report]{
		Experiment: Experiment,
		Run: func(out string, sh experiment.Shard, workers int, seed int64) (*Report, error) {
			return Run(context.Background(), reg, Options{Out: out, Quick: true, Steps: MinSteps, Runs: 2, Epsilons: []float64{0.1, 0.5},
				CurveEpsilons: []float64{0.1}, Arms: []int{10}, Parties: []int{2}, ScaleParties: []int{2, 3}, ScaleArms: []int{10},
				TimingSteps: 10, TimingRepeats: 1, BenchTime: time.Millisecond, Workers: workers, Seed: seed, Command: "bandit-lab experiment mpccb --quick",
				Shard: sh, stamp: detStamp, fashion: fm})
		},
		Merge: Merge,
		Output: func(rep *Report) shardtest.Output {
			return shardtest.Output{Files: rep.Files, Runs: len(rep.Runs), Claims: rep.Claims}
		},
		WholeWorkers: 4, ShardWorkers: 1, Seed: 3,
	})
}
