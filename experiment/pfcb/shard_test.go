package pfcb

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
)

// detStamp is the deterministic clock of the sharding tests: a session's
// time a function of its job alone.
func detStamp(s *Session) {
	s.Elapsed = time.Duration(s.Agents)*time.Millisecond + time.Duration(s.Instance)*10*time.Millisecond + time.Duration(s.Run)*time.Microsecond +
		time.Duration(len(s.Algorithm))*time.Nanosecond
}

// pdfDate is the clock time gonum's PDF writer stamps every file with (and
// no option sets); the comparison blanks it.
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]+\)`)

// shardRun runs the small grid of these tests into out, as shard sh, and
// writes the manifest the CLI would.
func shardRun(t *testing.T, reg *protocol.Registry, out string, sh experiment.Shard, workers int, seed int64) *Report {
	t.Helper()
	rep, err := Run(context.Background(), reg, Options{Out: out, Rounds: 600, Instances: 2, Runs: 1, Epsilons: []float64{1, 4}, Agents: []int{2, 4},
		Workers: workers, Seed: seed,
		Shard: sh, stamp: detStamp})
	if err != nil {
		t.Fatal(err)
	}
	if err := experiment.NewManifest("test", Experiment, nil, nil).Write(out, experiment.ManifestFile, rep.Files); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestShardMerge checks that the grid run as 4 shards of 2 workers and
// merged writes the unsharded run's (on 8 workers) files byte for byte —
// the manifest aside, and the PDFs' creation dates — with the same
// verdicts, and that merge refuses a missing shard, a repeated one and a
// shard of another grid.
func TestShardMerge(t *testing.T) {
	reg, err := protocol.NewRegistry(pfcb.Family{})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	want := shardRun(t, reg, whole, experiment.Shard{}, 8, 3)
	var dirs []string
	for i := 1; i <= 4; i++ {
		d := filepath.Join(root, "shard"+strconv.Itoa(i))
		rep := shardRun(t, reg, d, experiment.Shard{Index: i, Count: 4}, 2, 3)
		if len(rep.Files) != 1 || filepath.Base(rep.Files[0]) != experiment.PartialFile {
			t.Fatalf("shard %d wrote %v, want only its partial output", i, rep.Files)
		}
		dirs = append(dirs, d)
	}
	other := filepath.Join(root, "other")
	shardRun(t, reg, other, experiment.Shard{Index: 3, Count: 4}, 2, 4)

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
		{"missing shard", []string{dirs[0], dirs[1], dirs[3]}, "shard 3/4 missing"},
		{"repeated shard", []string{dirs[0], dirs[1], dirs[2], dirs[3], dirs[2]}, "shard 3/4 twice"},
		{"another grid", []string{dirs[0], dirs[1], other, dirs[3]}, "ran different grids"},
		{"not a shard", []string{whole, dirs[1]}, "is not a shard's output"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.ReadPartials(tt.dirs)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
}
