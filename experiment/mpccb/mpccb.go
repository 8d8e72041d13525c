package mpccb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Options configure the experiments of the privacy-preserving
// contextual bandit (Hannun et al., section 5): reward against ε and η on
// Fashion-MNIST, run time against |A| and P on the synthetic data set, and
// the cost of each operation (Table 1).
type Options struct {
	// Out is the directory the CSV files, figures and written results go to.
	Out string
	// Steps is T of the reward runs, one sweep over the first T
	// Fashion-MNIST images (default 10,000; the paper: 60,000).
	Steps int64
	// Runs per ε (default 3; the paper: 10 for Figure 1, 5 for Figure 2).
	// Run r uses seed Seed+r for every ε (common random numbers).
	Runs int
	// Epsilons are Figure 2's ε (default 0.005, 0.01, 0.02, 0.05, 0.1, 0.2,
	// 0.5); CurveEpsilons Figure 1's (default 0.01, 0.05, 0.1, 0.2). Both
	// are run, each distinct ε once.
	Epsilons, CurveEpsilons []float64
	// Arms and Parties span Figure 3 (time against |A|, one line per P;
	// default |A| 10, 20, 40, 60, 80, 100 and P 2, 3, 5); ScaleParties and
	// ScaleArms span Figure 4 (time against P, one line per |A|; default P
	// 2, 3, 4, 5, 6, 8 and |A| 10, 40, 100). Synthetic data set.
	Arms, Parties, ScaleParties, ScaleArms []int
	// TimingSteps is T of each timing run (default 100), and TimingRepeats
	// how often each point runs (default 2): the figures take the fastest,
	// the least disturbed by other work on the machine.
	TimingSteps   int64
	TimingRepeats int
	// BenchTime is how long each Table 1 measurement runs at least
	// (default 300 ms).
	BenchTime time.Duration
	// Workers run the reward simulations in parallel (default: the number
	// of CPUs); TimingWorkers the timing ones (default 1, so that each is
	// timed alone).
	Workers, TimingWorkers int
	// Seed is the first run's seed; 0 is a seed like any other (the
	// command line's default is 1).
	Seed int64
	// Quick shrinks every default to a smoke test of well under a minute:
	// 500 steps, one run, two timing points per figure. Fields set
	// explicitly are kept.
	Quick bool
	// Command is the command line recorded in the results file.
	Command string
	// Progress receives one line per finished simulation; nil for none.
	Progress io.Writer
	// Shard, unless zero, runs only that slice of the reward sessions
	// (Figures 1 and 2) and writes a partial output for Merge. The timing
	// runs (Figures 3 and 4) and the Table 1 benchmarks compare times with
	// each other, so they are not split across machines: shard 1 runs them
	// all, besides its reward sessions.
	Shard experiment.Shard
	// Batches, when given, are batch sizes B whose regret is compared with
	// the sequential algorithm's (B = 1) on Fashion-MNIST over Steps steps,
	// Runs runs each (batch.go: mpccb_batch_results.md and its files).
	Batches []int
	// BatchOnly runs only the batches' comparison, not the figures' secure
	// sessions.
	BatchOnly bool

	// stamp, set only by tests, replaces the times each session measured
	// by a function of the session, and makes Table 1's times, the
	// elapsed time and the load averages fixed: a deterministic clock, so
	// that two executions write the same bytes.
	stamp func(*Session)
	// fashion, set only by tests, is Fashion-MNIST's contexts, loaded
	// once for several runs (nil: Run loads them).
	fashion *dataset.Contexts
}

func (o *Options) defaults() {
	if o.Quick {
		setDefault(&o.Steps, 500)
		setDefault(&o.Runs, 1)
		setDefault(&o.TimingSteps, 40)
		setDefault(&o.TimingRepeats, 1)
		setDefault(&o.BenchTime, 20*time.Millisecond)
		setDefaultSlice(&o.Epsilons, []float64{0.01, 0.1, 0.5})
		setDefaultSlice(&o.CurveEpsilons, []float64{0.01, 0.1})
		setDefaultSlice(&o.Arms, []int{10, 20})
		setDefaultSlice(&o.Parties, []int{2, 3})
		setDefaultSlice(&o.ScaleParties, []int{2, 3})
		setDefaultSlice(&o.ScaleArms, []int{10})
	}
	setDefault(&o.Steps, 10000)
	setDefault(&o.Runs, 3)
	setDefault(&o.TimingSteps, 100)
	setDefault(&o.TimingRepeats, 2)
	setDefault(&o.BenchTime, 300*time.Millisecond)
	setDefault(&o.Workers, runtime.NumCPU())
	setDefault(&o.TimingWorkers, 1)
	setDefaultSlice(&o.Epsilons, []float64{0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5})
	setDefaultSlice(&o.CurveEpsilons, []float64{0.01, 0.05, 0.1, 0.2})
	setDefaultSlice(&o.Arms, []int{10, 20, 40, 60, 80, 100})
	setDefaultSlice(&o.Parties, []int{2, 3, 5})
	setDefaultSlice(&o.ScaleParties, []int{2, 3, 4, 5, 6, 8})
	setDefaultSlice(&o.ScaleArms, []int{10, 40, 100})
	for _, xs := range [][]int{o.Arms, o.Parties, o.ScaleParties, o.ScaleArms} {
		slices.Sort(xs)
	}
	slices.Sort(o.Epsilons)
	slices.Sort(o.CurveEpsilons)
}

func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

func setDefaultSlice[T any](v *[]T, d []T) {
	if len(*v) == 0 {
		*v = d
	}
}

// MinSteps and MaxSteps bound Options.Steps: the reward
// curves have 100 checkpoints, and Fashion-MNIST has 60,000 training images.
const (
	MinSteps = 100
	MaxSteps = 60000
)

func (o *Options) validate() error {
	if o.Steps < MinSteps || o.Steps > MaxSteps {
		return fmt.Errorf("steps: %d is outside %d..%d (Fashion-MNIST has %d training images; the curves need %d checkpoints)",
			o.Steps, MinSteps, MaxSteps, MaxSteps, MinSteps)
	}
	if o.Runs < 1 || o.TimingSteps < 1 || o.TimingRepeats < 1 || o.Workers < 1 || o.TimingWorkers < 1 {
		return fmt.Errorf("runs (%d), timing steps (%d), timing repeats (%d) and workers (%d, %d) must be positive", o.Runs, o.TimingSteps, o.TimingRepeats, o.Workers, o.TimingWorkers)
	}
	for _, e := range append(slices.Clone(o.Epsilons), o.CurveEpsilons...) {
		if !(e > 0 && e <= 1) {
			return fmt.Errorf("epsilon %v is not in (0, 1]", e)
		}
	}
	for _, a := range append(slices.Clone(o.Arms), o.ScaleArms...) {
		if a < 2 || a*mpccbDims*mpccbDims > mpccb.MaxMatrixWords {
			return fmt.Errorf("arms: %d is outside 2..%d", a, mpccb.MaxMatrixWords/(mpccbDims*mpccbDims))
		}
	}
	if err := checkBatches(o.Batches, o.Steps); err != nil {
		return err
	}
	if len(o.Batches) > 0 && !o.Shard.Whole() {
		return fmt.Errorf("batches: the comparison runs whole, not in shards (it takes seconds)")
	}
	if o.BatchOnly && len(o.Batches) == 0 {
		return fmt.Errorf("batch-only names no batch size")
	}
	for _, p := range append(slices.Clone(o.Parties), o.ScaleParties...) {
		if p < 2 || p > mpccb.MaxParties {
			return fmt.Errorf("parties: %d is outside 2..%d", p, mpccb.MaxParties)
		}
	}
	return nil
}

// The parameters every run shares: the paper's 20 PCA dimensions, L = 20
// fractional bits and three Newton–Raphson iterations (its Figure 8).
const (
	mpccbDims      = 20
	mpccbPrecision = 20
	mpccbIters     = 3
)

// mpccbJob is one simulated session: a reward run on Fashion-MNIST (P = 2,
// |A| = 10) or a timing run on the synthetic data set.
type mpccbJob struct {
	Kind    string // "reward" or "timing"
	Dataset string
	Epsilon float64
	Arms    int
	Parties int
	Steps   int64
	Run     int
}

// cost guesses a job's CPU time, to start the longest first.
func (j mpccbJob) cost() float64 {
	a := float64(j.Arms)
	return float64(j.Steps) * (a*400 + 30*a*a) * float64(j.Parties*j.Parties)
}

// Session is the outcome of one simulated session.
type Session struct {
	mpccbJob
	Seed          int64
	AverageReward float64
	// ReferenceAverageReward and ArmAgreement are the simulator's grading:
	// the plaintext reference on the same contexts and dealer samples.
	ReferenceAverageReward, ArmAgreement float64
	// CurveSteps are the checkpoints; Curve and ReferenceCurve the private
	// learner's and the reference's average reward up to each.
	CurveSteps            []int64
	Curve, ReferenceCurve []float64
	RoundsPerStep         float64
	BytesPerStep          float64
	DealerBytesPerStep    float64
	MsPerStep             float64
	Elapsed               time.Duration
	// Timings, for a timing point, holds the ms per step of every repeat
	// (MsPerStep is the fastest).
	Timings []float64
}

// Op is one row of Table 1.
type Op struct {
	Operation string
	Size      string
	Rounds    float64
	// PlainNs and PrivateNs are the time per operation in nanoseconds: the
	// plaintext loop, and the MPC version over all engines and the dealer.
	PlainNs, PrivateNs float64
	Paper              string // the paper's rounds and slowdown
}

// Slowdown is PrivateNs / PlainNs.
func (op Op) Slowdown() float64 { return op.PrivateNs / op.PlainNs }

// Report is what the experiment produced.
type Report struct {
	Options Options
	Runs    []Session
	// Greedy holds, per run r, the plaintext reference with ε = 0 (η = ∞)
	// on run r's dealer samples: its average reward at the checkpoints of
	// the reward runs.
	Greedy  [][]float64
	Ops     []Op
	Elapsed time.Duration
	// LoadBefore and LoadAfter are the machine's load averages (Linux).
	LoadBefore, LoadAfter string
	Claims                []experiment.Claim
	Files                 []string
}

// Run runs the reward grid (Figures 1 and 2), the timing grid (Figures
// 3 and 4) and the operation benchmarks (Table 1), and writes CSV files,
// figures and DIR/mpccb_results.md. reg must hold one mpccb family value
// (mpccb.NewFamily) shared by every run, so each data set is loaded once.
func Run(ctx context.Context, reg *protocol.Registry, o Options) (*Report, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("mpccb experiment: %w", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	start := time.Now()
	loadBefore := experiment.LoadAverage()
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	// The reference replays need the contexts themselves.
	fm, err := o.fashion, error(nil)
	if fm == nil {
		logf("loading Fashion-MNIST (PCA to %d dimensions) for the plaintext reference", mpccbDims)
		fm, err = dataset.FashionMNISTContexts(dataset.FashionMNISTDir)
		if err != nil {
			return nil, fmt.Errorf("loading Fashion-MNIST: %w", err)
		}
	}
	contexts, rewards, err := fm.Bandit(dataset.FashionMNIST, 10, 1, int(o.Steps))
	if err != nil {
		return nil, err
	}
	var batchFiles []string
	if len(o.Batches) > 0 && o.Shard.Whole() {
		logf("the price of batches: B = %v against B = 1, %d runs each", o.Batches, o.Runs)
		if batchFiles, err = writeBatches(ctx, o, contexts, rewards); err != nil {
			return nil, fmt.Errorf("mpccb experiment: batches: %w", err)
		}
		if o.BatchOnly {
			elapsed := time.Since(start)
			if o.stamp != nil {
				elapsed = 0
			}
			return &Report{Options: o, Elapsed: elapsed, Files: batchFiles}, nil
		}
	}
	// The grid that shards split: the reward sessions, longest first.
	all := mpccbJobs(o)
	sort.SliceStable(all, func(a, b int) bool { return all[a].cost() > all[b].cost() })
	var rewardJobs, timingJobs []mpccbJob
	for _, j := range all {
		if j.Kind == "reward" {
			rewardJobs = append(rewardJobs, j)
		} else {
			timingJobs = append(timingJobs, j)
		}
	}
	if err := o.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("mpccb experiment: %w", err)
	}
	idx := o.Shard.Jobs(len(rewardJobs))
	if len(idx) == 0 {
		return nil, fmt.Errorf("mpccb experiment: shard %s: the grid has %d reward sessions, fewer than the %d shards", o.Shard, len(rewardJobs), o.Shard.Count)
	}
	// Shard 1 (or the whole run) measures what is compared across one
	// machine: Table 1 and the timing runs.
	machine := o.Shard.Whole() || o.Shard.Index == 1
	var ops []Op
	if machine {
		// Table 1 first, while nothing else runs.
		logf("Table 1: timing plaintext and MPC operations (P = 2, |A| = 100), %v each", o.BenchTime)
		ops, err = measureOps(o.BenchTime, fm.X)
		if err != nil {
			return nil, fmt.Errorf("table 1: %w", err)
		}
	} else {
		timingJobs = nil
	}
	rewardMine := make([]mpccbJob, len(idx))
	for i, k := range idx {
		rewardMine[i] = rewardJobs[k]
	}

	// The reward runs side by side; then the timing runs one at a time
	// (TimingWorkers), so that they do not compete for the CPUs.
	total := len(rewardMine) + len(timingJobs)
	var rewardRuns, timingRuns []Session
	done := 0
	for _, phase := range []struct {
		jobs    []mpccbJob
		workers int
		into    *[]Session
	}{{rewardMine, o.Workers, &rewardRuns}, {timingJobs, o.TimingWorkers, &timingRuns}} {
		jobs := phase.jobs
		out := make([]Session, len(jobs))
		err = experiment.Parallel(ctx, len(jobs), phase.workers, func(i int) error {
			run, err := simulateMPCCB(ctx, reg, jobs[i], o.Seed, contexts, rewards)
			if err != nil {
				return fmt.Errorf("%+v: %w", jobs[i], err)
			}
			if o.stamp != nil {
				o.stamp(&run)
			}
			out[i] = run
			return nil
		}, func(i, _ int) {
			done++
			r := out[i]
			if r.Kind == "reward" {
				logf("[%d/%d] reward %s ε=%-5g run %d: %.4f (reference %.4f, agreement %.2f%%)  %.2f ms/step  %v", done, total,
					r.Dataset, r.Epsilon, r.Run, r.AverageReward, r.ReferenceAverageReward, 100*r.ArmAgreement, r.MsPerStep, r.Elapsed.Round(time.Millisecond))
			} else {
				logf("[%d/%d] timing %s |A|=%-3d P=%d run %d: %.2f ms/step, %.0f rounds/step, %.0f kB/step  %v", done, total,
					r.Dataset, r.Arms, r.Parties, r.Run, r.MsPerStep, r.RoundsPerStep, r.BytesPerStep/1000, r.Elapsed.Round(time.Millisecond))
			}
		})
		if err != nil {
			return nil, err
		}
		*phase.into = out
	}
	var m *mpccbMachine
	if machine {
		m = &mpccbMachine{Ops: ops, Timing: timingRuns, LoadBefore: loadBefore, LoadAfter: experiment.LoadAverage()}
		// η = ∞: the greedy plaintext learner on each run's samples, at
		// the reward runs' checkpoints (the same in every reward run).
		steps := rewardRuns[0].CurveSteps
		for r := range o.Runs {
			g, err := referenceCurve(0, o.Seed+int64(r), 2, contexts, rewards, steps)
			if err != nil {
				return nil, err
			}
			m.Greedy = append(m.Greedy, g)
		}
		_, timing := splitRuns(timingRuns)
		m.StepPlain, err = measureStepPlain(timing, fm.X, contexts, rewards, o.BenchTime)
		if err != nil {
			return nil, err
		}
		if o.stamp != nil {
			m.fix()
		}
	}
	elapsed := time.Since(start)
	if o.stamp != nil {
		elapsed = 0
	}
	if !o.Shard.Whole() {
		p, err := experiment.NewPartial(Experiment, gridOf(o), o.Shard, len(rewardJobs))
		if err != nil {
			return nil, err
		}
		p.Command, p.Workers, p.ElapsedSeconds, p.LoadAverage = o.Command, o.Workers, elapsed.Seconds(), experiment.LoadAverage()
		if o.stamp != nil {
			p.LoadAverage = ""
		}
		if m != nil {
			if p.Extra, err = json.Marshal(m); err != nil {
				return nil, fmt.Errorf("the partial output: %w", err)
			}
		}
		for i, r := range rewardRuns {
			if err := p.Add(idx[i], r); err != nil {
				return nil, err
			}
		}
		path, err := p.Write(o.Out)
		if err != nil {
			return nil, err
		}
		return &Report{Options: o, Runs: rewardRuns, Elapsed: elapsed, Files: []string{path}}, nil
	}
	rep, err := renderMPCCB(o, rewardRuns, m, elapsed)
	if err != nil {
		return nil, err
	}
	rep.Files = append(rep.Files, batchFiles...)
	return rep, nil
}

// renderMPCCB assembles the report from the reward runs (in the grid's
// order) and the machine-bound measurements, and writes the files, as Run
// and Merge do alike.
func renderMPCCB(o Options, reward []Session, m *mpccbMachine, elapsed time.Duration) (*Report, error) {
	runs := append(slices.Clone(reward), m.Timing...)
	// Private runs report in job order; put them in a stable one.
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].less(runs[b]) })
	rep := &Report{Options: o, Runs: runs, Ops: slices.Clone(m.Ops), Greedy: m.Greedy, LoadBefore: m.LoadBefore, LoadAfter: m.LoadAfter,
		Elapsed: elapsed}
	addStepRows(rep, m.StepPlain)
	files, err := writeMPCCB(rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

// mpccbMachine is what one machine measures for the whole grid: Table 1's
// operations, the timing runs, the plaintext reference's step times; and
// the greedy reference's curves. Shard 1 carries it in its partial output.
type mpccbMachine struct {
	Ops        []Op        `json:"ops"`
	Timing     []Session   `json:"timing"`
	Greedy     [][]float64 `json:"greedy"`
	StepPlain  []stepPlain `json:"step_plain"`
	LoadBefore string      `json:"load_before"`
	LoadAfter  string      `json:"load_after"`
}

// fix replaces m's measured times by fixed values: the tests' clock.
func (m *mpccbMachine) fix() {
	for i := range m.Ops {
		m.Ops[i].PlainNs, m.Ops[i].PrivateNs = float64(i+1), float64(100*(i+1))
	}
	for i := range m.StepPlain {
		m.StepPlain[i].Ns = float64(m.StepPlain[i].Arms)
	}
	m.LoadBefore, m.LoadAfter = "", ""
}

// Experiment is this experiment's name in partial outputs and manifests.
const Experiment = "mpccb"

// gridOptions are the options that define the grid, as Run resolved them:
// all but the output, the reward workers, the progress and the command.
type gridOptions struct {
	Steps         int64         `json:"steps"`
	Runs          int           `json:"runs"`
	Epsilons      []float64     `json:"epsilons"`
	CurveEpsilons []float64     `json:"curve_epsilons"`
	Arms          []int         `json:"arms"`
	Parties       []int         `json:"parties"`
	ScaleParties  []int         `json:"scale_parties"`
	ScaleArms     []int         `json:"scale_arms"`
	TimingSteps   int64         `json:"timing_steps"`
	TimingRepeats int           `json:"timing_repeats"`
	BenchTime     time.Duration `json:"bench_time"`
	TimingWorkers int           `json:"timing_workers"`
	Seed          int64         `json:"seed"`
	Quick         bool          `json:"quick"`
}

func gridOf(o Options) gridOptions {
	return gridOptions{Steps: o.Steps, Runs: o.Runs, Epsilons: o.Epsilons, CurveEpsilons: o.CurveEpsilons, Arms: o.Arms, Parties: o.Parties,
		ScaleParties: o.ScaleParties, ScaleArms: o.ScaleArms, TimingSteps: o.TimingSteps, TimingRepeats: o.TimingRepeats,
		BenchTime: o.BenchTime, TimingWorkers: o.TimingWorkers, Seed: o.Seed, Quick: o.Quick}
}

// Merge writes into out, from the shards' partial outputs m (read by
// experiment.ReadPartials), what the unsharded run writes: the same CSV
// files, figures and results. Table 1, the timing runs and the load
// averages are shard 1's; the results name shard 1's command line, the
// shards' reward workers summed and the sum of their elapsed times.
func Merge(m *experiment.Merged, out string) (*Report, error) {
	if m.Experiment != Experiment {
		return nil, fmt.Errorf("mpccb merge: the partials are of experiment %q", m.Experiment)
	}
	var g gridOptions
	if err := json.Unmarshal(m.Grid, &g); err != nil {
		return nil, fmt.Errorf("mpccb merge: the grid's options: %w", err)
	}
	if len(m.Extra) == 0 {
		return nil, fmt.Errorf("mpccb merge: no shard holds the timing runs and Table 1 (shard 1 measures them)")
	}
	var mach mpccbMachine
	if err := json.Unmarshal(m.Extra, &mach); err != nil {
		return nil, fmt.Errorf("mpccb merge: shard 1's measurements: %w", err)
	}
	reward, err := experiment.Decode[Session](m)
	if err != nil {
		return nil, err
	}
	o := Options{Out: out, Steps: g.Steps, Runs: g.Runs, Epsilons: g.Epsilons, CurveEpsilons: g.CurveEpsilons, Arms: g.Arms, Parties: g.Parties,
		ScaleParties: g.ScaleParties, ScaleArms: g.ScaleArms, TimingSteps: g.TimingSteps, TimingRepeats: g.TimingRepeats, BenchTime: g.BenchTime,
		TimingWorkers: g.TimingWorkers, Seed: g.Seed, Quick: g.Quick, Workers: m.Workers, Command: m.Command}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	return renderMPCCB(o, reward, &mach, m.Elapsed)
}

func (r Session) less(s Session) bool {
	if r.Kind != s.Kind {
		return r.Kind == "reward"
	}
	if r.Epsilon != s.Epsilon {
		return r.Epsilon < s.Epsilon
	}
	if r.Parties != s.Parties {
		return r.Parties < s.Parties
	}
	if r.Arms != s.Arms {
		return r.Arms < s.Arms
	}
	return r.Run < s.Run
}

// rewardEpsilons returns the ε of the reward runs: Figure 1's and Figure
// 2's, each distinct ε once, in increasing order.
func (o Options) rewardEpsilons() []float64 {
	eps := slices.Clone(o.Epsilons)
	for _, e := range o.CurveEpsilons {
		if !slices.Contains(eps, e) {
			eps = append(eps, e)
		}
	}
	slices.Sort(eps)
	return eps
}

// mpccbJobs lists every distinct session of both grids.
func mpccbJobs(o Options) []mpccbJob {
	var jobs []mpccbJob
	for _, e := range o.rewardEpsilons() {
		for r := range o.Runs {
			jobs = append(jobs, mpccbJob{Kind: "reward", Dataset: dataset.FashionMNIST, Epsilon: e, Arms: 10, Parties: 2, Steps: o.Steps, Run: r})
		}
	}
	seen := map[[2]int]bool{}
	add := func(a, p int) {
		if !seen[[2]int{a, p}] {
			seen[[2]int{a, p}] = true
			for r := range o.TimingRepeats {
				jobs = append(jobs, mpccbJob{Kind: "timing", Dataset: dataset.Synthetic, Epsilon: 0.1, Arms: a, Parties: p, Steps: o.TimingSteps, Run: r})
			}
		}
	}
	for _, p := range o.Parties {
		for _, a := range o.Arms {
			add(a, p)
		}
	}
	for _, a := range o.ScaleArms {
		for _, p := range o.ScaleParties {
			add(a, p)
		}
	}
	return jobs
}

func simulateMPCCB(ctx context.Context, reg *protocol.Registry, j mpccbJob, seed0 int64, contexts, rewards [][]float64) (Session, error) {
	seed := seed0 + int64(j.Run)
	params := map[string]any{"epsilon": j.Epsilon, "steps": j.Steps, "arms": int64(j.Arms), "dimensions": int64(mpccbDims),
		"precision_bits": int64(mpccbPrecision), "reciprocal_iterations": int64(mpccbIters)}
	simulation := map[string]any{"parties": int64(j.Parties), "dataset": j.Dataset, "data_seed": int64(1), "seed": seed}
	t0 := time.Now()
	res, err := sim.Run(ctx, reg, &protocol.Spec{Protocol: mpccb.Name, Params: params, Simulation: simulation}, sim.Options{})
	if err != nil {
		return Session{}, err
	}
	r, ok := res.Result.(*mpccb.Result)
	if !ok {
		return Session{}, fmt.Errorf("the simulation returned a %T, not an mpccb result", res.Result)
	}
	run := Session{mpccbJob: j, Seed: seed, AverageReward: r.AverageReward, RoundsPerStep: r.RoundsPerStep,
		BytesPerStep: r.BytesPerStep, DealerBytesPerStep: r.DealerBytesPerStep, Elapsed: time.Since(t0)}
	if r.ReferenceAverageReward == nil || r.ArmAgreement == nil || r.MsPerStep == nil {
		return Session{}, fmt.Errorf("the simulator did not grade the run or time it")
	}
	run.ReferenceAverageReward, run.ArmAgreement, run.MsPerStep = *r.ReferenceAverageReward, *r.ArmAgreement, *r.MsPerStep
	if j.Kind != "reward" {
		return run, nil
	}
	// The checkpoints are every CheckpointEvery steps and the last step.
	for k := range r.RewardCurve {
		run.CurveSteps = append(run.CurveSteps, min(int64(k+1)*r.CheckpointEvery, j.Steps))
	}
	if len(run.CurveSteps) == 0 || run.CurveSteps[len(run.CurveSteps)-1] != j.Steps {
		return Session{}, fmt.Errorf("a reward curve of %d points every %d steps does not end at step %d", len(r.RewardCurve), r.CheckpointEvery, j.Steps)
	}
	run.Curve = r.RewardCurve
	run.ReferenceCurve, err = referenceCurve(j.Epsilon, seed, j.Parties, contexts, rewards, run.CurveSteps)
	if err != nil {
		return Session{}, err
	}
	// The replay must be the grader's reference: same samples, same result.
	if got := run.ReferenceCurve[len(run.ReferenceCurve)-1]; math.Abs(got-run.ReferenceAverageReward) > 1e-12 {
		return Session{}, fmt.Errorf("replaying the dealer's samples gives the reference an average reward of %v, the simulator's grader %v: the dealer's seed order changed", got, run.ReferenceAverageReward)
	}
	return run, nil
}

// referenceCurve runs the plaintext reference with exploration eps on the
// samples of the dealer of a P-party simulation with this seed, and returns
// its average reward up to each checkpoint.
//
// The dealer draws from protocol.SeededRand(seed, dealer) one mpc seed per
// feature party, then its sample seed (mpccb's dealerSeeds, replayed by its
// GradeLocal); the caller checks the replay against the grader's result.
func referenceCurve(eps float64, seed int64, parties int, contexts, rewards [][]float64, steps []int64) ([]float64, error) {
	sampler, err := dealerSampler(seed, parties)
	if err != nil {
		return nil, err
	}
	p := mpccb.DefaultParams()
	p.Epsilon, p.Arms, p.Dimensions, p.PrecisionBits, p.ReciprocalIterations = eps, len(rewards[0]), mpccbDims, mpccbPrecision, mpccbIters
	ref := mpccb.NewReference(p, sampler)
	out := make([]float64, 0, len(steps))
	var total float64
	next := 0
	for t := int64(1); next < len(steps); t++ {
		if int(t) > len(contexts) {
			return nil, fmt.Errorf("a checkpoint at step %d, beyond the %d contexts", steps[next], len(contexts))
		}
		_, r := ref.Step(contexts[t-1], rewards[t-1])
		total += r
		if t == steps[next] {
			out = append(out, total/float64(t))
			next++
		}
	}
	return out, nil
}

// dealerSampler replays the dealer's seed draws: one per feature party,
// then the sample seed.
func dealerSampler(seed int64, parties int) (mpc.Seed, error) {
	r := protocol.SeededRand(seed, protocol.Party{Role: mpccb.RoleDealer})
	var s mpc.Seed
	for range parties + 1 {
		if _, err := io.ReadFull(r, s[:]); err != nil {
			return mpc.Seed{}, err
		}
	}
	return s, nil
}
