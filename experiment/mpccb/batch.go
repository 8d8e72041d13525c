package mpccb

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// The price of batches: the regret of the ε-greedy linear contextual
// bandit run in batches of B steps — every context of a batch scored with
// the model at the batch's start, the model updated once at its end with
// the batch's (context, arm, reward) triples (mpccb.Reference.StepBatch) —
// against the sequential algorithm (B = 1), on the first Steps
// Fashion-MNIST images, each run on the dealer samples of the reward
// runs' seed (dealerSampler). The runs are the plaintext batched
// algorithm: seconds, not the hours of as many secure sessions.

// batchEpsilon is the batches' ε: the protocol's default
// (mpccb.DefaultParams; TestBatchesPrice holds the two together).
const batchEpsilon = 0.1

// MaxBatch bounds a batch size of the comparison.
const MaxBatch = 10_000

// checkBatches validates the batch sizes against the steps.
func checkBatches(bs []int, steps int64) error {
	for _, b := range bs {
		if b < 1 || b > MaxBatch || int64(b) > steps {
			return fmt.Errorf("batch %d: each batch size must be in [1, %d] and at most the steps %d", b, MaxBatch, steps)
		}
	}
	return nil
}

// batchRun is one run of the batched reference.
type batchRun struct {
	batch, run int
	seed       int64
	reward     float64 // Σ_t r_t
	regret     float64 // Σ_t (max_a r_{t,a} − r_t): against the best arm of each context
}

// runBatches runs the batched reference at every batch size, o.Runs runs
// each, on contexts and rewards.
func runBatches(ctx context.Context, o Options, contexts, rewards [][]float64) ([]batchRun, error) {
	type job struct{ batch, run int }
	var jobs []job
	for _, b := range experiment.BatchSizes(o.Batches) {
		for r := range o.Runs {
			jobs = append(jobs, job{b, r})
		}
	}
	p := mpccb.DefaultParams()
	p.Epsilon, p.Arms, p.Dimensions, p.PrecisionBits, p.ReciprocalIterations = batchEpsilon, len(rewards[0]), mpccbDims, mpccbPrecision, mpccbIters
	out := make([]batchRun, len(jobs))
	err := experiment.Parallel(ctx, len(jobs), max(o.Workers, 1), func(i int) error {
		j := jobs[i]
		seed := o.Seed + int64(j.run)
		sampler, err := dealerSampler(seed, 2)
		if err != nil {
			return fmt.Errorf("batch %d, run %d: %w", j.batch, j.run, err)
		}
		ref := mpccb.NewReference(p, sampler)
		br := batchRun{batch: j.batch, run: j.run, seed: seed}
		for s := 0; s < int(o.Steps); s += j.batch {
			e := min(s+j.batch, int(o.Steps))
			_, got := ref.StepBatch(contexts[s:e], rewards[s:e])
			for k, r := range got {
				br.reward += r
				br.regret += slices.Max(rewards[s+k]) - r
			}
		}
		out[i] = br
		return nil
	}, func(int, int) {})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// writeBatches runs the comparison and writes mpccb_batch.csv (one row per
// run), mpccb_batch_summary.csv (one row per batch size), the figure
// mpccb_batch_regret and mpccb_batch_results.md, and returns the files.
func writeBatches(ctx context.Context, o Options, contexts, rewards [][]float64) ([]string, error) {
	start := time.Now()
	runs, err := runBatches(ctx, o, contexts, rewards)
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if o.stamp != nil {
		elapsed = 0
	}
	regrets := map[int][]float64{}
	avg := map[int][]float64{}
	var rows [][]string
	for _, r := range runs {
		rows = append(rows, []string{strconv.Itoa(r.batch), strconv.Itoa(r.run), fmt.Sprint(r.seed), fmt.Sprint(r.reward),
			fmt.Sprintf("%.0f", r.regret), fmt.Sprintf("%.6f", r.reward/float64(o.Steps))})
		regrets[r.batch] = append(regrets[r.batch], r.regret)
		avg[r.batch] = append(avg[r.batch], r.reward/float64(o.Steps))
	}
	var files []string
	path := filepath.Join(o.Out, "mpccb_batch.csv")
	if err := experiment.WriteCSV(path, []string{"batch", "run", "seed", "reward", "regret", "average_reward"}, rows); err != nil {
		return nil, err
	}
	files = append(files, path)
	sizes := experiment.BatchSizes(o.Batches)
	base := experiment.Summarize(regrets[1])
	var sumRows [][]string
	for _, b := range sizes {
		s, w := experiment.Summarize(regrets[b]), experiment.Summarize(avg[b])
		sumRows = append(sumRows, []string{strconv.Itoa(b), strconv.Itoa(s.N), fmt.Sprintf("%.1f", s.Mean), fmt.Sprintf("%.1f", s.Low),
			fmt.Sprintf("%.1f", s.High), fmt.Sprintf("%.4f", ratio(s.Mean, base.Mean)), fmt.Sprintf("%.6f", w.Mean)})
	}
	path = filepath.Join(o.Out, "mpccb_batch_summary.csv")
	if err := experiment.WriteCSV(path, []string{"batch", "runs", "regret_mean", "regret_ci_low", "regret_ci_high", "regret_ratio_to_sequential", "average_reward_mean"}, sumRows); err != nil {
		return nil, err
	}
	files = append(files, path)

	fig := experiment.NewFigure("batch", "regret")
	fig.Title.Text = fmt.Sprintf("Regret against the batch size B, Fashion-MNIST, T = %d, ε = %g", o.Steps, batchEpsilon)
	fig.X.Label.Text = "batch size B (decisions per model update; 1 = sequential)"
	fig.Y.Label.Text = "regret Σ (max_a r_a − r_t) (mean, 95 % interval)"
	fig.X.Scale, fig.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	pts := make(plotter.XYs, len(sizes))
	lo, hi := make([]float64, len(sizes)), make([]float64, len(sizes))
	for j, b := range sizes {
		s := experiment.Summarize(regrets[b])
		pts[j] = plotter.XY{X: float64(b), Y: s.Mean}
		lo[j], hi[j] = s.Low, s.High
	}
	if _, err := fig.AddSeries("ε-greedy", pts, lo, hi, true, plotutil.Color(0), plotutil.Shape(0)); err != nil {
		return nil, err
	}
	fig.Add(plotter.NewGrid())
	figs, err := fig.Save(filepath.Join(o.Out, "mpccb_batch_regret"))
	if err != nil {
		return nil, err
	}
	files = append(files, figs...)

	var b strings.Builder
	fmt.Fprintf(&b, "# The contextual bandit in batches (Fashion-MNIST, T = %d, %d runs per point)\n\n", o.Steps, o.Runs)
	if o.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`. ", o.Command)
	}
	fmt.Fprintf(&b, "%v wall time on %d workers, GOMAXPROCS %d, %s/%s", elapsed.Round(time.Millisecond), max(o.Workers, 1), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	if rev := experiment.BuildRevision(); rev != "" {
		fmt.Fprintf(&b, ", build %s", rev)
	}
	fmt.Fprintf(&b, ". Parameters: ε = %g, |A| = 10, D = %d (PCA), L = %d, the first %d training images (data seed 1); run r uses the dealer samples of seed %d + r with P = 2, as the reward runs do.\n\n",
		batchEpsilon, mpccbDims, mpccbPrecision, o.Steps, o.Seed)
	b.WriteString("In a batch of B steps every context is scored with the model (W_a⁻¹, b_a) at the batch's start, each step " +
		"drawing its own exploration coin, exploring arm and tie-breaking permutation; the model takes the batch's B " +
		"(context, arm, reward) triples at its end, in the batch's order (Sherman–Morrison, as the sequential algorithm). " +
		"Regret is Σ_t (max_a r_{t,a} − r_t) over the T steps: against the correct class of every image. Mean over runs " +
		"± 95 % interval, and in brackets its ratio to the sequential algorithm's (B = 1). The runs are " +
		"`mpccb.Reference.StepBatch`, the plaintext batched algorithm in float64; the secure protocol does not run in " +
		"batches yet (no `params.batch`), so these are the price a batched protocol built to equal it would pay.\n\n")
	experiment.WriteTableHead(&b, []string{"ε"}, "B = %d", sizes)
	fmt.Fprintf(&b, "| %g |", batchEpsilon)
	for _, sz := range sizes {
		s := experiment.Summarize(regrets[sz])
		fmt.Fprintf(&b, " %.0f ± %.0f (×%.3f) |", s.Mean, s.High-s.Mean, ratio(s.Mean, base.Mean))
	}
	b.WriteString("\n\nAverage reward: ")
	for i, sz := range sizes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "B = %d %.4f", sz, experiment.Summarize(avg[sz]).Mean)
	}
	b.WriteString(".\n\nFiles: `mpccb_batch.csv` (one row per run), `mpccb_batch_summary.csv`, `mpccb_batch_regret.png` (and SVG, PDF).\n")
	path = filepath.Join(o.Out, "mpccb_batch_results.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, path), nil
}

// ratio is a/b, or NaN when b is zero.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
