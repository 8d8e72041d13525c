package mpccb

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// detStamp is the deterministic clock of the sharding tests: a session's
// times a function of its job alone.
func detStamp(s *Session) {
	s.MsPerStep = float64(s.Arms*s.Parties) + float64(s.Run)/10 + s.Epsilon
	s.Elapsed = time.Duration(s.Arms)*time.Millisecond + time.Duration(s.Run)*time.Microsecond
}

// pdfDate is the clock time gonum's PDF writer stamps every file with (and
// no option sets); the comparison blanks it.
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]+\)`)

// shardRun runs the small grid of these tests into out, as shard sh, and
// writes the manifest the CLI would.
func shardRun(t *testing.T, reg *protocol.Registry, fm *dataset.Contexts, out string, sh experiment.Shard, workers int, seed int64) *Report {
	t.Helper()
	rep, err := Run(context.Background(), reg, Options{Out: out, Quick: true, Steps: MinSteps, Runs: 2, Epsilons: []float64{0.1, 0.5},
		CurveEpsilons: []float64{0.1}, Arms: []int{10}, Parties: []int{2}, ScaleParties: []int{2, 3}, ScaleArms: []int{10},
		TimingSteps: 10, TimingRepeats: 1, BenchTime: time.Millisecond, Workers: workers, Seed: seed, Command: "bandit-lab experiment mpccb --quick",
		Shard: sh, stamp: detStamp, fashion: fm})
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.NewManifest("test", Experiment, nil, nil).Write(out, experiment.ManifestFile, rep.Files); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestShardMerge checks that the reward grid run as 4 shards of 1 worker
// (shard 1 also running the timing runs and Table 1) and merged writes the
// unsharded run's (on 4 workers) files byte for byte — the manifest aside,
// and the PDFs' creation dates — with the same verdicts, and that merge
// refuses a missing shard, a repeated one and a shard of another grid.
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
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	want := shardRun(t, reg, fm, whole, experiment.Shard{}, 4, 3)
	var dirs []string
	for i := 1; i <= 4; i++ {
		d := filepath.Join(root, "shard"+strconv.Itoa(i))
		rep := shardRun(t, reg, fm, d, experiment.Shard{Index: i, Count: 4}, 1, 3)
		if len(rep.Files) != 1 || filepath.Base(rep.Files[0]) != experiment.PartialFile {
			t.Fatalf("shard %d wrote %v, want only its partial output", i, rep.Files)
		}
		dirs = append(dirs, d)
	}
	other := filepath.Join(root, "other")
	shardRun(t, reg, fm, other, experiment.Shard{Index: 3, Count: 4}, 1, 4)

	m, err := experiment.ReadPartials(dirs)
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(root, "merged")
	got, err := Merge(m, merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != len(want.Files) || len(got.Runs) != len(want.Runs) {
		t.Fatalf("merged: %d files, %d runs; unsharded: %d files, %d runs", len(got.Files), len(got.Runs), len(want.Files), len(want.Runs))
	}
	for _, f := range want.Files {
		a, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(merged, filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		if string(pdfDate.ReplaceAll(a, nil)) != string(pdfDate.ReplaceAll(b, nil)) {
			t.Errorf("%s: the merged file differs from the unsharded run's", filepath.Base(f))
		}
	}
	if len(got.Claims) != len(want.Claims) {
		t.Fatalf("%d claims merged, %d unsharded", len(got.Claims), len(want.Claims))
	}
	for i := range want.Claims {
		if want.Claims[i].Verdict() != got.Claims[i].Verdict() || want.Claims[i].Note != got.Claims[i].Note {
			t.Errorf("claim %q: %s unsharded, %s merged", want.Claims[i].Text, want.Claims[i].Verdict(), got.Claims[i].Verdict())
		}
	}

	for _, tt := range []struct {
		name string
		dirs []string
		err  string
	}{
		{"missing shard", []string{dirs[1], dirs[2], dirs[3]}, "shard 1/4 missing"},
		{"repeated shard", []string{dirs[0], dirs[1], dirs[2], dirs[3], dirs[0]}, "shard 1/4 twice"},
		{"another grid", []string{dirs[0], dirs[1], other, dirs[3]}, "ran different grids"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.ReadPartials(tt.dirs)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
}
