package experiment

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// MPCCBOptions configure the experiments of the privacy-preserving
// contextual bandit (Hannun et al., section 5): reward against ε and η on
// Fashion-MNIST, run time against |A| and P on the synthetic data set, and
// the cost of each operation (Table 1).
type MPCCBOptions struct {
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
}

func (o *MPCCBOptions) defaults() {
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

// MPCCBMinSteps and MPCCBMaxSteps bound MPCCBOptions.Steps: the reward
// curves have 100 checkpoints, and Fashion-MNIST has 60,000 training images.
const (
	MPCCBMinSteps = 100
	MPCCBMaxSteps = 60000
)

func (o *MPCCBOptions) validate() error {
	if o.Steps < MPCCBMinSteps || o.Steps > MPCCBMaxSteps {
		return fmt.Errorf("steps: %d is outside %d..%d (Fashion-MNIST has %d training images; the curves need %d checkpoints)",
			o.Steps, MPCCBMinSteps, MPCCBMaxSteps, MPCCBMaxSteps, MPCCBMinSteps)
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

// MPCCBRun is the outcome of one simulated session.
type MPCCBRun struct {
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

// MPCCBOp is one row of Table 1.
type MPCCBOp struct {
	Operation string
	Size      string
	Rounds    float64
	// PlainNs and PrivateNs are the time per operation in nanoseconds: the
	// plaintext loop, and the MPC version over all engines and the dealer.
	PlainNs, PrivateNs float64
	Paper              string // the paper's rounds and slowdown
}

// Slowdown is PrivateNs / PlainNs.
func (op MPCCBOp) Slowdown() float64 { return op.PrivateNs / op.PlainNs }

// MPCCBReport is what the experiment produced.
type MPCCBReport struct {
	Options MPCCBOptions
	Runs    []MPCCBRun
	// Greedy holds, per run r, the plaintext reference with ε = 0 (η = ∞)
	// on run r's dealer samples: its average reward at the checkpoints of
	// the reward runs.
	Greedy  [][]float64
	Ops     []MPCCBOp
	Elapsed time.Duration
	// LoadBefore and LoadAfter are the machine's load averages (Linux).
	LoadBefore, LoadAfter string
	Claims                []Claim
	Files                 []string
}

// RunMPCCB runs the reward grid (Figures 1 and 2), the timing grid (Figures
// 3 and 4) and the operation benchmarks (Table 1), and writes CSV files,
// figures and DIR/mpccb_results.md. reg must hold one mpccb family value
// (mpccb.NewFamily) shared by every run, so each data set is loaded once.
func RunMPCCB(ctx context.Context, reg *protocol.Registry, o MPCCBOptions) (*MPCCBReport, error) {
	o.defaults()
	if err := o.validate(); err != nil {
		return nil, fmt.Errorf("mpccb experiment: %w", err)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	start := time.Now()
	loadBefore := loadAverage()
	logf := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	// The reference replays need the contexts themselves.
	logf("loading Fashion-MNIST (PCA to %d dimensions) for the plaintext reference", mpccbDims)
	fm, err := dataset.FashionMNISTContexts(dataset.FashionMNISTDir)
	if err != nil {
		return nil, fmt.Errorf("loading Fashion-MNIST: %w", err)
	}
	contexts, rewards, err := fm.Bandit(dataset.FashionMNIST, 10, 1, int(o.Steps))
	if err != nil {
		return nil, err
	}
	// Table 1 first, while nothing else runs.
	logf("Table 1: timing plaintext and MPC operations (P = 2, |A| = 100), %v each", o.BenchTime)
	ops, err := measureOps(o.BenchTime, fm.X)
	if err != nil {
		return nil, fmt.Errorf("table 1: %w", err)
	}

	// The reward runs side by side; then the timing runs one at a time
	// (TimingWorkers), so that they do not compete for the CPUs.
	all := mpccbJobs(o)
	sort.SliceStable(all, func(a, b int) bool { return all[a].cost() > all[b].cost() })
	runs := make([]MPCCBRun, 0, len(all))
	done := 0
	for _, phase := range []struct {
		kind    string
		workers int
	}{{"reward", o.Workers}, {"timing", o.TimingWorkers}} {
		var jobs []mpccbJob
		for _, j := range all {
			if j.Kind == phase.kind {
				jobs = append(jobs, j)
			}
		}
		out := make([]MPCCBRun, len(jobs))
		err = parallel(ctx, len(jobs), phase.workers, func(i int) error {
			run, err := simulateMPCCB(ctx, reg, jobs[i], o.Seed, contexts, rewards)
			if err != nil {
				return fmt.Errorf("%+v: %w", jobs[i], err)
			}
			out[i] = run
			return nil
		}, func(i, _ int) {
			done++
			r := out[i]
			if r.Kind == "reward" {
				logf("[%d/%d] reward %s ε=%-5g run %d: %.4f (reference %.4f, agreement %.2f%%)  %.2f ms/step  %v", done, len(all),
					r.Dataset, r.Epsilon, r.Run, r.AverageReward, r.ReferenceAverageReward, 100*r.ArmAgreement, r.MsPerStep, r.Elapsed.Round(time.Millisecond))
			} else {
				logf("[%d/%d] timing %s |A|=%-3d P=%d run %d: %.2f ms/step, %.0f rounds/step, %.0f kB/step  %v", done, len(all),
					r.Dataset, r.Arms, r.Parties, r.Run, r.MsPerStep, r.RoundsPerStep, r.BytesPerStep/1000, r.Elapsed.Round(time.Millisecond))
			}
		})
		if err != nil {
			return nil, err
		}
		runs = append(runs, out...)
	}
	// Private runs report in job order; put them in a stable one.
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].less(runs[b]) })
	rep := &MPCCBReport{Options: o, Runs: runs, Ops: ops, LoadBefore: loadBefore, LoadAfter: loadAverage()}
	// η = ∞: the greedy plaintext learner on each run's samples.
	for r := range o.Runs {
		var steps []int64
		for _, run := range runs {
			if run.Kind == "reward" && run.Run == r {
				steps = run.CurveSteps
				break
			}
		}
		g, err := referenceCurve(0, o.Seed+int64(r), 2, contexts, rewards, steps)
		if err != nil {
			return nil, err
		}
		rep.Greedy = append(rep.Greedy, g)
	}
	if err := addStepRows(rep, fm.X, contexts, rewards, o.BenchTime); err != nil {
		return nil, err
	}
	rep.Elapsed = time.Since(start)
	files, err := writeMPCCB(rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

func (r MPCCBRun) less(s MPCCBRun) bool {
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

// mpccbJobs lists every distinct session of both grids.
func mpccbJobs(o MPCCBOptions) []mpccbJob {
	var jobs []mpccbJob
	eps := slices.Clone(o.Epsilons)
	for _, e := range o.CurveEpsilons {
		if !slices.Contains(eps, e) {
			eps = append(eps, e)
		}
	}
	slices.Sort(eps)
	for _, e := range eps {
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

func simulateMPCCB(ctx context.Context, reg *protocol.Registry, j mpccbJob, seed0 int64, contexts, rewards [][]float64) (MPCCBRun, error) {
	seed := seed0 + int64(j.Run)
	params := map[string]any{"epsilon": j.Epsilon, "steps": j.Steps, "arms": int64(j.Arms), "dimensions": int64(mpccbDims),
		"precision_bits": int64(mpccbPrecision), "reciprocal_iterations": int64(mpccbIters)}
	simulation := map[string]any{"parties": int64(j.Parties), "dataset": j.Dataset, "data_seed": int64(1), "seed": seed}
	t0 := time.Now()
	res, err := sim.Run(ctx, reg, &protocol.Spec{Protocol: mpccb.Name, Params: params, Simulation: simulation}, sim.Options{})
	if err != nil {
		return MPCCBRun{}, err
	}
	r, ok := res.Result.(*mpccb.Result)
	if !ok {
		return MPCCBRun{}, fmt.Errorf("the simulation returned a %T, not an mpccb result", res.Result)
	}
	run := MPCCBRun{mpccbJob: j, Seed: seed, AverageReward: r.AverageReward, RoundsPerStep: r.RoundsPerStep,
		BytesPerStep: r.BytesPerStep, DealerBytesPerStep: r.DealerBytesPerStep, Elapsed: time.Since(t0)}
	if r.ReferenceAverageReward == nil || r.ArmAgreement == nil || r.MsPerStep == nil {
		return MPCCBRun{}, fmt.Errorf("the simulator did not grade the run or time it")
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
		return MPCCBRun{}, fmt.Errorf("a reward curve of %d points every %d steps does not end at step %d", len(r.RewardCurve), r.CheckpointEvery, j.Steps)
	}
	run.Curve = r.RewardCurve
	run.ReferenceCurve, err = referenceCurve(j.Epsilon, seed, j.Parties, contexts, rewards, run.CurveSteps)
	if err != nil {
		return MPCCBRun{}, err
	}
	// The replay must be the grader's reference: same samples, same result.
	if got := run.ReferenceCurve[len(run.ReferenceCurve)-1]; math.Abs(got-run.ReferenceAverageReward) > 1e-12 {
		return MPCCBRun{}, fmt.Errorf("replaying the dealer's samples gives the reference an average reward of %v, the simulator's grader %v: the dealer's seed order changed", got, run.ReferenceAverageReward)
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

// writeMPCCB writes the CSV files, figures and results file.
func writeMPCCB(rep *MPCCBReport) ([]string, error) {
	o := rep.Options
	var files []string
	reward, timing := splitRuns(rep.Runs)

	runsPath := filepath.Join(o.Out, "mpccb_runs.csv")
	if err := writeCSV(runsPath, []string{"kind", "dataset", "epsilon", "eta", "arms", "parties", "steps", "run", "seed", "average_reward",
		"reference_average_reward", "arm_agreement", "rounds_per_step", "bytes_per_step", "dealer_bytes_per_step", "ms_per_step", "seconds"},
		func(w *csv.Writer) error {
			for _, r := range rep.Runs {
				if err := w.Write([]string{r.Kind, r.Dataset, fmtG(r.Epsilon), fmt.Sprintf("%.4f", math.Log(float64(r.Arms)/r.Epsilon)),
					strconv.Itoa(r.Arms), strconv.Itoa(r.Parties), strconv.FormatInt(r.Steps, 10), strconv.Itoa(r.Run), strconv.FormatInt(r.Seed, 10),
					fmt.Sprintf("%.6f", r.AverageReward), fmt.Sprintf("%.6f", r.ReferenceAverageReward), fmt.Sprintf("%.6f", r.ArmAgreement),
					fmtG(r.RoundsPerStep), fmt.Sprintf("%.0f", r.BytesPerStep), fmt.Sprintf("%.0f", r.DealerBytesPerStep),
					fmt.Sprintf("%.4f", r.MsPerStep), fmt.Sprintf("%.2f", r.Elapsed.Seconds())}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
		return nil, err
	}
	files = append(files, runsPath)

	// Figure 1: the curves.
	curves := rewardCurves(o, reward)
	fig1CSV := filepath.Join(o.Out, "fig1_reward_curves.csv")
	if err := writeCSV(fig1CSV, []string{"epsilon", "step", "runs", "private_mean", "private_std", "reference_mean", "reference_std"}, func(w *csv.Writer) error {
		for _, c := range curves {
			for k, t := range c.Steps {
				if err := w.Write([]string{fmtG(c.Epsilon), strconv.FormatInt(t, 10), strconv.Itoa(c.Runs), fmt.Sprintf("%.6f", c.Private[k].Mean),
					fmt.Sprintf("%.6f", c.Private[k].StdDev), fmt.Sprintf("%.6f", c.Reference[k].Mean), fmt.Sprintf("%.6f", c.Reference[k].StdDev)}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	files = append(files, fig1CSV)

	// Figure 2: reward against η at three sizes T.
	fig2 := rewardAgainstEta(rep, reward)
	fig2CSV := filepath.Join(o.Out, "fig2_reward_vs_eta.csv")
	if err := writeCSV(fig2CSV, []string{"T", "epsilon", "eta", "runs", "private_mean", "private_std", "reference_mean", "reference_std"}, func(w *csv.Writer) error {
		for _, s := range fig2 {
			for _, pt := range s.Points {
				eta := "inf"
				if pt.Epsilon > 0 {
					eta = fmt.Sprintf("%.4f", math.Log(10/pt.Epsilon))
				}
				if err := w.Write([]string{strconv.FormatInt(s.T, 10), fmtG(pt.Epsilon), eta, strconv.Itoa(pt.Reference.N), fmt.Sprintf("%.6f", pt.Private.Mean),
					fmt.Sprintf("%.6f", pt.Private.StdDev), fmt.Sprintf("%.6f", pt.Reference.Mean), fmt.Sprintf("%.6f", pt.Reference.StdDev)}); err != nil {
					return err
				}
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	files = append(files, fig2CSV)

	// Figures 3 and 4: one CSV, every timing point.
	fig34CSV := filepath.Join(o.Out, "fig3_fig4_time.csv")
	if err := writeCSV(fig34CSV, []string{"parties", "arms", "steps", "ms_per_step", "ms_per_step_repeats", "rounds_per_step", "bytes_per_step", "dealer_bytes_per_step",
		"arm_agreement", "in_fig3", "in_fig4"}, func(w *csv.Writer) error {
		for _, r := range timing {
			var all []string
			for _, ms := range r.Timings {
				all = append(all, fmt.Sprintf("%.4f", ms))
			}
			if err := w.Write([]string{strconv.Itoa(r.Parties), strconv.Itoa(r.Arms), strconv.FormatInt(r.Steps, 10), fmt.Sprintf("%.4f", r.MsPerStep), strings.Join(all, ";"),
				fmtG(r.RoundsPerStep), fmt.Sprintf("%.0f", r.BytesPerStep), fmt.Sprintf("%.0f", r.DealerBytesPerStep), fmt.Sprintf("%.4f", r.ArmAgreement),
				strconv.FormatBool(slices.Contains(o.Parties, r.Parties) && slices.Contains(o.Arms, r.Arms)),
				strconv.FormatBool(slices.Contains(o.ScaleParties, r.Parties) && slices.Contains(o.ScaleArms, r.Arms))}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	files = append(files, fig34CSV)

	t1CSV := filepath.Join(o.Out, "table1_operations.csv")
	if err := writeCSV(t1CSV, []string{"operation", "size", "rounds", "plaintext_ns", "private_ns", "slowdown", "paper"}, func(w *csv.Writer) error {
		for _, op := range rep.Ops {
			if err := w.Write([]string{op.Operation, op.Size, fmtG(op.Rounds), fmt.Sprintf("%.1f", op.PlainNs), fmt.Sprintf("%.1f", op.PrivateNs),
				fmt.Sprintf("%.1f", op.Slowdown()), op.Paper}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	files = append(files, t1CSV)

	figs, err := plotMPCCB(o, curves, fig2, timing)
	if err != nil {
		return nil, err
	}
	files = append(files, figs...)

	rep.Claims = mpccbClaims(rep, curves, fig2, reward, timing)
	md := mpccbMarkdown(rep, curves, fig2, timing, figs)
	mdPath := filepath.Join(o.Out, "mpccb_results.md")
	if err := os.WriteFile(mdPath, []byte(md), 0o644); err != nil {
		return nil, err
	}
	return append(files, mdPath), nil
}

// splitRuns returns the reward runs, and for each timing point its fastest
// repeat, with every repeat's ms per step in Timings.
func splitRuns(runs []MPCCBRun) (reward, timing []MPCCBRun) {
	at := map[[2]int]int{}
	for _, r := range runs {
		if r.Kind == "reward" {
			reward = append(reward, r)
			continue
		}
		k := [2]int{r.Arms, r.Parties}
		i, ok := at[k]
		if !ok {
			at[k] = len(timing)
			r.Timings = []float64{r.MsPerStep}
			timing = append(timing, r)
			continue
		}
		all := append(timing[i].Timings, r.MsPerStep)
		if r.MsPerStep < timing[i].MsPerStep {
			timing[i] = r
		}
		timing[i].Timings = all
	}
	return reward, timing
}

func fmtG(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// mpccbCurve is Figure 1's curve for one ε: mean and spread over runs at
// every checkpoint.
type mpccbCurve struct {
	Epsilon            float64
	Runs               int
	Steps              []int64
	Private, Reference []Summary
	// Final rewards per run, and the largest |private − reference| of a run.
	FinalPrivate, FinalReference Summary
	MaxGap                       float64
	MinAgreement                 float64
}

func rewardCurves(o MPCCBOptions, reward []MPCCBRun) []mpccbCurve {
	var out []mpccbCurve
	eps := slices.Clone(o.Epsilons)
	for _, e := range o.CurveEpsilons {
		if !slices.Contains(eps, e) {
			eps = append(eps, e)
		}
	}
	slices.Sort(eps)
	for _, e := range eps {
		var rs []MPCCBRun
		for _, r := range reward {
			if r.Epsilon == e {
				rs = append(rs, r)
			}
		}
		if len(rs) == 0 {
			continue
		}
		c := mpccbCurve{Epsilon: e, Runs: len(rs), Steps: rs[0].CurveSteps, MinAgreement: 1}
		for k := range c.Steps {
			var p, q []float64
			for _, r := range rs {
				p = append(p, r.Curve[k])
				q = append(q, r.ReferenceCurve[k])
			}
			c.Private = append(c.Private, Summarize(p))
			c.Reference = append(c.Reference, Summarize(q))
		}
		var fp, fr []float64
		for _, r := range rs {
			fp, fr = append(fp, r.AverageReward), append(fr, r.ReferenceAverageReward)
			c.MaxGap = max(c.MaxGap, math.Abs(r.AverageReward-r.ReferenceAverageReward))
			c.MinAgreement = min(c.MinAgreement, r.ArmAgreement)
		}
		c.FinalPrivate, c.FinalReference = Summarize(fp), Summarize(fr)
		out = append(out, c)
	}
	return out
}

// etaSeries is Figure 2's series for one size T: a point per ε, and the
// greedy reference (ε = 0, η = ∞) last.
type etaSeries struct {
	T      int64
	Points []etaPoint
}

type etaPoint struct {
	Epsilon            float64 // 0: η = ∞, the greedy reference alone
	Private, Reference Summary
}

// rewardAgainstEta reads each ε's average reward after T steps off the
// curves, T = the checkpoints nearest Steps/10 and Steps/2, and Steps: a
// shorter sweep is a prefix of the longer one (same images, same dealer
// samples), so its reward is the curve's value at T.
func rewardAgainstEta(rep *MPCCBReport, reward []MPCCBRun) []etaSeries {
	if len(reward) == 0 {
		return nil
	}
	steps := reward[0].CurveSteps
	n := len(steps)
	idx := []int{max(0, n/10-1), max(0, n/2-1), n - 1}
	var out []etaSeries
	for _, k := range slices.Compact(idx) {
		s := etaSeries{T: steps[k]}
		var eps []float64
		for _, r := range reward {
			if !slices.Contains(eps, r.Epsilon) && slices.Contains(rep.Options.Epsilons, r.Epsilon) {
				eps = append(eps, r.Epsilon)
			}
		}
		slices.Sort(eps)
		for _, e := range eps {
			var p, q []float64
			for _, r := range reward {
				if r.Epsilon == e {
					p, q = append(p, r.Curve[k]), append(q, r.ReferenceCurve[k])
				}
			}
			s.Points = append(s.Points, etaPoint{Epsilon: e, Private: Summarize(p), Reference: Summarize(q)})
		}
		var g []float64
		for _, c := range rep.Greedy {
			g = append(g, c[k])
		}
		s.Points = append(s.Points, etaPoint{Epsilon: 0, Reference: Summarize(g)})
		out = append(out, s)
	}
	return out
}

// timingAt returns the timing run at (arms, parties).
func timingAt(timing []MPCCBRun, arms, parties int) (MPCCBRun, bool) {
	for _, r := range timing {
		if r.Arms == arms && r.Parties == parties {
			return r, true
		}
	}
	return MPCCBRun{}, false
}

// logSlope is the slope of log y against log x between two points.
func logSlope(x0, y0, x1, y1 float64) float64 { return math.Log(y1/y0) / math.Log(x1/x0) }

func mpccbClaims(rep *MPCCBReport, curves []mpccbCurve, fig2 []etaSeries, reward, timing []MPCCBRun) []Claim {
	o := rep.Options
	var claims []Claim
	for _, c := range curves {
		if !slices.Contains(o.CurveEpsilons, c.Epsilon) {
			continue
		}
		claims = append(claims, Claim{
			Text:  fmt.Sprintf("ε = %g: the private learner's average reward is within 0.01 of the plaintext reference's in every run (Figure 1)", c.Epsilon),
			Holds: c.MaxGap <= 0.01,
			Note: fmt.Sprintf("private %.4f, reference %.4f over %d runs of %d steps; largest gap %.4f", c.FinalPrivate.Mean, c.FinalReference.Mean,
				c.Runs, o.Steps, c.MaxGap)})
	}
	minAg, minAt := 2.0, 0.0
	for _, r := range reward {
		if r.ArmAgreement < minAg {
			minAg, minAt = r.ArmAgreement, r.Epsilon
		}
	}
	if len(reward) > 0 {
		claims = append(claims, Claim{Text: "the private learner pulls the plaintext reference's arm in ≥ 99 % of steps (Fashion-MNIST, P = 2, every run)",
			Holds: minAg >= 0.99, Note: fmt.Sprintf("lowest agreement %.2f %% (ε = %g)", 100*minAg, minAt)})
	}
	for _, s := range fig2 {
		// In order of η: the largest ε (most private) first, η = ∞ last.
		byEta := slices.Clone(s.Points[:len(s.Points)-1])
		slices.Reverse(byEta)
		byEta = append(byEta, s.Points[len(s.Points)-1])
		best, bestAt := math.Inf(-1), -1
		for i, pt := range byEta {
			if v := pointReward(pt); v > best {
				best, bestAt = v, i
			}
		}
		first, last := byEta[0], byEta[len(byEta)-1]
		claims = append(claims, Claim{
			Text:  fmt.Sprintf("T = %d: reward is non-monotone in η — the best reward is at a finite η, above both η = ∞ (no exploration) and the most private ε (Figure 2)", s.T),
			Holds: bestAt > 0 && bestAt < len(byEta)-1,
			Note: fmt.Sprintf("best %.4f at ε = %g (η = %s); η = ∞ (greedy reference) %.4f; ε = %g (η = %s) %.4f", best, byEta[bestAt].Epsilon,
				etaText(byEta[bestAt].Epsilon), pointReward(last), first.Epsilon, etaText(first.Epsilon), pointReward(first))})
	}
	// Time against |A| for large |A|: the log–log slope from 40 arms on.
	big := slices.DeleteFunc(slices.Clone(o.Arms), func(a int) bool { return a < 40 })
	if len(big) >= 2 {
		var notes []string
		ok := true
		for _, p := range o.Parties {
			lo, ok1 := timingAt(timing, big[0], p)
			hi, ok2 := timingAt(timing, big[len(big)-1], p)
			if !ok1 || !ok2 {
				continue
			}
			sl := logSlope(float64(lo.Arms), lo.MsPerStep, float64(hi.Arms), hi.MsPerStep)
			ok = ok && sl >= 1.5 && sl <= 2.5
			notes = append(notes, fmt.Sprintf("P = %d: %.2f", p, sl))
		}
		claims = append(claims, Claim{Text: fmt.Sprintf("time per step grows about quadratically in |A| for |A| ≥ 40 (log–log slope in [1.5, 2.5] from |A| = %d to %d, Figure 3)", big[0], big[len(big)-1]),
			Holds: ok, Note: "slopes " + strings.Join(notes, ", ")})
	}
	if len(o.ScaleParties) >= 2 {
		var notes []string
		ok := true
		p0, p1 := o.ScaleParties[0], o.ScaleParties[len(o.ScaleParties)-1]
		for _, a := range o.ScaleArms {
			lo, ok1 := timingAt(timing, a, p0)
			hi, ok2 := timingAt(timing, a, p1)
			if !ok1 || !ok2 {
				continue
			}
			sl := logSlope(float64(p0), lo.MsPerStep, float64(p1), hi.MsPerStep)
			ok = ok && sl >= 1.5 && sl <= 2.5
			notes = append(notes, fmt.Sprintf("|A| = %d: %.2f", a, sl))
		}
		claims = append(claims, Claim{Text: fmt.Sprintf("time per step is O(P²) (log–log slope in [1.5, 2.5] from P = %d to %d, Figure 4)", p0, p1),
			Holds: ok, Note: "slopes " + strings.Join(notes, ", ")})
	}
	if len(reward) > 0 {
		maxRounds := 0.0
		for _, r := range reward {
			maxRounds = max(maxRounds, r.RoundsPerStep)
		}
		claims = append(claims, Claim{Text: "at most 45 communication rounds per step at P = 2, |A| = 10", Holds: maxRounds <= 45,
			Note: fmt.Sprintf("%g rounds per step", maxRounds)})
	}
	for _, op := range rep.Ops {
		if op.Operation == "whole learner step" && op.Size == "|A| = 10" {
			s := op.Slowdown()
			claims = append(claims, Claim{Text: "the private learner is nearly 500× slower than a plaintext one at P = 2, |A| = 10 (section 5; taken as within a factor 3: 167×–1,500×)",
				Holds: s >= 500.0/3 && s <= 1500, Note: fmt.Sprintf("%.0f× (%.3f ms against %.2f µs per step; the baseline is Go with gonum, not PyTorch)", s, op.PrivateNs/1e6, op.PlainNs/1e3)})
		}
	}
	return claims
}

// pointReward is the private reward of a point, or the reference's at η = ∞.
func pointReward(pt etaPoint) float64 {
	if pt.Epsilon == 0 {
		return pt.Reference.Mean
	}
	return pt.Private.Mean
}

// etaText formats η, ∞ included.
func etaText(eps float64) string {
	if eps == 0 {
		return "∞"
	}
	return fmt.Sprintf("%.2f", etaOf(eps))
}

func etaOf(eps float64) float64 {
	if eps == 0 {
		return math.Inf(1)
	}
	return math.Log(10 / eps)
}

func mpccbMarkdown(rep *MPCCBReport, curves []mpccbCurve, fig2 []etaSeries, timing []MPCCBRun, figs []string) string {
	o := rep.Options
	var b strings.Builder
	b.WriteString("# Privacy-preserving contextual bandits (Hannun et al.): section 5 reproduced\n\n")
	if o.Quick {
		b.WriteString("**Quick smoke run: too small to bear out the paper's claims.**\n\n")
	}
	cmd := o.Command
	if cmd == "" {
		cmd = "experiment.RunMPCCB"
	}
	fmt.Fprintf(&b, "Command: `%s`", cmd)
	if rev := buildRevision(); rev != "" {
		fmt.Fprintf(&b, " (build %s)", rev)
	}
	fmt.Fprintf(&b, ". %d simulated sessions and the Table 1 benchmarks in %v: reward runs %d at a time, timing runs %d at a time, %d CPUs.\n\n",
		len(rep.Runs), rep.Elapsed.Round(time.Second), o.Workers, o.TimingWorkers, runtime.NumCPU())
	fmt.Fprintf(&b, "Every session: D = %d PCA dimensions (unit norm), L = %d fractional bits, %d Newton–Raphson iterations for the reciprocal, ring Z/2^64. ", mpccbDims, mpccbPrecision, mpccbIters)
	fmt.Fprintf(&b, "Reward runs: Fashion-MNIST in file order (the first T = %d training images), |A| = 10, P = 2, %d runs per ε (run r: seed %d+r, which fixes the dealer's exploration draws and tie-breakers; the data order does not change). ", o.Steps, o.Runs, o.Seed)
	fmt.Fprintf(&b, "Timing runs: the synthetic data set (k-means arms, Gaussian-kernel Bernoulli rewards, σ = 1/2), %d steps, %d repeats per point, ε = 0.1.\n\n", o.TimingSteps, o.TimingRepeats)

	b.WriteString("## Table 1: rounds and slowdown per operation (P = 2)\n\n")
	b.WriteString("Private time: all computing parties' engines and the dealer's, in one process, no network (payloads passed in memory). Plaintext: a Go loop over float64 (the reference learner: gonum). The paper compares with PyTorch, whose per-call overhead makes its small plaintext operations slower than these loops. Operations on 100 values, as the paper's |A| = 100; each private result is checked against plaintext first. The reciprocal here is a linear initial guess and Newton–Raphson in product form (k iterations, 2k + 3 rounds with their truncations), not the paper's exp-based guess with 7 iterations; the argmax folds the tie-breaking permutation into the keys and runs Algorithm 2 once. Whole learner step: private = the P = 2 timing run's ms per step (all roles, protocol messages included), plaintext = `mpccb.Reference.Step` (gonum).\n\n")
	b.WriteString("| operation | size | rounds | plaintext | private | slowdown | paper (rounds, slowdown) |\n|---|---|---|---|---|---|---|\n")
	for _, op := range rep.Ops {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s× | %s |\n", mdCell(op.Operation), mdCell(op.Size), fmtG(op.Rounds), fmtNs(op.PlainNs), fmtNs(op.PrivateNs),
			fmtSlowdown(op.Slowdown()), mdCell(op.Paper))
	}

	fmt.Fprintf(&b, "\n## Figure 1: average reward during training\n\n![Figure 1](fig1_reward.png)\n\n")
	b.WriteString("Solid: the private learner; dashed: the plaintext reference (`mpccb.NewReference`) on the same images with the same dealer samples, replayed from the dealer's seed (its final value equals the simulator's grading in every run, which the experiment checks). Bands: ± one standard deviation over runs.\n\n")
	b.WriteString("| ε | η = log(10/ε) | private (mean ± sd) | reference (mean ± sd) | largest gap in a run | lowest arm agreement |\n|---|---|---|---|---|---|\n")
	for _, c := range curves {
		fmt.Fprintf(&b, "| %g | %.2f | %.4f ± %.4f | %.4f ± %.4f | %.4f | %.2f %% |\n", c.Epsilon, etaOf(c.Epsilon), c.FinalPrivate.Mean, c.FinalPrivate.StdDev,
			c.FinalReference.Mean, c.FinalReference.StdDev, c.MaxGap, 100*c.MinAgreement)
	}

	b.WriteString("\n## Figure 2: average reward against η\n\n![Figure 2](fig2_reward_vs_eta.png)\n\n")
	b.WriteString("η = ∞ is the non-private greedy learner (ε = 0). The private protocol needs ε > 0, so that point is the plaintext reference with ε = 0 on each run's dealer samples. Smaller T are prefixes of the same sweep: the average reward after T of the T-step session (the curves' checkpoints; a prefix run is identical, see TestMPCCBPrefix).\n\n")
	if len(fig2) > 0 {
		b.WriteString("| ε | η |")
		for _, s := range fig2 {
			fmt.Fprintf(&b, " T = %d |", s.T)
		}
		b.WriteString("\n|---|---|" + strings.Repeat("---|", len(fig2)) + "\n")
		for i, pt := range fig2[0].Points {
			if pt.Epsilon == 0 {
				b.WriteString("| 0 (reference) | ∞ |")
			} else {
				fmt.Fprintf(&b, "| %g | %.2f |", pt.Epsilon, etaOf(pt.Epsilon))
			}
			for _, s := range fig2 {
				q := s.Points[i]
				sd := q.Private.StdDev
				if q.Epsilon == 0 {
					sd = q.Reference.StdDev
				}
				fmt.Fprintf(&b, " %.4f ± %.4f |", pointReward(q), sd)
			}
			b.WriteString("\n")
		}
	}

	b.WriteString("\n## Figures 3 and 4: time per step against |A| and P\n\n![Figure 3](fig3_time_vs_arms.png)\n\n![Figure 4](fig4_time_vs_parties.png)\n\n")
	fmt.Fprintf(&b, "ms per step: the wall time spent inside all roles (every feature party, the dealer, p′, p″) per step, the fastest of %d repeats, with %d timing simulation(s) at a time on %d CPUs%s. Rounds: exchanges among the feature parties per step; kB: what all feature parties sent each other per step (the dealer's corrections to party 0 in the CSV).\n\n", o.TimingRepeats, o.TimingWorkers, runtime.NumCPU(), rep.loadNote())
	var ps, as []int
	for _, r := range timing {
		if !slices.Contains(ps, r.Parties) {
			ps = append(ps, r.Parties)
		}
		if !slices.Contains(as, r.Arms) {
			as = append(as, r.Arms)
		}
	}
	slices.Sort(ps)
	slices.Sort(as)
	b.WriteString("| P \\ \\|A\\| |")
	for _, a := range as {
		fmt.Fprintf(&b, " %d |", a)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(as)) + "\n")
	for _, p := range ps {
		fmt.Fprintf(&b, "| %d |", p)
		for _, a := range as {
			if r, ok := timingAt(timing, a, p); ok {
				fmt.Fprintf(&b, " %.1f ms, %g rounds, %.0f kB |", r.MsPerStep, r.RoundsPerStep, r.BytesPerStep/1000)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	var lowAg []string
	for _, r := range timing {
		if r.Parties > 2 && r.ArmAgreement < 0.9 {
			lowAg = append(lowAg, fmt.Sprintf("P = %d, |A| = %d: %.0f %%", r.Parties, r.Arms, 100*r.ArmAgreement))
		}
	}
	if len(lowAg) > 0 {
		fmt.Fprintf(&b, "\nArm agreement with the plaintext reference in the timing runs with P > 2 is low (%s), while at P = 2 it is 100 %%. The likely cause: untrained arms all score exactly 0 in plaintext, and the reference breaks that tie by γ; with more than two parties each truncation is off by up to P units of 2^-%d (privacy/mpc's wrap-counting truncation with η_xr = 0 and floors), so the private scores of untrained arms are not exactly equal and the tie falls otherwise, after which the two learners see different rewards and follow different trajectories. (A manual check on Fashion-MNIST, seeds 1–3, P = 3 and 5, found the first differing arm at step 1, 2 or 3; at P = 2 none in 60 steps.) The timing runs do not check reward.\n", strings.Join(lowAg, "; "), mpccbPrecision)
	}

	b.WriteString("\n## The paper's claims\n\n")
	writeClaims(&b, rep.Claims)
	b.WriteString("\n## Files\n\n")
	for _, f := range []string{"mpccb_runs.csv", "fig1_reward_curves.csv", "fig2_reward_vs_eta.csv", "fig3_fig4_time.csv", "table1_operations.csv"} {
		fmt.Fprintf(&b, "- [%s](%s)\n", f, f)
	}
	for _, f := range figs {
		fmt.Fprintf(&b, "- [%s](%s)\n", filepath.Base(f), filepath.Base(f))
	}
	return b.String()
}

// loadNote reports the machine's load averages around the experiment: the
// timings are wall times, and other work on the machine inflates them.
func (rep *MPCCBReport) loadNote() string {
	if rep.LoadBefore == "" || rep.LoadAfter == "" {
		return ""
	}
	return fmt.Sprintf(" (1-, 5-, 15-minute load averages %s before the experiment, %s after)", rep.LoadBefore, rep.LoadAfter)
}

// loadAverage reads the load averages on Linux, or returns "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// mdCell escapes the pipes of a Markdown table cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func fmtNs(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func fmtSlowdown(s float64) string {
	if s >= 100 {
		return strconv.FormatFloat(math.Round(s), 'f', 0, 64)
	}
	return fmt.Sprintf("%.1f", s)
}

// buildRevision is the VCS revision the binary was built from, if stamped.
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", with uncommitted changes"
			}
		}
	}
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// Table 1: the operations of Algorithm 1 timed in plaintext and on secret
// shares.

// opRig is P computing engines and the dealer's, in one process: a
// computation runs on the dealer first (its corrections go to party 0),
// then on the parties in lock step, each round's payloads handed over in
// memory.
type opRig struct {
	parties []*mpc.Engine
	dealer  *mpc.Engine
}

func newOpRig(parties int, frac uint, seed uint64) (*opRig, error) {
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 'o', 'p', 's'})
	next := func() mpc.Seed {
		var s mpc.Seed
		rng.Read(s[:])
		return s
	}
	cfg := mpc.Config{Parties: parties, Frac: frac}
	dealerSeeds := make([]mpc.Seed, parties)
	for p := range dealerSeeds {
		dealerSeeds[p] = next()
	}
	pair := make([][]mpc.Seed, parties)
	for p := range pair {
		pair[p] = make([]mpc.Seed, parties)
	}
	for p := range parties {
		for q := p + 1; q < parties; q++ {
			s := next()
			pair[p][q], pair[q][p] = s, s
		}
	}
	g := &opRig{}
	for p := range parties {
		e, err := mpc.NewParty(cfg, p, dealerSeeds[p], pair[p])
		if err != nil {
			return nil, err
		}
		g.parties = append(g.parties, e)
	}
	d, err := mpc.NewDealer(cfg, dealerSeeds)
	if err != nil {
		return nil, err
	}
	d.SetSampler(mpc.NewPRG(next()))
	g.dealer = d
	return g, nil
}

// engines returns the parties' engines and then the dealer's.
func (g *opRig) engines() []*mpc.Engine { return append(slices.Clone(g.parties), g.dealer) }

// share returns every engine's share of x, contributed by party 0 (the
// dealer's is zeros), in the order of engines.
func (g *opRig) share(x []uint64) [][]uint64 {
	var out [][]uint64
	for _, e := range g.engines() {
		out = append(out, e.Share(0, x, len(x)))
	}
	return out
}

// opComputation builds, on engine i of engines(), the procs of a
// computation and a function returning that engine's output shares.
type opComputation func(i int, e *mpc.Engine) (procs []*mpc.Proc, output func() []uint64)

// run runs c once and returns the computing parties' output shares.
func (g *opRig) run(c opComputation) ([][]uint64, error) {
	dprocs, _ := c(len(g.parties), g.dealer)
	dg := g.dealer.NewProgram()
	for _, p := range dprocs {
		dg.Go(p)
	}
	for {
		done, err := dg.Advance()
		if err != nil {
			return nil, fmt.Errorf("dealer: %w", err)
		}
		if done {
			break
		}
		if err := g.dealer.Complete(nil); err != nil {
			return nil, err
		}
	}
	g.parties[0].SetCorrections(g.dealer.TakeCorrections())
	progs := make([]*mpc.Program, len(g.parties))
	outs := make([]func() []uint64, len(g.parties))
	for i, e := range g.parties {
		procs, out := c(i, e)
		progs[i], outs[i] = e.NewProgram(), out
		for _, p := range procs {
			progs[i].Go(p)
		}
	}
	pls := make([]mpc.Payload, len(g.parties))
	for {
		dones := 0
		for i, pg := range progs {
			done, err := pg.Advance()
			if err != nil {
				return nil, fmt.Errorf("party %d: %w", i, err)
			}
			if done {
				dones++
			}
		}
		if dones == len(progs) {
			break
		}
		if dones != 0 {
			return nil, fmt.Errorf("parties out of step: %d of %d finished", dones, len(progs))
		}
		for i, e := range g.parties {
			pls[i] = e.Outgoing()
		}
		for _, e := range g.parties {
			if err := e.Complete(pls); err != nil {
				return nil, err
			}
		}
	}
	if left := g.parties[0].CorrectionsLeft(); left != 0 {
		return nil, fmt.Errorf("party 0 left %d correction words unused", left)
	}
	res := make([][]uint64, len(outs))
	for i, out := range outs {
		res[i] = out()
	}
	return res, nil
}

// perOp runs f until at least least has passed and returns the mean time
// per call in nanoseconds.
func perOp(least time.Duration, f func() error) (float64, error) {
	n := 1
	for {
		t0 := time.Now()
		for range n {
			if err := f(); err != nil {
				return 0, err
			}
		}
		el := time.Since(t0)
		if el >= least {
			return float64(el.Nanoseconds()) / float64(n), nil
		}
		grow := 100
		if el > 0 {
			grow = max(2, min(100, int(1.2*float64(least)/float64(el))+1))
		}
		n *= grow
	}
}

// decodeSum reconstructs and decodes fixed-point shares.
func decodeSum(fx mpc.Fixed, shares [][]uint64) []float64 {
	sum := make([]uint64, len(shares[0]))
	for _, s := range shares {
		for i, v := range s {
			sum[i] += v
		}
	}
	return fx.DecodeAll(sum)
}

// measureOps times Table 1's operations on |A| = 100 values for P = 2, and
// a matrix–vector product of Algorithm 1's size (W_a⁻¹x for every arm).
// Each private operation is first checked against plaintext.
func measureOps(least time.Duration, contexts [][]float64) ([]MPCCBOp, error) {
	const n, dim, parties = 100, mpccbDims, 2
	rig, err := newOpRig(parties, mpccbPrecision, 1)
	if err != nil {
		return nil, err
	}
	fx := mpc.Fixed{Frac: mpccbPrecision}
	rng := rand.New(rand.NewPCG(5, 17))
	uniform := func(k int, lo, hi float64) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = lo + (hi-lo)*rng.Float64()
		}
		return out
	}
	a, bb, d, scores := uniform(n, -1, 1), uniform(n, -1, 1), uniform(n, 1, 2), uniform(n, -1, 1)
	w, x := uniform(n*dim*dim, -1, 1), contexts[0]
	sa, sb, sd, ss := rig.share(fx.EncodeAll(a)), rig.share(fx.EncodeAll(bb)), rig.share(fx.EncodeAll(d)), rig.share(fx.EncodeAll(scores))
	sw, sx := rig.share(fx.EncodeAll(w)), rig.share(fx.EncodeAll(x))
	c := make([]float64, n)
	cw := make([]float64, n*dim)
	var sink int

	type opDef struct {
		name, size, paper string
		plain             func()
		private           opComputation
		check             func(out []float64) error
	}
	near := func(want []float64, tol float64) func([]float64) error {
		return func(got []float64) error {
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol {
					return fmt.Errorf("element %d: %v, want %v", i, got[i], want[i])
				}
			}
			return nil
		}
	}
	prod, recip, mv := make([]float64, n), make([]float64, n), make([]float64, n*dim)
	for i := range n {
		prod[i], recip[i] = a[i]*bb[i], 1/d[i]
		for r := range dim {
			for k := range dim {
				mv[i*dim+r] += w[(i*dim+r)*dim+k] * x[k]
			}
		}
	}
	best := 0
	for i, v := range scores {
		if v > scores[best] {
			best = i
		}
	}
	defs := []opDef{
		{name: "multiplication (fixed point)", size: fmt.Sprintf("%d values", n), paper: "2, 380×",
			plain: func() {
				for i := range c {
					c[i] = a[i] * bb[i]
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.MulFixed(sa[i], sb[i], &out)}, func() []uint64 { return out }
			}, check: near(prod, 1e-5)},
		{name: fmt.Sprintf("reciprocal (%d Newton–Raphson iterations)", mpccbIters), size: fmt.Sprintf("%d values in [1, 2]", n), paper: "30, 6,000×",
			plain: func() {
				for i := range c {
					c[i] = 1 / d[i]
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.Reciprocal(sd[i], 1, 2, mpccbIters, &out)}, func() []uint64 { return out }
			}, check: near(recip, 1e-4)},
		{name: "argmax (one-hot, random tie-break)", size: fmt.Sprintf("|A| = %d", n), paper: "O(P + log₂|A|), 34,000×",
			plain: func() {
				k := 0
				for i, v := range scores {
					if v > scores[k] {
						k = i
					}
				}
				sink += k
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.ArgMax(ss[i], e.DealtPermutation(n), &out)}, func() []uint64 { return out }
			}, check: func(got []float64) error {
				for i, v := range got {
					// The one-hot is in integers, not fixed point.
					want := 0.0
					if i == best {
						want = 1
					}
					if math.Abs(v*float64(fx.One())-want) > 1e-9 {
						return fmt.Errorf("arm %d: %v, want the one-hot of arm %d", i, v*float64(fx.One()), best)
					}
				}
				return nil
			}},
		{name: "matrix–vector W_a⁻¹x, every arm", size: fmt.Sprintf("%d × %d×%d", n, dim, dim), paper: "—",
			plain: func() {
				for i := range n {
					for r := range dim {
						var s float64
						row := w[(i*dim+r)*dim : (i*dim+r+1)*dim]
						for k, v := range row {
							s += v * x[k]
						}
						cw[i*dim+r] = s
					}
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var ow, ox *mpc.Open
				var t *mpc.Trunc
				var out []uint64
				p := e.NewProc(func() bool {
					ow, ox = e.Mask(sw[i]), e.Mask(sx[i])
					return true
				}, func() bool {
					t = e.TruncStart(e.MatVec(ow, ox, dim))
					return true
				}, func() bool {
					out = t.Result()
					return true
				})
				return []*mpc.Proc{p}, func() []uint64 { return out }
			}, check: near(mv, 1e-4)},
	}
	// Addition is local: every engine adds its shares, nothing is opened.
	plainAdd, err := perOp(least, func() error {
		for i := range c {
			c[i] = a[i] + bb[i]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	privAdd, err := perOp(least, func() error {
		for i := range rig.engines() {
			_ = mpc.Add(sa[i], sb[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ops := []MPCCBOp{{Operation: "addition", Size: fmt.Sprintf("%d values", n), Rounds: 0, PlainNs: plainAdd, PrivateNs: privAdd, Paper: "0, 11×"}}
	for _, def := range defs {
		out, err := rig.run(def.private)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def.name, err)
		}
		if err := def.check(decodeSum(fx, out)); err != nil {
			return nil, fmt.Errorf("%s is wrong: %w", def.name, err)
		}
		plain, err := perOp(least, func() error { def.plain(); return nil })
		if err != nil {
			return nil, err
		}
		r0 := rig.parties[0].Stats().Rounds
		calls := 0
		priv, err := perOp(least, func() error {
			calls++
			_, err := rig.run(def.private)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def.name, err)
		}
		rounds := float64(rig.parties[0].Stats().Rounds-r0) / float64(calls)
		ops = append(ops, MPCCBOp{Operation: def.name, Size: def.size, Rounds: rounds, PlainNs: plain, PrivateNs: priv, Paper: def.paper})
	}
	_ = sink
	return ops, nil
}

// addStepRows adds Table 1's whole-step rows: the private learner's time
// per step from the simulations (all roles; the P = 2 timing runs at |A| =
// 10 and 100, or the reward runs' mean without a timing run at 10) against
// the plaintext reference's Step.
func addStepRows(rep *MPCCBReport, all, contexts, rewards [][]float64, least time.Duration) error {
	reward, timing := splitRuns(rep.Runs)
	var ms, rounds []float64
	for _, r := range reward {
		ms, rounds = append(ms, r.MsPerStep), append(rounds, r.RoundsPerStep)
	}
	type stepRow struct {
		arms                  int
		ms, rounds            float64
		contexts, rewardTable [][]float64
		paper                 string
	}
	var rows []stepRow
	if r, ok := timingAt(timing, 10, 2); ok {
		// Timed alone, unlike the reward runs; the data set does not
		// change the work.
		rows = append(rows, stepRow{10, r.MsPerStep, r.RoundsPerStep, contexts, rewards, "—, ≈ 500×"})
	} else if len(ms) > 0 {
		rows = append(rows, stepRow{10, Summarize(ms).Mean, Summarize(rounds).Mean, contexts, rewards, "—, ≈ 500×"})
	}
	if r, ok := timingAt(timing, 100, 2); ok {
		// Timing only: the rewards do not change the reference's work.
		zero := make([][]float64, len(all))
		flat := make([]float64, 100)
		for i := range zero {
			zero[i] = flat
		}
		rows = append(rows, stepRow{100, r.MsPerStep, r.RoundsPerStep, all, zero, "—"})
	}
	for _, row := range rows {
		p := mpccb.DefaultParams()
		p.Epsilon, p.Arms, p.Dimensions, p.PrecisionBits, p.ReciprocalIterations = 0.1, row.arms, mpccbDims, mpccbPrecision, mpccbIters
		var seed mpc.Seed
		ref := mpccb.NewReference(p, seed)
		t := 0
		plain, err := perOp(least, func() error {
			ref.Step(row.contexts[t], row.rewardTable[t])
			t = (t + 1) % len(row.contexts)
			return nil
		})
		if err != nil {
			return err
		}
		rep.Ops = append(rep.Ops, MPCCBOp{Operation: "whole learner step", Size: fmt.Sprintf("|A| = %d", row.arms), Rounds: row.rounds,
			PlainNs: plain, PrivateNs: row.ms * 1e6, Paper: row.paper})
	}
	return nil
}
