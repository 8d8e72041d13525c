package samba

import (
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestBatchOnly: --batch-only writes the regret of every algorithm at
// B = 1 and each given batch size, the sequential baseline's ratio 1, one
// row per run whose reward is samba.Reference's with params.batch; a
// batch size over the budget or MaxBatch is refused naming it.
func TestBatchOnly(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Out: dir, Runs: 2, Budget: 600, Ks: []int{5}, Seed: 3, Batches: []int{50, 10}, BatchOnly: true}
	rep, err := Run(context.Background(), reg, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 0 || len(rep.Files) == 0 {
		t.Fatalf("batch-only ran %d secure sessions and wrote %v", len(rep.Runs), rep.Files)
	}
	rows := readCSV(t, filepath.Join(dir, "samba_batch.csv"))
	if len(rows) != 1+len(sambaAlgorithms())*3*2 {
		t.Fatalf("%d rows, want a header and 6 algorithms × B ∈ {1, 10, 50} × 2 runs", len(rows))
	}
	data, err := loadSAMBADataset("")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[1:] {
		alg, b, seed := r[0], r[1], r[3]
		raw := sambaParams(alg, 600, 2048, data.Tuning.Tuning)
		raw["batch"], _ = strconv.ParseInt(b, 10, 64)
		p, err := (samba.Family{}).ParseParams(raw)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := strconv.ParseInt(seed, 10, 64)
		want, _, err := samba.Reference(p.(samba.Params), data.Means[:5], s)
		if err != nil {
			t.Fatal(err)
		}
		if r[4] != strconv.FormatInt(want, 10) {
			t.Errorf("%s B = %s seed %s: reward %s, the batched reference %d", alg, b, seed, r[4], want)
		}
	}
	for _, r := range readCSV(t, filepath.Join(dir, "samba_batch_summary.csv"))[1:] {
		if r[1] == "1" && r[6] != "1.000" && r[3] != "0.0" {
			t.Errorf("%s: the sequential baseline's ratio is %s", r[0], r[6])
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "samba_batch_results.md"))
	if err != nil || !strings.Contains(string(md), "| algorithm | B = 1 | B = 10 | B = 50 |") {
		t.Errorf("samba_batch_results.md: %v\n%s", err, md)
	}
	for _, bad := range []int{601, samba.MaxBatch + 1, 0} {
		o.Batches = []int{bad}
		if _, err := Run(context.Background(), reg, o); err == nil || !strings.Contains(err.Error(), "batch "+strconv.Itoa(bad)) {
			t.Errorf("batch %d: err = %v", bad, err)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestBatchGrowth: with a batch growth every B > 1 runs the geometric
// schedule from B (its rewards those of the reference with batch_growth),
// B = 1 stays the sequential algorithm, and the results file says so.
func TestBatchGrowth(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	o := Options{Out: dir, Runs: 1, Budget: 600, Ks: []int{5}, Seed: 3, Batches: []int{4}, BatchGrowth: 2, BatchOnly: true}
	if _, err := Run(context.Background(), reg, o); err != nil {
		t.Fatal(err)
	}
	data, err := loadSAMBADataset("")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readCSV(t, filepath.Join(dir, "samba_batch.csv"))[1:] {
		raw := sambaParams(r[0], 600, 2048, data.Tuning.Tuning)
		raw["batch"], _ = strconv.ParseInt(r[1], 10, 64)
		if r[1] != "1" {
			raw["batch_growth"] = 2.0
		}
		p, err := (samba.Family{}).ParseParams(raw)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := strconv.ParseInt(r[3], 10, 64)
		want, _, err := samba.Reference(p.(samba.Params), data.Means[:5], s)
		if err != nil {
			t.Fatal(err)
		}
		if r[4] != strconv.FormatInt(want, 10) {
			t.Errorf("%s B = %s: reward %s, the reference with the schedule %d", r[0], r[1], r[4], want)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "samba_batch_results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "A geometric schedule** (`params.batch_growth = 2`)") {
		t.Errorf("the results file does not state the schedule:\n%s", md)
	}
	o.BatchGrowth = 0.5
	if _, err := Run(context.Background(), reg, o); err == nil || !strings.Contains(err.Error(), "batch growth 0.5") {
		t.Errorf("growth 0.5: err = %v", err)
	}
}
