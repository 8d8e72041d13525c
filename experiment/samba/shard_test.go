package samba

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// detStamp is the deterministic clock of the sharding tests: each session's
// times a function of its job alone.
func detStamp(s *Session) {
	x := float64(s.K)*1e-3 + float64(s.Budget)*1e-6 + float64(s.Run)*1e-7 + float64(len(s.Algorithm))*1e-5
	s.SecureSeconds, s.SecureWallSeconds, s.StandardSeconds = x, 1.5*x, x/1000
	costs := map[string]samba.RoleCost{}
	for role, c := range s.Costs {
		c.BusySeconds = x * float64(1+len(role))
		costs[role] = c
	}
	s.Costs = costs
}

// pdfDateless blanks a PDF's /CreationDate and /ModDate, the clock time
// gonum's PDF writer stamps every file with (and no option sets).
func pdfDateless(b []byte) []byte {
	return pdfDate.ReplaceAll(b, []byte("/$1 ()"))
}

var pdfDate = regexp.MustCompile(`/(CreationDate|ModDate) \(D:[0-9]+\)`)

// shardRun runs the small grid of these tests into out, as shard sh.
func shardRun(t *testing.T, reg *protocol.Registry, out string, sh experiment.Shard, workers int, seed int64) *Report {
	t.Helper()
	rep, err := Run(context.Background(), reg, Options{Out: out, Runs: 2, Budget: 24, Ks: []int{3, 4}, PaillierBits: 512,
		Workers: workers, Seed: seed, Command: "bandit-lab experiment samba --budget 24", Shard: sh, stamp: detStamp})
	if err != nil {
		t.Fatal(err)
	}
	// The CLI writes each directory's manifest; so does this test, for
	// the merge to name it.
	if err := experiment.NewManifest("test", Experiment, nil, nil).Write(out, experiment.ManifestFile, rep.Files); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestShardMerge checks that the grid run as 4 shards of 2 workers and
// merged writes the unsharded run's (on 8 workers) files byte for byte —
// the manifest aside, and the PDFs' creation dates —, and that merge
// refuses a missing shard, a repeated one and shards of another grid.
func TestShardMerge(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	whole := filepath.Join(root, "whole")
	want := shardRun(t, reg, whole, experiment.Shard{}, 8, 7)
	var dirs []string
	for i := 1; i <= 4; i++ {
		d := filepath.Join(root, "shard", string(rune('0'+i)))
		rep := shardRun(t, reg, d, experiment.Shard{Index: i, Count: 4}, 2, 7)
		if len(rep.Files) != 1 || filepath.Base(rep.Files[0]) != experiment.PartialFile {
			t.Fatalf("shard %d wrote %v, want only its partial output", i, rep.Files)
		}
		dirs = append(dirs, d)
	}
	other := filepath.Join(root, "other")
	shardRun(t, reg, other, experiment.Shard{Index: 2, Count: 4}, 2, 8)

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
		if string(pdfDateless(a)) != string(pdfDateless(b)) {
			t.Errorf("%s: the merged file differs from the unsharded run's", filepath.Base(f))
		}
	}
	for i := range want.Claims {
		if want.Claims[i].Verdict() != got.Claims[i].Verdict() {
			t.Errorf("claim %q: %s unsharded, %s merged", want.Claims[i].Text, want.Claims[i].Verdict(), got.Claims[i].Verdict())
		}
	}

	for _, tt := range []struct {
		name string
		dirs []string
		err  string
	}{
		{"missing shard", []string{dirs[0], dirs[1], dirs[3]}, "shard 3/4 missing"},
		{"repeated shard", []string{dirs[0], dirs[1], dirs[2], dirs[3], dirs[1]}, "shard 2/4 twice"},
		{"another grid", []string{dirs[0], other, dirs[2], dirs[3]}, "ran different grids"},
		{"not a shard", []string{dirs[0], whole}, "is not a shard's output"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := experiment.ReadPartials(tt.dirs)
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("err = %v, want one containing %q", err, tt.err)
			}
		})
	}
}
