package samba

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestReadArmMeans checks the --dataset FILE format: one mean per line,
// blank lines and # comments skipped, sorted in descending order; a bad
// line is an error naming the line and the value.
func TestReadArmMeans(t *testing.T) {
	tests := []struct {
		name, in string
		want     []float64
		err      string
	}{
		{"plain", "0.2\n0.5\n0.1\n", []float64{0.5, 0.2, 0.1}, ""},
		{"comments and blanks", "# my arms\n\n 0.3 \n0\n1\n", []float64{1, 0.3, 0}, ""},
		{"not a number", "0.2\n0.4\nabc\n", nil, `line 3: "abc" is not a number`},
		{"above one", "0.2\n1.5\n", nil, "line 2: 1.5 is not a Bernoulli mean in [0, 1]"},
		{"negative", "-0.1\n0.2\n", nil, "line 1: -0.1 is not a Bernoulli mean"},
		{"NaN", "0.1\nNaN\n", nil, "line 2: NaN is not a Bernoulli mean"},
		{"two on a line", "0.1 0.2\n0.3\n", nil, `line 1: "0.1 0.2" is not a number`},
		{"one arm", "# only\n0.5\n", nil, "1 arm means; SAMBA needs at least 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadArmMeans(strings.NewReader(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("got %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestMovieLensDataset checks the embedded means against the statistics
// of the SAMBA prototype's MovieLens-100k data: 100 arms, μ* = 0.5313,
// mean 0.1008, in descending order.
func TestMovieLensDataset(t *testing.T) {
	d, err := loadSAMBADataset("")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != DatasetMovieLens || len(d.Means) != 100 {
		t.Fatalf("%s: %d arms, want movielens with 100", d.Name, len(d.Means))
	}
	sum := 0.0
	for i, m := range d.Means {
		sum += m
		if i > 0 && m > d.Means[i-1] {
			t.Fatalf("arm %d (%v) above arm %d (%v): not in descending order", i, m, i-1, d.Means[i-1])
		}
	}
	if math.Abs(d.Means[0]-0.5313) > 1e-4 || math.Abs(sum/100-0.1008) > 1e-4 {
		t.Errorf("μ* = %.4f, mean %.4f; the prototype's data has 0.5313 and 0.1008", d.Means[0], sum/100)
	}
}

// runSmallSAMBA runs the experiment on a small grid: K = 3 and 5, N = 60
// (so 15, 30, 60 at K = 5), two runs, 512-bit Paillier.
func runSmallSAMBA(t *testing.T, dataset string) (*Report, string) {
	t.Helper()
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := Run(context.Background(), reg, Options{Out: out, Dataset: dataset, Runs: 2, Budget: 60, Ks: []int{5, 3},
		PaillierBits: 512, Workers: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	return rep, out
}

// TestRunSAMBA runs a small grid and checks what the paper's Theorems 2
// and 4 make exact: every run returns the standard algorithm's reward and
// arm sequence, the counts of AES-GCM and Paillier operations and of
// messages, equal data owners; and that every file is written.
func TestRunSAMBA(t *testing.T) {
	rep, out := runSmallSAMBA(t, "")
	// 6 algorithms × (K = 3 at N = 60; K = 5 at 15, 30, 60) × 2 runs.
	if len(rep.Runs) != 6*4*2 {
		t.Fatalf("%d runs, want 48", len(rep.Runs))
	}
	for _, r := range rep.Runs {
		if !r.Exact || r.Reward != r.StandardReward {
			t.Errorf("%+v: not exact", r.sambaJob)
		}
		if r.SecureSeconds <= 0 || r.StandardSeconds <= 0 {
			t.Errorf("%+v: times %v and %v", r.sambaJob, r.SecureSeconds, r.StandardSeconds)
		}
		// The set-up (the key generation, the first pulls) is a part of
		// the session, and the steps after it take time too.
		if r.SetupSeconds <= 0 || r.SetupSeconds >= r.SecureSeconds {
			t.Errorf("%+v: set-up %v s of a %v s session", r.sambaJob, r.SetupSeconds, r.SecureSeconds)
		}
		if r.Costs[samba.RoleComp].AESOps == 0 || r.Costs[samba.RoleOwner].PaillierOps != int64(r.K) {
			t.Errorf("%+v: costs %+v", r.sambaJob, r.Costs)
		}
	}
	holds := map[string]bool{}
	for _, c := range rep.Claims {
		holds[c.Text] = c.Holds
	}
	for _, text := range []string{
		"Theorem 2: SAMBA returns exactly the standard algorithm's cumulative reward",
		"Theorem 4: O(NK) AES-GCM operations, 2K encryptions and 2K decryptions per step and iteration",
		"Theorem 4: K Paillier encryptions and one decryption, whatever N",
		"Theorem 4: O(NK) messages, four lists of size K per step and iteration",
		"each data owner has an equal share",
	} {
		h, ok := holds[text]
		if !ok || !h {
			t.Errorf("claim %q: present %v, holds %v", text, ok, h)
		}
	}
	for _, f := range []string{"samba_runs.csv", "samba_roles.csv", "samba_summary.csv", "samba_reward.png", "samba_time_n.png",
		"samba_time_k.png", "samba_roles.png", "samba_results.md"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	f, err := os.Open(filepath.Join(out, "samba_roles.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+48*4 {
		t.Errorf("samba_roles.csv: %d rows, want a header and 4 roles × 48 runs", len(rows))
	}
	md, err := os.ReadFile(filepath.Join(out, "samba_results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## (a) Cumulative reward", "## (b) Time", "## (d) Per-role costs", "## The paper's claims about Figure 8", "exact 2/2"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("samba_results.md lacks %q", want)
		}
	}

	// The claims see a run that is not exact, or a count off by one.
	runs := append([]Session(nil), rep.Runs...)
	runs[3].Exact = false
	c := runs[5].Costs[samba.RoleComp]
	c.AESOps++
	costs := map[string]samba.RoleCost{}
	for k, v := range runs[5].Costs {
		costs[k] = v
	}
	costs[samba.RoleComp] = c
	runs[5].Costs = costs
	o := Options{Runs: 2, Budget: 60, Ks: []int{3, 5}}
	for _, cl := range sambaClaims(o, runs, summarizeSAMBA(runs)) {
		if strings.HasPrefix(cl.Text, "Theorem 2") || strings.HasPrefix(cl.Text, "Theorem 4: O(NK) AES-GCM") {
			if cl.Holds {
				t.Errorf("claim %q holds with a run spoiled", cl.Text)
			}
		}
	}
}

// TestRunSAMBAFile runs the experiment on a file of means.
func TestRunSAMBAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arms.txt")
	if err := os.WriteFile(path, []byte("# five arms\n0.1\n0.9\n0.5\n0.3\n0.7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, _ := runSmallSAMBA(t, path)
	if rep.Dataset != path {
		t.Errorf("dataset %q, want %q", rep.Dataset, path)
	}
	for _, r := range rep.Runs {
		if !r.Exact {
			t.Errorf("%+v: not exact", r.sambaJob)
		}
	}
}

// TestRunSAMBAOptions checks that bad options are errors naming the
// problem, before any session runs.
func TestRunSAMBAOptions(t *testing.T) {
	reg, err := protocol.NewRegistry(samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(bad, []byte("0.5\n0.2\nseven\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"runs", Options{Runs: -1}, "runs: -1 is negative"},
		{"budget", Options{Budget: -5}, "budget: -5 is negative"},
		{"workers", Options{Workers: -1}, "workers: -1 is negative"},
		{"K too large", Options{Ks: []int{10, 101}}, "K = 101: dataset movielens has 100 arms"},
		{"K too small", Options{Ks: []int{1}}, "K = 1: SAMBA takes 2 to"},
		{"budget not above K", Options{Ks: []int{10, 100}, Budget: 100}, "budget 100: must exceed the largest K, 100"},
		{"no file", Options{Dataset: filepath.Join(t.TempDir(), "none.txt")}, "no such file"},
		{"bad file", Options{Dataset: bad}, `line 3: "seven" is not a number`},
		{"paillier", Options{PaillierBits: 100}, "params.paillier_bits: 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			tt.o.Out = t.TempDir()
			_, err := Run(ctx, reg, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// TestLinearFit checks the least-squares line and its R².
func TestLinearFit(t *testing.T) {
	slope, r2 := linearFit([]float64{1, 2, 3}, []float64{3, 5, 7})
	if slope != 2 || math.Abs(r2-1) > 1e-12 {
		t.Errorf("slope %v, R² %v; want 2 and 1", slope, r2)
	}
	if _, r2 := linearFit([]float64{1, 2, 3}, []float64{1, 3, 1}); r2 != 0 {
		t.Errorf("R² %v for points with no trend, want 0", r2)
	}
}
