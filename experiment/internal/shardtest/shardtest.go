// Package shardtest checks that an experiment's grid run as shards and merged
// is the unsharded run, byte for byte.
package shardtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
)

// Output is what one run of an experiment wrote: its files, how many runs
// it holds and the paper's claims with their verdicts.
type Output struct {
	Files  []string
	Runs   int
	Claims []experiment.Claim
}

// Grid is one experiment's small grid as the sharding test drives it; R
// is the experiment's report.
type Grid[R any] struct {
	// Experiment names the experiment in the manifests.
	Experiment string
	// Run runs the grid into out as shard sh (the zero Shard: the whole
	// grid) on workers with seed.
	Run func(out string, sh experiment.Shard, workers int, seed int64) (R, error)
	// Merge merges the partial outputs read into out, as `experiment
	// merge` does.
	Merge func(m *experiment.Merged, out string) (R, error)
	// Output is what the test compares of a report.
	Output func(R) Output
	// WholeWorkers runs the unsharded grid; ShardWorkers each of 4 shards.
	WholeWorkers, ShardWorkers int
	// Seed is the grid's seed; a shard run with Seed+1 belongs to another
	// grid.
	Seed int64
}

// run runs g into out and writes the manifest the CLI would (the merge
// names each shard's).
func (g Grid[R]) run(t *testing.T, out string, sh experiment.Shard, workers int, seed int64) Output {
	t.Helper()
	rep, err := g.Run(out, sh, workers, seed)
	if err != nil {
		t.Fatal(err)
	}
	o := g.Output(rep)
	if err := experiment.NewManifest("test", g.Experiment, nil, nil).Write(out, experiment.ManifestFile, o.Files); err != nil {
		t.Fatal(err)
	}
	return o
}

// pdfDate is the clock time gonum's PDF writer stamps every file with (and
// no option sets); the comparison blanks it.
var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]+\)`)

// ShardMerge checks that g run as 4 shards and merged writes the unsharded
// run's files byte for byte — the manifest aside, and the PDFs' creation
// dates — with the same verdicts and notes, and that merging refuses a
// missing shard, a repeated one, a shard of another grid and an output that
// is no shard's.
func ShardMerge[R any](t *testing.T, g Grid[R]) {
	t.Helper()
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	want := g.run(t, whole, experiment.Shard{}, g.WholeWorkers, g.Seed)
	var dirs []string
	for i := 1; i <= 4; i++ {
		d := filepath.Join(root, "shard"+strconv.Itoa(i))
		out := g.run(t, d, experiment.Shard{Index: i, Count: 4}, g.ShardWorkers, g.Seed)
		if len(out.Files) != 1 || filepath.Base(out.Files[0]) != experiment.PartialFile {
			t.Fatalf("shard %d wrote %v, want only its partial output", i, out.Files)
		}
		dirs = append(dirs, d)
	}
	other := filepath.Join(root, "other")
	g.run(t, other, experiment.Shard{Index: 3, Count: 4}, g.ShardWorkers, g.Seed+1)

	m, err := experiment.ReadPartials(dirs)
	if err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(root, "merged")
	rep, err := g.Merge(m, merged)
	if err != nil {
		t.Fatal(err)
	}
	got := g.Output(rep)
	if len(got.Files) != len(want.Files) || got.Runs != want.Runs {
		t.Fatalf("merged: %d files, %d runs; unsharded: %d files, %d runs", len(got.Files), got.Runs, len(want.Files), want.Runs)
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
	for i, w := range want.Claims {
		if w.Verdict() != got.Claims[i].Verdict() || w.Note != got.Claims[i].Note {
			t.Errorf("claim %q: %s unsharded, %s merged", w.Text, w.Verdict(), got.Claims[i].Verdict())
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
