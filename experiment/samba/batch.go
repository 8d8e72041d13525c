package samba

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

	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
)

// The price of batches (params.batch): the regret of every algorithm run
// in batches of B steps, each decided from the state at the batch's
// start (t included), against the sequential algorithm (B = 1), at the largest K and
// the budget N. The runs are samba.Reference with params.batch — the
// plaintext batched algorithm, which a secure batched session equals
// step for step (Theorem 2, batched: protocol/samba's TestTheorem2Batched
// and `simulate`'s same_arm_sequence) — so the grid costs seconds, not the
// hours of as many secure sessions.

// checkBatches validates the --batch list against the budget.
func checkBatches(bs []int, budget int64) error {
	for _, b := range bs {
		if b < 1 || b > samba.MaxBatch || int64(b) > budget {
			return fmt.Errorf("samba experiment: batch %d: each batch size must be in [1, %d] and at most the budget %d", b, samba.MaxBatch, budget)
		}
	}
	return nil
}

// batchRun is one run of the batched reference.
type batchRun struct {
	alg           string
	batch, run    int
	seed          int64
	reward        int64
	regret        float64 // Σ_t (μ* − μ_{a_t}), the pseudo-regret
	bestArmPulled int64
}

// runBatches runs every algorithm at every batch size, o.Runs runs each,
// on the kmax best arms over the budget.
func runBatches(o Options, data sambaDataset) ([]batchRun, error) {
	kmax := o.Ks[len(o.Ks)-1]
	means := data.Means[:kmax]
	best := slices.Max(means)
	type job struct {
		alg   string
		batch int
		run   int
		p     samba.Params
	}
	var jobs []job
	for _, alg := range sambaAlgorithms() {
		for _, b := range experiment.BatchSizes(o.Batches) {
			raw := sambaParams(alg, o.Budget, o.PaillierBits, data.Tuning.Tuning)
			raw["batch"] = int64(b)
			if b > 1 && o.BatchGrowth > 1 {
				// B the first batch of a growing schedule; the baseline
				// B = 1 stays the sequential algorithm.
				raw["batch_growth"] = o.BatchGrowth
			}
			p, err := (samba.Family{}).ParseParams(raw)
			if err != nil {
				return nil, fmt.Errorf("samba experiment: %s, batch %d: %w", alg, b, err)
			}
			for r := range o.Runs {
				jobs = append(jobs, job{alg, b, r, p.(samba.Params)})
			}
		}
	}
	out := make([]batchRun, len(jobs))
	err := experiment.Parallel(context.Background(), len(jobs), max(o.Workers, 1), func(i int) error {
		j := jobs[i]
		seed := o.Seed + int64(j.run)
		reward, seq, err := samba.Reference(j.p, means, seed)
		if err != nil {
			return fmt.Errorf("samba experiment: %s, batch %d, run %d: %w", j.alg, j.batch, j.run, err)
		}
		br := batchRun{alg: j.alg, batch: j.batch, run: j.run, seed: seed, reward: reward}
		for _, a := range seq {
			br.regret += best - means[a]
			if means[a] == best {
				br.bestArmPulled++
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

// writeBatches writes samba_batch.csv (one row per run),
// samba_batch_summary.csv (one row per algorithm and batch size) and the
// figure samba_batch_regret, and returns the files, the markdown section
// of samba_results.md and how many batched references it ran.
func writeBatches(o Options, data sambaDataset) ([]string, string, int, error) {
	runs, err := runBatches(o, data)
	if err != nil {
		return nil, "", 0, err
	}
	var rows [][]string
	type key struct {
		alg   string
		batch int
	}
	regrets := map[key][]float64{}
	rewards := map[key][]float64{}
	for _, r := range runs {
		rows = append(rows, []string{r.alg, strconv.Itoa(r.batch), strconv.Itoa(r.run), fmt.Sprint(r.seed), fmt.Sprint(r.reward),
			fmt.Sprintf("%.2f", r.regret), fmt.Sprint(r.bestArmPulled)})
		k := key{r.alg, r.batch}
		regrets[k] = append(regrets[k], r.regret)
		rewards[k] = append(rewards[k], float64(r.reward))
	}
	var files []string
	path := filepath.Join(o.Out, "samba_batch.csv")
	if err := experiment.WriteCSV(path, []string{"algorithm", "batch", "run", "seed", "reward", "regret", "best_arm_pulls"}, rows); err != nil {
		return nil, "", 0, err
	}
	files = append(files, path)
	sizes := experiment.BatchSizes(o.Batches)
	var sumRows [][]string
	for _, alg := range sambaAlgorithms() {
		base := experiment.Summarize(regrets[key{alg, 1}])
		for _, b := range sizes {
			s := experiment.Summarize(regrets[key{alg, b}])
			w := experiment.Summarize(rewards[key{alg, b}])
			sumRows = append(sumRows, []string{alg, strconv.Itoa(b), strconv.Itoa(s.N), fmt.Sprintf("%.1f", s.Mean), fmt.Sprintf("%.1f", s.Low),
				fmt.Sprintf("%.1f", s.High), fmt.Sprintf("%.3f", ratio(s.Mean, base.Mean)), fmt.Sprintf("%.1f", w.Mean)})
		}
	}
	path = filepath.Join(o.Out, "samba_batch_summary.csv")
	if err := experiment.WriteCSV(path, []string{"algorithm", "batch", "runs", "regret_mean", "regret_ci_low", "regret_ci_high", "regret_ratio_to_sequential", "reward_mean"}, sumRows); err != nil {
		return nil, "", 0, err
	}
	files = append(files, path)

	fig := experiment.NewFigure("batch", "regret")
	kmax := o.Ks[len(o.Ks)-1]
	fig.Title.Text = fmt.Sprintf("Regret against the batch size B, K = %d, N = %d (%s)", kmax, o.Budget, data.Name)
	fig.X.Label.Text = "batch size B (decisions a round; 1 = sequential)"
	fig.Y.Label.Text = "regret Σ (μ* − μ_a) (mean, 95 % interval)"
	fig.X.Scale, fig.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{}
	fig.Legend.Top, fig.Legend.Left = true, true
	for i, alg := range sambaAlgorithms() {
		pts := make(plotter.XYs, len(sizes))
		lo, hi := make([]float64, len(sizes)), make([]float64, len(sizes))
		for j, b := range sizes {
			s := experiment.Summarize(regrets[key{alg, b}])
			pts[j] = plotter.XY{X: float64(b), Y: s.Mean}
			lo[j], hi[j] = s.Low, s.High
		}
		thumbs, err := fig.AddSeries(alg, pts, lo, hi, true, plotutil.Color(i), plotutil.Shape(i))
		if err != nil {
			return nil, "", 0, err
		}
		fig.Legend.Add(alg, thumbs...)
	}
	fig.Add(plotter.NewGrid())
	figs, err := fig.Save(filepath.Join(o.Out, "samba_batch_regret"))
	if err != nil {
		return nil, "", 0, err
	}
	files = append(files, figs...)

	var b strings.Builder
	fmt.Fprintf(&b, "\n## (e) The price of batches: regret against the batch size B, K = %d, N = %d\n\n", kmax, o.Budget)
	b.WriteString("With `params.batch = B` one protocol round serves B decisions, all made from the state at the " +
		"batch's start, t included (the data owners' s_i and n_i, and the batch's first step as the t of UCB's ln t and " +
		"ε-decreasing's ε_t; masks, coins and Thompson's draws stay each step's own); the rewards update the variables at its end. Regret is Σ_t (μ* − μ_{a_t}) over the N pulls, on the dataset's means; " +
		"mean over runs ± 95 % interval, and in brackets its ratio to the sequential algorithm's (B = 1). The runs are " +
		"`samba.Reference` with `params.batch`, the plaintext batched algorithm, which a secure batched session equals arm for " +
		"arm (Theorem 2, batched; tested in protocol/samba and reported by `simulate`'s `same_arm_sequence`).\n\n")
	if o.BatchGrowth > 1 {
		fmt.Fprintf(&b, "**A geometric schedule** (`params.batch_growth = %g`): every B > 1 is the first batch's size, each batch %g times the last, at most %d steps; B = 1 is the sequential algorithm.\n\n",
			o.BatchGrowth, o.BatchGrowth, samba.MaxBatch)
	}
	experiment.WriteTableHead(&b, []string{"algorithm"}, "B = %d", sizes)
	for _, alg := range sambaAlgorithms() {
		base := experiment.Summarize(regrets[key{alg, 1}])
		fmt.Fprintf(&b, "| %s |", alg)
		for _, sz := range sizes {
			s := experiment.Summarize(regrets[key{alg, sz}])
			fmt.Fprintf(&b, " %.0f ± %.0f (×%.2f) |", s.Mean, s.High-s.Mean, ratio(s.Mean, base.Mean))
		}
		b.WriteString("\n")
	}
	b.WriteString("\nFiles: `samba_batch.csv` (one row per run), `samba_batch_summary.csv`, `samba_batch_regret.png`.\n")
	return files, b.String(), len(runs), nil
}

// runBatchOnly is Run with Options.BatchOnly: the batches' comparison
// alone, written with a results file of its own.
func runBatchOnly(o Options, data sambaDataset) (*Report, error) {
	if len(o.Batches) == 0 {
		return nil, fmt.Errorf("samba experiment: batch-only names no batch size")
	}
	if !o.Shard.Whole() {
		return nil, fmt.Errorf("samba experiment: batch-only runs whole, not in shards")
	}
	start := time.Now()
	files, section, n, err := writeBatches(o, data)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# SAMBA in batches (%s, %d runs per point)\n\n", data.Name, o.Runs)
	if o.Command != "" {
		fmt.Fprintf(&b, "Command: `%s`. ", o.Command)
	}
	elapsed := time.Since(start)
	if o.stamp != nil {
		elapsed = 0
	}
	fmt.Fprintf(&b, "%v wall time on %d workers, GOMAXPROCS %d, %s/%s", elapsed.Round(time.Millisecond), max(o.Workers, 1), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	if rev := experiment.BuildRevision(); rev != "" {
		fmt.Fprintf(&b, ", build %s", rev)
	}
	b.WriteString(". Parameters: " + data.Tuning.describe() + ".\n")
	b.WriteString(section)
	path := filepath.Join(o.Out, "samba_batch_results.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return &Report{Dataset: data.Name, Elapsed: elapsed, BatchRuns: n, Files: append(files, path)}, nil
}

// ratio is a/b, or NaN when b is zero.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
