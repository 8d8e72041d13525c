package bai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Options configure the multi-agent best-arm identification experiment.
type Options struct {
	// Out is the directory the CSV files, figures and written results go to.
	Out string
	// Runs is the number of runs per point (0: the default, 10; negative
	// is an error).
	Runs int
	// Agents are the values of N, each at least 1 (default 64, 128, 256,
	// 512, 1024).
	Agents []int
	// Problem is the paper's Problem 1 (Bernoulli) or 2 (Gaussian); 0 is 1.
	Problem int
	// Workers run simulations in parallel (0: the number of CPUs; negative
	// is an error).
	Workers int
	// Seed is the first seed; run r of every point uses Seed+r, so every
	// series sees the same random environments (common random numbers).
	Seed int64
	// Progress receives one line per finished run; nil for none.
	Progress io.Writer
	// Shard, unless zero, runs only that slice of the grid's sessions and
	// writes a partial output (experiment.PartialFile and no figures or
	// results) for Merge to combine with the other shards'.
	Shard experiment.Shard

	// stamp, set only by tests, replaces the time each session measured
	// by a function of the session and makes the elapsed time zero: a
	// deterministic clock, so that two executions write the same bytes.
	stamp func(*Session)
}

// Problems of the paper's Appendix C.1.
var (
	Problem1 = []float64{0.7, 0.5, 0.3, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}
	Problem2 = []float64{11, 10.8, 10.4, 10.4, 10.4, 10.4, 10.4, 10.4, 10.4, 10.4}
)

// baiSeries is one curve: an algorithm with its parameters and an agent
// distribution, in one or more figures.
type baiSeries struct {
	Figures      []string
	Name         string
	Algorithm    string
	Params       map[string]any
	Distribution string
}

func baiGrid() []baiSeries {
	var s []baiSeries
	for _, eps := range []float64{0.05, 0.1, 0.25} {
		figs := []string{"fig1_dp_mase"}
		if eps == 0.1 {
			figs = append(figs, "fig6_dp_mase")
		}
		s = append(s, baiSeries{Figures: figs, Name: fmt.Sprintf("DP-MASE ε=%v", eps), Algorithm: bai.AlgDPMASE,
			Params: map[string]any{"epsilon": eps, "beta": 0.5}, Distribution: "uniform"})
	}
	for _, xi := range []float64{0, 0.05, 0.1} {
		figs := []string{"fig1_corrupted"}
		if xi == 0.05 {
			figs = append(figs, "fig6_corrupted")
		}
		s = append(s, baiSeries{Figures: figs, Name: fmt.Sprintf("Corrupted ξ=%v", xi), Algorithm: bai.AlgCorrupted,
			Params: map[string]any{"eta": 0.9, "xi": xi}, Distribution: "uniform"})
	}
	s = append(s,
		baiSeries{Figures: []string{"fig1_dp_mase", "fig1_corrupted"}, Name: "CENTRAL", Algorithm: bai.AlgCentral, Params: map[string]any{}, Distribution: "uniform"},
		baiSeries{Figures: []string{"fig1_dp_mase", "fig1_corrupted"}, Name: "INDEPENDENT", Algorithm: bai.AlgIndependent, Params: map[string]any{}, Distribution: "uniform"})
	for _, beta := range []float64{0.3, 0.5, 0.8} {
		s = append(s, baiSeries{Figures: []string{"fig5_beta"}, Name: fmt.Sprintf("DP-MASE ε=0.5 β=%v", beta), Algorithm: bai.AlgDPMASE,
			Params: map[string]any{"epsilon": 0.5, "beta": beta}, Distribution: "uniform"})
	}
	s = append(s,
		baiSeries{Figures: []string{"fig6_dp_mase"}, Name: "DP-MASE ε=0.1 unbalanced", Algorithm: bai.AlgDPMASE,
			Params: map[string]any{"epsilon": 0.1, "beta": 0.5}, Distribution: "power"},
		baiSeries{Figures: []string{"fig6_corrupted"}, Name: "Corrupted ξ=0.05 unbalanced", Algorithm: bai.AlgCorrupted,
			Params: map[string]any{"eta": 0.9, "xi": 0.05}, Distribution: "power"})
	return s
}

// Session is one simulated session of the experiment.
type Session struct {
	Series           string
	Agents           int
	Run              int
	Seed             int64
	SampleComplexity int64
	Correct          bool
	Answered         bool
	Elapsed          time.Duration
}

// Report is what the experiment produced.
type Report struct {
	Runs    []Session
	Elapsed time.Duration
	Claims  []experiment.Claim
	Files   []string
}

// Run runs the grid of Figures 1, 5 and 6 of the BAI paper, writes
// DIR/bai_runs.csv, DIR/bai_summary.csv, the figures and DIR/bai_results.md.
func Run(ctx context.Context, reg *protocol.Registry, o Options) (*Report, error) {
	if o.Runs < 0 {
		return nil, fmt.Errorf("bai experiment: runs: %d is negative (0 for the default, 10)", o.Runs)
	}
	if o.Workers < 0 {
		return nil, fmt.Errorf("bai experiment: workers: %d is negative (0 for the number of CPUs)", o.Workers)
	}
	for _, n := range o.Agents {
		if n < 1 {
			return nil, fmt.Errorf("bai experiment: agents: %d is not a number of agents (at least 1)", n)
		}
	}
	if o.Runs == 0 {
		o.Runs = 10
	}
	if len(o.Agents) == 0 {
		o.Agents = []int{64, 128, 256, 512, 1024}
	}
	if o.Problem == 0 {
		o.Problem = 1
	}
	if o.Problem != 1 && o.Problem != 2 {
		return nil, fmt.Errorf("problem %d: the paper has problems 1 and 2", o.Problem)
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	grid := baiGrid()
	if err := checkBAIGrid(grid, o); err != nil {
		return nil, err
	}
	type job struct {
		s    baiSeries
		n, r int
	}
	var jobs []job
	for _, s := range grid {
		for _, n := range o.Agents {
			for r := range o.Runs {
				jobs = append(jobs, job{s, n, r})
			}
		}
	}
	if err := o.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("bai experiment: %w", err)
	}
	idx := o.Shard.Jobs(len(jobs))
	start := time.Now()
	results := make([]Session, len(idx))
	err := experiment.Parallel(ctx, len(idx), o.Workers, func(i int) error {
		j := jobs[idx[i]]
		run, err := simulateBAI(ctx, reg, j.s, j.n, j.r, o)
		if err != nil {
			return fmt.Errorf("%s, N = %d, run %d: %w", j.s.Name, j.n, j.r, err)
		}
		if o.stamp != nil {
			o.stamp(&run)
		}
		results[i] = run
		return nil
	}, func(i, done int) {
		if o.Progress != nil {
			j, run := jobs[idx[i]], results[i]
			fmt.Fprintf(o.Progress, "[%d/%d] %-30s N=%-5d run %-2d %9d steps  correct=%v  %v\n", done, len(idx),
				j.s.Name, j.n, j.r, run.SampleComplexity, run.Correct, run.Elapsed.Round(time.Millisecond))
		}
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{Runs: results, Elapsed: time.Since(start)}
	if o.stamp != nil {
		rep.Elapsed = 0
	}
	if !o.Shard.Whole() {
		p, err := experiment.NewPartial(Experiment, baiGridOptions{Runs: o.Runs, Agents: o.Agents, Problem: o.Problem, Seed: o.Seed}, o.Shard, len(jobs))
		if err != nil {
			return nil, err
		}
		p.Workers, p.ElapsedSeconds, p.LoadAverage = o.Workers, rep.Elapsed.Seconds(), experiment.LoadAverage()
		for i, r := range results {
			if err := p.Add(idx[i], r); err != nil {
				return nil, err
			}
		}
		path, err := p.Write(o.Out)
		if err != nil {
			return nil, err
		}
		rep.Files = []string{path}
		return rep, nil
	}
	if err := renderBAI(o, grid, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// renderBAI checks the claims on rep.Runs and writes the files, as Run and
// Merge do alike.
func renderBAI(o Options, grid []baiSeries, rep *Report) error {
	sum := summarizeBAI(grid, rep.Runs, o.Agents)
	rep.Claims = baiClaims(sum, o.Agents)
	files, err := writeBAI(o, grid, rep.Runs, sum, rep)
	if err != nil {
		return err
	}
	rep.Files = files
	return nil
}

// Experiment is this experiment's name in partial outputs and manifests.
const Experiment = "bai"

// baiGridOptions are the options that define the grid, as Run resolved
// them: all but the output, the workers and the progress.
type baiGridOptions struct {
	Runs    int   `json:"runs"`
	Agents  []int `json:"agents"`
	Problem int   `json:"problem"`
	Seed    int64 `json:"seed"`
}

// Merge writes into out, from the shards' partial outputs m (read by
// experiment.ReadPartials), what the unsharded run writes: the same CSV
// files, figures and results. The results name the shards' workers
// summed and the sum of their elapsed times.
func Merge(m *experiment.Merged, out string) (*Report, error) {
	if m.Experiment != Experiment {
		return nil, fmt.Errorf("bai merge: the partials are of experiment %q", m.Experiment)
	}
	var g baiGridOptions
	if err := json.Unmarshal(m.Grid, &g); err != nil {
		return nil, fmt.Errorf("bai merge: the grid's options: %w", err)
	}
	runs, err := experiment.Decode[Session](m)
	if err != nil {
		return nil, err
	}
	o := Options{Out: out, Runs: g.Runs, Agents: g.Agents, Problem: g.Problem, Seed: g.Seed, Workers: m.Workers}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	rep := &Report{Runs: runs, Elapsed: m.Elapsed}
	if err := renderBAI(o, baiGrid(), rep); err != nil {
		return nil, err
	}
	return rep, nil
}

func simulateBAI(ctx context.Context, reg *protocol.Registry, s baiSeries, n, r int, o Options) (Session, error) {
	seed := o.Seed + int64(r)
	spec := baiSpec(s, n, seed, o)
	t0 := time.Now()
	res, err := sim.Run(ctx, reg, spec, sim.Options{})
	if err != nil {
		return Session{}, err
	}
	out := res.Result.(*bai.Result)
	run := Session{Series: s.Name, Agents: n, Run: r, Seed: seed, SampleComplexity: out.SampleComplexity,
		Answered: out.BestArm != nil, Elapsed: time.Since(t0)}
	run.Correct = out.Correct != nil && *out.Correct
	return run, nil
}

// checkBAIGrid checks every series of the grid at every N before any run:
// the params, and that N agents can work the algorithm (they must be able to
// outvote its threshold), so that a grid that cannot finish fails at once
// with the reason rather than after hours of other runs.
func checkBAIGrid(grid []baiSeries, o Options) error {
	f := bai.Family{}
	for _, s := range grid {
		for _, n := range o.Agents {
			spec := baiSpec(s, n, o.Seed, o)
			params, err := f.ParseParams(spec.Params)
			if err != nil {
				return fmt.Errorf("bai experiment: %s: %w", s.Name, err)
			}
			delete(spec.Simulation, "seed") // the simulator's key, not the family's
			if _, err := f.PrepareSimulation(spec.Simulation, protocol.Assignment{}, params); err != nil {
				return fmt.Errorf("bai experiment: %s with N = %d agents: %w", s.Name, n, err)
			}
		}
	}
	return nil
}

// baiSpec is the simulation spec of one run of series s with n agents.
func baiSpec(s baiSeries, n int, seed int64, o Options) *protocol.Spec {
	params := map[string]any{"algorithm": s.Algorithm, "delta": 0.05}
	for k, v := range s.Params {
		params[k] = v
	}
	arms, reward := Problem1, bai.RewardBernoulli
	if o.Problem == 2 {
		// Gaussian rewards (σ = 0.5, see bai.DefaultSigma) taken from the unit
		// window [10.2, 11.2], clamped: a shift only, so the radii written for
		// rewards in [0, 1] hold for σ = 0.5 and DP-MASE's sensitivity stays
		// 1/R(e). Clamping narrows the gaps a little (0.2 → 0.16, 0.6 → 0.48).
		arms, reward = Problem2, bai.RewardGaussian
		params["reward_min"], params["reward_max"] = 10.2, 11.2
	}
	armsAny := make([]any, len(arms))
	for i, a := range arms {
		armsAny[i] = a
	}
	sim := map[string]any{"agents": int64(n), "arms": armsAny, "reward": reward, "agent_distribution": s.Distribution, "seed": seed}
	if s.Distribution == "power" {
		sim["gamma"], sim["alpha"] = 0.8, 0.0
	}
	return &protocol.Spec{Protocol: bai.Name, Params: params, Simulation: sim}
}

// baiPoint is the summary of one series at one N.
type baiPoint struct {
	experiment.Summary
	Accuracy float64
}

func summarizeBAI(grid []baiSeries, runs []Session, agents []int) map[string]map[int]baiPoint {
	by := map[string]map[int][]Session{}
	for _, r := range runs {
		if by[r.Series] == nil {
			by[r.Series] = map[int][]Session{}
		}
		by[r.Series][r.Agents] = append(by[r.Series][r.Agents], r)
	}
	out := map[string]map[int]baiPoint{}
	for _, s := range grid {
		out[s.Name] = map[int]baiPoint{}
		for _, n := range agents {
			rs := by[s.Name][n]
			xs := make([]float64, len(rs))
			correct := 0
			for i, r := range rs {
				xs[i] = float64(r.SampleComplexity)
				if r.Correct {
					correct++
				}
			}
			out[s.Name][n] = baiPoint{Summary: experiment.Summarize(xs), Accuracy: float64(correct) / float64(max(1, len(rs)))}
		}
	}
	return out
}

// baiClaims checks the paper's claims on the runs. A claim that one
// series needs more samples than another holds only where their 95 %
// intervals do not overlap (experiment.Compare); where they overlap, or
// with a single run, it is not resolved — unless another N refutes it.
func baiClaims(sum map[string]map[int]baiPoint, agents []int) []experiment.Claim {
	// verdict is one comparison's: holds, and whether the runs resolve it.
	type verdict struct{ holds, resolved bool }
	gt := func(a, b string, n int) verdict {
		h, r := experiment.Ordered(sum[a][n].Summary, sum[b][n].Summary)
		return verdict{h, r}
	}
	// all is the verdict of every one of vs: refuted by any refuted one,
	// held when all hold, else not resolved.
	all := func(vs ...verdict) verdict {
		out := verdict{true, true}
		for _, v := range vs {
			if v.resolved && !v.holds {
				return v
			}
			if !v.resolved {
				out = verdict{false, false}
			}
		}
		return out
	}
	check := func(text string, ok func(n int) verdict) experiment.Claim {
		var bad, open []string
		for _, n := range agents {
			switch v := ok(n); {
			case v.resolved && !v.holds:
				bad = append(bad, strconv.Itoa(n))
			case !v.resolved:
				open = append(open, strconv.Itoa(n))
			}
		}
		c := experiment.Claim{Text: text, Holds: len(bad) == 0 && len(open) == 0, Unresolved: len(bad) == 0 && len(open) > 0}
		switch {
		case len(bad) > 0:
			c.Note = "not at N = " + strings.Join(bad, ", ")
		case len(open) > 0:
			c.Note = "within the runs' noise at N = " + strings.Join(open, ", ")
		}
		return c
	}
	private := []string{"DP-MASE ε=0.05", "DP-MASE ε=0.1", "DP-MASE ε=0.25", "Corrupted ξ=0", "Corrupted ξ=0.05", "Corrupted ξ=0.1"}
	claims := []experiment.Claim{
		check("Corrupted Elimination's sample complexity falls as ξ grows (η = 0.9)", func(n int) verdict {
			return all(gt("Corrupted ξ=0", "Corrupted ξ=0.05", n), gt("Corrupted ξ=0.05", "Corrupted ξ=0.1", n))
		}),
		check("DP-MASE's sample complexity rises as ε falls", func(n int) verdict {
			return all(gt("DP-MASE ε=0.05", "DP-MASE ε=0.1", n), gt("DP-MASE ε=0.1", "DP-MASE ε=0.25", n))
		}),
		check("every private algorithm needs fewer samples than INDEPENDENT", func(n int) verdict {
			var vs []verdict
			for _, s := range private {
				vs = append(vs, gt("INDEPENDENT", s, n))
			}
			return all(vs...)
		}),
		check("CENTRAL is fastest", func(n int) verdict {
			var vs []verdict
			for _, s := range append(private, "INDEPENDENT") {
				vs = append(vs, gt(s, "CENTRAL", n))
			}
			return all(vs...)
		}),
		check("an unbalanced P_N is faster than a uniform one (DP-MASE ε=0.1, Corrupted ξ=0.05)", func(n int) verdict {
			return all(gt("DP-MASE ε=0.1", "DP-MASE ε=0.1 unbalanced", n), gt("Corrupted ξ=0.05", "Corrupted ξ=0.05 unbalanced", n))
		}),
		check("DP-MASE's sample complexity rises with local accuracy 1−β (Figure 5, ε = 0.5)", func(n int) verdict {
			return all(gt("DP-MASE ε=0.5 β=0.3", "DP-MASE ε=0.5 β=0.5", n), gt("DP-MASE ε=0.5 β=0.5", "DP-MASE ε=0.5 β=0.8", n))
		}),
		check("the returned arm is the best in at least 1−δ = 95% of runs, for every series", func(n int) verdict {
			for s := range sum {
				if sum[s][n].Accuracy < 0.95 {
					return verdict{false, true}
				}
			}
			return verdict{true, true}
		}),
	}
	// Growth with N: every private series, every step of N.
	var vs []verdict
	var flat, open []string
	for _, s := range private {
		for i := 1; i < len(agents); i++ {
			h, r := experiment.Ordered(sum[s][agents[i]].Summary, sum[s][agents[i-1]].Summary)
			step := fmt.Sprintf("%s from N = %d to %d", s, agents[i-1], agents[i])
			switch {
			case r && !h:
				flat = append(flat, step)
			case !r:
				open = append(open, step)
			}
			vs = append(vs, verdict{h, r})
		}
	}
	v := all(vs...)
	grow := experiment.Claim{Text: "both private algorithms need more samples as N grows", Holds: v.holds && v.resolved, Unresolved: !v.resolved}
	switch {
	case len(flat) > 0:
		grow.Note = "not for " + strings.Join(flat, "; ")
	case len(open) > 0:
		grow.Note = "within the runs' noise for " + strings.Join(open, "; ")
	}
	return append(claims, grow)
}

func writeBAI(o Options, grid []baiSeries, runs []Session, sum map[string]map[int]baiPoint, rep *Report) ([]string, error) {
	var files []string
	runsPath := filepath.Join(o.Out, "bai_runs.csv")
	sorted := append([]Session(nil), runs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].Series != sorted[j].Series {
			return sorted[i].Series < sorted[j].Series
		}
		if sorted[i].Agents != sorted[j].Agents {
			return sorted[i].Agents < sorted[j].Agents
		}
		return sorted[i].Run < sorted[j].Run
	})
	var runRows [][]string
	for _, r := range sorted {
		runRows = append(runRows, []string{r.Series, strconv.Itoa(r.Agents), strconv.Itoa(r.Run), strconv.FormatInt(r.Seed, 10),
			strconv.FormatInt(r.SampleComplexity, 10), strconv.FormatBool(r.Answered), strconv.FormatBool(r.Correct),
			strconv.FormatFloat(r.Elapsed.Seconds(), 'f', 3, 64)})
	}
	if err := experiment.WriteCSV(runsPath, []string{"series", "agents", "run", "seed", "sample_complexity", "answered", "correct", "seconds"}, runRows); err != nil {
		return nil, err
	}
	files = append(files, runsPath)
	sumPath := filepath.Join(o.Out, "bai_summary.csv")
	var sumRows [][]string
	for _, s := range grid {
		for _, n := range o.Agents {
			p := sum[s.Name][n]
			sumRows = append(sumRows, []string{s.Name, strings.Join(s.Figures, " "), strconv.Itoa(n), strconv.Itoa(p.N),
				fmt.Sprintf("%.1f", p.Mean), fmt.Sprintf("%.1f", p.Low), fmt.Sprintf("%.1f", p.High), fmt.Sprintf("%.3f", p.Accuracy)})
		}
	}
	if err := experiment.WriteCSV(sumPath, []string{"series", "figures", "agents", "runs", "mean", "ci95_low", "ci95_high", "accuracy"}, sumRows); err != nil {
		return nil, err
	}
	files = append(files, sumPath)
	figs, err := plotBAI(o, grid, sum)
	if err != nil {
		return nil, err
	}
	files = append(files, figs...)
	mdPath := filepath.Join(o.Out, "bai_results.md")
	var b strings.Builder
	fmt.Fprintf(&b, "# Multi-agent BAI: Problem %d, %d runs per point, N ∈ %v\n\n", o.Problem, o.Runs, o.Agents)
	fmt.Fprintf(&b, "%d simulated sessions in %v on %s; δ = 0.05; seeds %d…%d.\n\n", len(runs), rep.Elapsed.Round(time.Second), plural(o.Workers, "worker"), o.Seed, o.Seed+int64(o.Runs)-1)
	b.WriteString("## The paper's claims\n\n")
	experiment.WriteClaims(&b, rep.Claims)
	b.WriteString("\n## Mean sample complexity (95% interval)\n\n")
	experiment.WriteTableHead(&b, []string{"series"}, "N=%d", o.Agents)
	for _, s := range grid {
		fmt.Fprintf(&b, "| %s |", s.Name)
		for _, n := range o.Agents {
			p := sum[s.Name][n]
			fmt.Fprintf(&b, " %.0f (±%.0f) |", p.Mean, (p.High-p.Low)/2)
		}
		b.WriteString("\n")
	}
	writeBAIFigures(&b, o, grid, runs)
	if err := os.WriteFile(mdPath, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, mdPath), nil
}
