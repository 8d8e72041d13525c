package samba

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Options configure the SAMBA experiment (Figure 8 of Ciucanu et al.).
type Options struct {
	// Out is the directory the CSV files, figures and written results go to.
	Out string
	// Dataset is "movielens" (or "", the default: the paper's prototype's
	// MovieLens-100k means, embedded) or a file of arm means, one per line.
	// The experiment takes the K largest means, as the paper does.
	Dataset string
	// Runs per point (0: the default, 3). Run r uses the seed Seed+r.
	Runs int
	// Budget is N, the largest budget (0: the default, 20,000). At the
	// largest K the budgets N/4 and N/2 are run too (Figure 8(a) and (c):
	// time and reward as N grows); at every K, the budget N (Figure 8(b)).
	Budget int64
	// Ks are the numbers of arms, data owners (nil: the default, 10 and
	// 100, the K of the paper's Figure 8(d)); each at least 2 and at most
	// the dataset's number of arms.
	Ks []int
	// PaillierBits is the data customer's Paillier modulus (0: the
	// paper's 2048 bits). Smaller moduli are for tests.
	PaillierBits int
	// Workers run simulations in parallel (0: GOMAXPROCS, so that no two
	// sessions share a processor and interleave inside each other's
	// timed calls: the per-role busy times are wall times). Negative
	// Runs, Budget or Workers are an error.
	Workers int
	// Seed is the first run's seed.
	Seed int64
	// Progress receives one line per finished run; nil for none.
	Progress io.Writer
	// Command is the command line the results file names.
	Command string
	// Tuning, where given, overrides the dataset's parameters (those of
	// its description, a .toml file beside a means file; MovieLens's
	// otherwise): the command line's --epsilon, --tau, ….
	Tuning Tuning
	// Batches, when given, are batch sizes B (params.batch) whose regret
	// the experiment compares with the sequential algorithm's (B = 1) at
	// the largest K and the budget N: samba_batch.csv and its section of
	// samba_results.md (batch.go).
	Batches []int
	// BatchGrowth, when above 1, makes every batch size of Batches but 1
	// the first batch of a geometric schedule (params.batch_growth).
	BatchGrowth float64
	// BatchOnly runs only the batches' comparison, not Figure 8's secure
	// sessions: samba_batch.csv, samba_batch_summary.csv, the figure and
	// samba_batch_results.md.
	BatchOnly bool
	// Shard, unless zero, runs only that slice of the grid's sessions and
	// writes a partial output (experiment.PartialFile and no figures or
	// results) for Merge to combine with the other shards'.
	Shard experiment.Shard

	// stamp, set only by tests, replaces every time a session measured
	// (CPU, wall and busy seconds) by a function of the session, and makes
	// the elapsed time zero and the load average empty: a deterministic
	// clock, so that two executions write the same bytes.
	stamp func(*Session)
}

// sambaAlgorithms are the six lines of the paper's Figure 8, in its order:
// the five algorithms of its Figure 4, ε-greedy with a fixed and with a
// decreasing ε.
func sambaAlgorithms() []string {
	return []string{"epsilon_greedy", "epsilon_decreasing", "ucb", "thompson", "softmax", "pursuit"}
}

// sambaParams are a session's params: algorithm alg over budget with the
// dataset's parameters t (the schedule for ε-decreasing only).
func sambaParams(alg string, budget int64, bits int, t Tuning) map[string]any {
	p := map[string]any{"algorithm": alg, "budget": budget, "epsilon": t.Epsilon, "tau": t.Tau, "beta": t.Beta, "paillier_bits": int64(bits)}
	if alg == "epsilon_decreasing" {
		p["epsilon_schedule"] = t.EpsilonSchedule
	}
	return p
}

// sambaJob is one simulated session of the grid.
type sambaJob struct {
	Algorithm string
	K         int
	Budget    int64
	Run       int
}

// Session is one session of SAMBA (full cryptography, in the simulator:
// the daemon's role code) and the standard algorithm on the same arms and
// seed.
type Session struct {
	sambaJob
	Seed int64
	// Reward is SAMBA's cumulative reward, as the data customer decrypted
	// it; StandardReward the standard (non-secure, non-federated)
	// algorithm's, samba.Reference. Exact is Theorem 2 for this run: the
	// same reward, and the simulator's check that SAMBA pulled the same
	// arms in the same order as the standard algorithm.
	Reward, StandardReward int64
	SameSequence           bool
	Exact                  bool
	// SecureSeconds is the CPU time of the whole simulated session (every
	// role, one after another on one thread, the Paillier key generation
	// included); SecureWallSeconds its wall time. StandardSeconds is the
	// CPU time of one run of the standard algorithm. CPUClock is false
	// where the thread CPU clock could not be read: the times are then
	// wall times.
	SecureSeconds, SecureWallSeconds, StandardSeconds float64
	// SetupSeconds is the part of SecureSeconds before the first step
	// (until comp's first list): the Paillier key generation, the data
	// owners' encryptions and first pulls. The linearity claims fit the
	// steps' time, SecureSeconds − SetupSeconds.
	SetupSeconds float64
	CPUClock     bool
	// Messages and Bytes crossed the simulated network.
	Messages, Bytes int64
	// Costs is the per-role breakdown (all data owners together): messages
	// and bytes sent, AES-GCM and Paillier operations, busy seconds.
	Costs map[string]samba.RoleCost
	// OwnerMessages and OwnerBytes are the least and most any one data
	// owner sent.
	OwnerMessages, OwnerBytes [2]int64
}

// Report is what the experiment produced.
type Report struct {
	Dataset string
	// Runs are the secure sessions simulated (none with
	// Options.BatchOnly).
	Runs []Session
	// BatchRuns counts the runs of the plaintext batched reference
	// (samba.Reference with params.batch) behind the batches' comparison,
	// B = 1 included; 0 without Options.Batches.
	BatchRuns int
	Elapsed   time.Duration
	// LoadAverage is the machine's at the end ("; " between the shards'
	// after a merge).
	LoadAverage string
	Claims      []experiment.Claim
	Files       []string
}

// Run runs Figure 8 of the SAMBA paper: every algorithm, secure (the
// SAMBA roles in the simulator) against standard, on the K best arms of the
// dataset — the cumulative rewards and Theorem 2's exactness per run, the
// time and the overhead factor, the per-role costs — and writes CSV files,
// figures and DIR/samba_results.md with the paper's claims checked.
func Run(ctx context.Context, reg *protocol.Registry, o Options) (*Report, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"runs", int64(o.Runs)}, {"budget", o.Budget}, {"workers", int64(o.Workers)}, {"paillier bits", int64(o.PaillierBits)}} {
		if f.v < 0 {
			return nil, fmt.Errorf("samba experiment: %s: %d is negative (0 for the default)", f.name, f.v)
		}
	}
	if o.Runs == 0 {
		o.Runs = 3
	}
	if o.Budget == 0 {
		o.Budget = 20000
	}
	if len(o.Ks) == 0 {
		o.Ks = []int{10, 100}
	}
	if o.PaillierBits == 0 {
		o.PaillierBits = 2048
	}
	if o.Workers == 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	data, err := loadSAMBADataset(o.Dataset)
	if err != nil {
		return nil, fmt.Errorf("samba experiment: %w", err)
	}
	data.Tuning = data.Tuning.over(o.Tuning, "the command line")
	ks := slices.Clone(o.Ks)
	slices.Sort(ks)
	ks = slices.Compact(ks)
	for _, k := range ks {
		if k < 2 || k > samba.MaxOwners {
			return nil, fmt.Errorf("samba experiment: K = %d: SAMBA takes 2 to %d arms", k, samba.MaxOwners)
		}
		if k > len(data.Means) {
			return nil, fmt.Errorf("samba experiment: K = %d: dataset %s has %d arms", k, data.Name, len(data.Means))
		}
	}
	o.Ks = ks
	kmax := ks[len(ks)-1]
	if o.Budget <= int64(kmax) {
		return nil, fmt.Errorf("samba experiment: budget %d: must exceed the largest K, %d (the first K pulls try every arm once)", o.Budget, kmax)
	}
	if err := checkBatches(o.Batches, o.Budget); err != nil {
		return nil, err
	}
	if o.BatchGrowth != 0 && !(o.BatchGrowth >= 1 && o.BatchGrowth <= samba.MaxBatchGrowth) {
		return nil, fmt.Errorf("samba experiment: batch growth %v: want a factor in [1, %d]", o.BatchGrowth, samba.MaxBatchGrowth)
	}
	// Check every algorithm's parameters before any run.
	for _, alg := range sambaAlgorithms() {
		if _, err := (samba.Family{}).ParseParams(sambaParams(alg, o.Budget, o.PaillierBits, data.Tuning.Tuning)); err != nil {
			return nil, fmt.Errorf("samba experiment: %s: %w", alg, err)
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	if o.BatchOnly {
		return runBatchOnly(o, data)
	}
	var jobs []sambaJob
	for _, k := range ks {
		for _, n := range sambaBudgets(o.Budget, k, kmax) {
			for _, alg := range sambaAlgorithms() {
				for r := range o.Runs {
					jobs = append(jobs, sambaJob{Algorithm: alg, K: k, Budget: n, Run: r})
				}
			}
		}
	}
	// The biggest sessions first, so that the last worker does not start
	// one when the others are done.
	slices.SortStableFunc(jobs, func(a, b sambaJob) int {
		return int(int64(b.K)*b.Budget - int64(a.K)*a.Budget)
	})
	if err := o.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("samba experiment: %w", err)
	}
	idx := o.Shard.Jobs(len(jobs))
	start := time.Now()
	runs := make([]Session, len(idx))
	err = experiment.Parallel(ctx, len(idx), o.Workers, func(i int) error {
		j := jobs[idx[i]]
		run, err := simulateSAMBA(ctx, reg, j, data.Means[:j.K], data.Tuning.Tuning, o)
		if err != nil {
			return fmt.Errorf("samba %s, K = %d, N = %d, run %d: %w", j.Algorithm, j.K, j.Budget, j.Run, err)
		}
		if o.stamp != nil {
			o.stamp(&run)
		}
		runs[i] = run
		return nil
	}, func(i, done int) {
		if o.Progress != nil {
			r := runs[i]
			exact := "exact"
			if !r.Exact {
				exact = "NOT EXACT"
			}
			fmt.Fprintf(o.Progress, "[%d/%d] %-18s K=%-3d N=%-6d run %d: reward %d (standard %d, %s)  secure %.2f s, standard %.2f ms\n",
				done, len(idx), r.Algorithm, r.K, r.Budget, r.Run, r.Reward, r.StandardReward, exact, r.SecureSeconds, 1e3*r.StandardSeconds)
		}
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{Dataset: data.Name, Runs: runs, Elapsed: time.Since(start), LoadAverage: experiment.LoadAverage()}
	if o.stamp != nil {
		rep.Elapsed, rep.LoadAverage = 0, ""
	}
	if !o.Shard.Whole() {
		p, err := experiment.NewPartial(Experiment, sambaGridOf(o, data), o.Shard, len(jobs))
		if err != nil {
			return nil, err
		}
		p.Command, p.Workers, p.ElapsedSeconds, p.LoadAverage = o.Command, o.Workers, rep.Elapsed.Seconds(), rep.LoadAverage
		for i, r := range runs {
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
	files, err := writeSAMBA(o, data, rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

// Experiment is this experiment's name in partial outputs and manifests.
const Experiment = "samba"

// sambaGrid is what defines the grid: every option but the output, the
// workers, the progress and the command line, as Run resolved them (the
// dataset's means and parameters included).
type sambaGrid struct {
	Dataset      sambaDataset `json:"dataset"`
	Runs         int          `json:"runs"`
	Budget       int64        `json:"budget"`
	Ks           []int        `json:"ks"`
	PaillierBits int          `json:"paillier_bits"`
	Seed         int64        `json:"seed"`
	Batches      []int        `json:"batches,omitempty"`
	BatchGrowth  float64      `json:"batch_growth,omitempty"`
}

func sambaGridOf(o Options, data sambaDataset) sambaGrid {
	return sambaGrid{Dataset: data, Runs: o.Runs, Budget: o.Budget, Ks: o.Ks, PaillierBits: o.PaillierBits, Seed: o.Seed, Batches: o.Batches, BatchGrowth: o.BatchGrowth}
}

// Merge writes into out, from the shards' partial outputs m (read by
// experiment.ReadPartials), what the unsharded run writes: the same CSV
// files, figures and results, the runs in the same order. The results
// name the first shard's command line, the shards' workers summed, the
// sum of their elapsed times and their load averages.
func Merge(m *experiment.Merged, out string) (*Report, error) {
	if m.Experiment != Experiment {
		return nil, fmt.Errorf("samba merge: the partials are of experiment %q", m.Experiment)
	}
	var g sambaGrid
	if err := json.Unmarshal(m.Grid, &g); err != nil {
		return nil, fmt.Errorf("samba merge: the grid's options: %w", err)
	}
	if len(g.Ks) == 0 {
		return nil, fmt.Errorf("samba merge: the grid names no K")
	}
	runs, err := experiment.Decode[Session](m)
	if err != nil {
		return nil, err
	}
	o := Options{Out: out, Runs: g.Runs, Budget: g.Budget, Ks: g.Ks, PaillierBits: g.PaillierBits, Seed: g.Seed,
		Batches: g.Batches, BatchGrowth: g.BatchGrowth, Workers: m.Workers, Command: m.Command}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	rep := &Report{Dataset: g.Dataset.Name, Runs: runs, Elapsed: m.Elapsed, LoadAverage: m.LoadAverage}
	files, err := writeSAMBA(o, g.Dataset, rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

// sambaBudgets are the budgets run at K: N at every K, and N/4 and N/2 as
// well at the largest K, where each exceeds K.
func sambaBudgets(n int64, k, kmax int) []int64 {
	if k != kmax {
		return []int64{n}
	}
	var out []int64
	for _, b := range []int64{n / 4, n / 2, n} {
		if b > int64(k) && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	return out
}

// minStandardTiming is how long the standard algorithm is repeated for, at
// least, to time one run of it.
const minStandardTiming = 20 * time.Millisecond

// simulateSAMBA runs one SAMBA session in the simulator, on one thread,
// and the standard algorithm on the same arms and seed.
func simulateSAMBA(ctx context.Context, reg *protocol.Registry, j sambaJob, means []float64, t Tuning, o Options) (Session, error) {
	seed := o.Seed + int64(j.Run)
	raw := sambaParams(j.Algorithm, j.Budget, o.PaillierBits, t)
	spec := &protocol.Spec{Protocol: samba.Name, Params: raw,
		Simulation: map[string]any{"arms": slices.Clone(means), "seed": seed}}
	ownerMsgs := make([]int64, j.K)
	ownerBytes := make([]int64, j.K)
	// The set-up ends when comp sends its first list of bits (step K+1):
	// until then the data customer generated its Paillier key — a prime
	// search whose time varies from run to run — and the data owners
	// encrypted and pulled once each.
	var setupCPU time.Duration
	var setupWall time.Time
	count := func(m protocol.Message) {
		if m.From.Role == samba.RoleOwner && m.From.Index >= 0 && m.From.Index < j.K {
			ownerMsgs[m.From.Index]++
			ownerBytes[m.From.Index] += int64(len(m.Body))
		}
		if m.From.Role == samba.RoleComp && setupWall.IsZero() {
			setupWall = time.Now()
			setupCPU, _ = threadCPU()
		}
	}
	// One thread: the sequential driver runs every role on this goroutine,
	// locked to its thread, so the thread's CPU time is the session's.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, cpuOK := threadCPU()
	wall0 := time.Now()
	res, err := sim.Run(ctx, reg, spec, sim.Options{Workers: 1, OnMessage: count})
	if err != nil {
		return Session{}, err
	}
	wall := time.Since(wall0).Seconds()
	cpu1, _ := threadCPU()
	secure := wall
	if setupWall.IsZero() { // no step beyond the set-up (N = K)
		setupWall, setupCPU = time.Now(), cpu1
	}
	setup := setupWall.Sub(wall0).Seconds()
	if cpuOK {
		secure = (cpu1 - cpu0).Seconds()
		setup = (setupCPU - cpu0).Seconds()
	}
	r, ok := res.Result.(*samba.Result)
	if !ok || r.ReferenceCumulativeReward == nil || r.SameArmSequence == nil {
		return Session{}, fmt.Errorf("the simulator returned %T without the standard algorithm's check", res.Result)
	}

	parsed, err := (samba.Family{}).ParseParams(raw)
	if err != nil {
		return Session{}, err
	}
	p := parsed.(samba.Params)
	var standard int64
	reps := 0
	t0, _ := threadCPU()
	w0 := time.Now()
	for reps == 0 || time.Since(w0) < minStandardTiming {
		reward, _, err := samba.Reference(p, means, seed)
		if err != nil {
			return Session{}, fmt.Errorf("the standard algorithm: %w", err)
		}
		if reps > 0 && reward != standard {
			return Session{}, fmt.Errorf("the standard algorithm returned %d, then %d, from the same seed", standard, reward)
		}
		standard = reward
		reps++
	}
	stdSeconds := time.Since(w0).Seconds() / float64(reps)
	if cpuOK {
		t1, _ := threadCPU()
		stdSeconds = (t1 - t0).Seconds() / float64(reps)
	}

	run := Session{sambaJob: j, Seed: seed, Reward: r.CumulativeReward, StandardReward: standard,
		SameSequence: *r.SameArmSequence, SecureSeconds: secure, SetupSeconds: setup, SecureWallSeconds: wall, StandardSeconds: stdSeconds,
		CPUClock: cpuOK, Messages: res.Messages, Bytes: res.Bytes, Costs: r.Costs,
		OwnerMessages: [2]int64{slices.Min(ownerMsgs), slices.Max(ownerMsgs)},
		OwnerBytes:    [2]int64{slices.Min(ownerBytes), slices.Max(ownerBytes)}}
	run.Exact = run.SameSequence && run.Reward == run.StandardReward && *r.ReferenceCumulativeReward == standard
	return run, nil
}
