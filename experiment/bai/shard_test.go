package bai

import (
	"context"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/internal/shardtest"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// detStamp is the deterministic clock of the sharding tests: a session's
// time a function of its job alone.
func detStamp(s *Session) {
	s.Elapsed = time.Duration(s.Agents)*time.Millisecond + time.Duration(s.Run)*time.Microsecond + time.Duration(len(s.Series))*time.Nanosecond
}

// TestShardMerge checks that the grid run as 4 shards of 2 workers and
// merged writes the unsharded run's (on 8 workers) files byte for byte,
// with the same verdicts; and that merge refuses what is not one grid's
// shards (shardtest.ShardMerge).
func TestShardMerge(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("runs the grid six times (about 10 s; minutes under -race): .ci/run runs it without -race")
	}
	reg, err := protocol.NewRegistry(bai.Family{})
	if err != nil {
		t.Fatal(err)
	}
	shardtest.ShardMerge(t, shardtest.Grid{
		Run: func(t *testing.T, out string, sh experiment.Shard, workers int, seed int64) shardtest.Output {
			t.Helper()
			rep, err := Run(context.Background(), reg, Options{Out: out, Runs: 2, Agents: []int{32, 40}, Workers: workers, Seed: seed,
				Shard: sh, stamp: detStamp})
			if err != nil {
				t.Fatal(err)
			}
			// The CLI writes each directory's manifest; so does this
			// test, for the merge to name it.
			if err := experiment.NewManifest("test", Experiment, nil, nil).Write(out, experiment.ManifestFile, rep.Files); err != nil {
				t.Fatal(err)
			}
			return output(rep)
		},
		Merge: func(m *experiment.Merged, out string) (shardtest.Output, error) {
			rep, err := Merge(m, out)
			if err != nil {
				return shardtest.Output{}, err
			}
			return output(rep), nil
		},
		WholeWorkers: 8, ShardWorkers: 2, Seed: 3,
	})
}

// output is what the sharding test compares of a report.
func output(rep *Report) shardtest.Output {
	return shardtest.Output{Files: rep.Files, Runs: len(rep.Runs), Claims: rep.Claims}
}
