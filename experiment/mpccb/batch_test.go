package mpccb

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// linearData returns n unit-norm contexts of mpccbDims values and one-hot
// reward rows over arms: the arm whose random weights score x highest
// pays 1.
func linearData(n, arms int, seed uint64) ([][]float64, [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	w := make([][]float64, arms)
	for a := range w {
		w[a] = make([]float64, mpccbDims)
		for i := range w[a] {
			w[a][i] = rng.NormFloat64()
		}
	}
	xs, rs := make([][]float64, n), make([][]float64, n)
	for t := range n {
		x := make([]float64, mpccbDims)
		var nn float64
		for i := range x {
			x[i] = rng.NormFloat64()
			nn += x[i] * x[i]
		}
		for i := range x {
			x[i] /= math.Sqrt(nn)
		}
		best, bs := 0, math.Inf(-1)
		for a := range arms {
			var s float64
			for i := range x {
				s += w[a][i] * x[i]
			}
			if s > bs {
				best, bs = a, s
			}
		}
		xs[t], rs[t] = x, make([]float64, arms)
		rs[t][best] = 1
	}
	return xs, rs
}

// TestBatchesPrice: the batch comparison's sequential runs are the
// experiment's reference replay (referenceCurve, through Reference.Step),
// its regret is the rewards missed, batches of 50 change the arms, and the
// files are written.
func TestBatchesPrice(t *testing.T) {
	if batchEpsilon != mpccb.DefaultParams().Epsilon {
		t.Fatalf("the batches' ε %v is not the protocol's default %v", batchEpsilon, mpccb.DefaultParams().Epsilon)
	}
	const steps = 600
	xs, rs := linearData(steps, 10, 4)
	o := Options{Out: t.TempDir(), Steps: steps, Runs: 2, Seed: 3, Workers: 2, Batches: []int{50, 1, 7}}
	runs, err := runBatches(context.Background(), o, xs, rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3*2 {
		t.Fatalf("%d runs, want 3 sizes × 2 runs", len(runs))
	}
	byKey := map[[2]int]batchRun{}
	for _, r := range runs {
		byKey[[2]int{r.batch, r.run}] = r
		if r.regret != steps-r.reward {
			t.Errorf("batch %d run %d: regret %v with reward %v over %d one-hot steps", r.batch, r.run, r.regret, r.reward, steps)
		}
	}
	for run := range 2 {
		curve, err := referenceCurve(batchEpsilon, o.Seed+int64(run), 2, xs, rs, []int64{steps})
		if err != nil {
			t.Fatal(err)
		}
		if got := byKey[[2]int{1, run}].reward / steps; got != curve[0] {
			t.Errorf("run %d: B = 1 averages %v, the sequential reference replay %v", run, got, curve[0])
		}
		if byKey[[2]int{50, run}].reward == byKey[[2]int{1, run}].reward {
			t.Errorf("run %d: B = 50 earned exactly the sequential reward %v: are batches applied?", run, byKey[[2]int{1, run}].reward)
		}
	}
	files, err := writeBatches(context.Background(), o, xs, rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"mpccb_batch.csv", "mpccb_batch_summary.csv", "mpccb_batch_regret.png", "mpccb_batch_results.md"} {
		found := false
		for _, f := range files {
			found = found || filepath.Base(f) == name
		}
		if _, err := os.Stat(filepath.Join(o.Out, name)); err != nil || !found {
			t.Errorf("%s: not written or not listed (%v)", name, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(o.Out, "mpccb_batch_results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "| B = 1 | B = 7 | B = 50 |") {
		t.Errorf("the results table does not have one column per batch size, in order:\n%s", md)
	}
}

// TestCheckBatches: sizes outside [1, MaxBatch] or above the steps are
// refused, naming the batch.
func TestCheckBatches(t *testing.T) {
	for _, c := range []struct {
		bs    []int
		steps int64
		ok    bool
	}{
		{[]int{10, 100, 1000}, 10000, true},
		{[]int{0}, 100, false},
		{[]int{200}, 100, false},
		{[]int{MaxBatch + 1}, 60000, false},
	} {
		err := checkBatches(c.bs, c.steps)
		if (err == nil) != c.ok {
			t.Errorf("checkBatches(%v, %d) = %v, want ok %v", c.bs, c.steps, err, c.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "batch ") {
			t.Errorf("checkBatches(%v): %q does not name the batch", c.bs, err)
		}
	}
}
