package pfcb

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// Options configure the P-FCB experiments.
type Options struct {
	// Out is the directory the CSV files, figures and written results go to.
	Out string
	// Rounds is T (0: the default, 100,000).
	Rounds int64
	// Instances per family (0: the default, 10) and Runs per instance (0:
	// the default, 3).
	Instances, Runs int
	// Epsilons of EXP2 (default 0.25, 0.5, 1, 2, 4, 8).
	Epsilons []float64
	// Agents of EXP3 (default 2, 4, 6, 8, 10).
	Agents []int
	// Workers run simulations in parallel (0: the number of CPUs).
	// Negative Rounds, Instances, Runs or Workers are an error.
	Workers int
	// Seed is the first instance seed; instance i uses Seed+i and run r of
	// it the realisation seed 1000·(Seed+i)+r.
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

// pfcbJob is one simulated session of the grid.
type pfcbJob struct {
	Exp       string // EXP1, EXP2, EXP3 (a run may serve several)
	Family    string // uniform, normal
	Algorithm string
	Epsilon   float64
	Agents    int
	Instance  int
	Run       int
}

func (j pfcbJob) key() string {
	return fmt.Sprintf("%s|%s|%g|%d|%d|%d", j.Family, j.Algorithm, j.Epsilon, j.Agents, j.Instance, j.Run)
}

// Session is the outcome of one job.
type Session struct {
	pfcbJob
	RegretPerAgent float64
	Violations     int64
	Curve          []float64
	CurveEvery     int64
	EpsilonTotal   float64
	Elapsed        time.Duration
}

// Report is what the experiments produced.
type Report struct {
	Runs    []Session
	Elapsed time.Duration
	Claims  []experiment.Claim
	Files   []string
}

// Run runs EXP1 (regret over rounds, n = 10, m = 30), EXP2 (FRR against
// ε) and EXP3 (per-agent regret against n) of the P-FCB paper on uniform and
// normal instances, writes CSV files, figures and DIR/pfcb_results.md.
func Run(ctx context.Context, reg *protocol.Registry, o Options) (*Report, error) {
	for _, f := range []struct {
		name string
		v    int64
	}{{"rounds", o.Rounds}, {"instances", int64(o.Instances)}, {"runs", int64(o.Runs)}, {"workers", int64(o.Workers)}} {
		if f.v < 0 {
			return nil, fmt.Errorf("pfcb experiment: %s: %d is negative (0 for the default)", f.name, f.v)
		}
	}
	if o.Rounds == 0 {
		o.Rounds = 100000
	}
	// The federated families share only inside the window [t_lo, t_hi] of
	// the paper's defaults (t_lo = 200): a T too short for it is refused
	// here, before hours of other runs, not by the first pfcb run.
	if _, err := (pfcb.Family{}).ParseParams(map[string]any{"algorithm": "pfcb", "rounds": o.Rounds}); err != nil {
		return nil, fmt.Errorf("pfcb experiment: rounds %d does not suit the federated runs: %w", o.Rounds, err)
	}
	if o.Instances == 0 {
		o.Instances = 10
	}
	if o.Runs == 0 {
		o.Runs = 3
	}
	if len(o.Epsilons) == 0 {
		o.Epsilons = []float64{0.25, 0.5, 1, 2, 4, 8}
	}
	if len(o.Agents) == 0 {
		o.Agents = []int{2, 4, 6, 8, 10}
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	// The grid, each distinct session once.
	seen := map[string]bool{}
	var jobs []pfcbJob
	add := func(j pfcbJob) {
		if !seen[j.key()] {
			seen[j.key()] = true
			jobs = append(jobs, j)
		}
	}
	for _, fam := range []string{"uniform", "normal"} {
		for inst := range o.Instances {
			for r := range o.Runs {
				base := pfcbJob{Family: fam, Agents: 10, Instance: inst, Run: r}
				for _, alg := range []string{pfcb.AlgFCB, pfcb.AlgNonFederated} {
					j := base
					j.Exp, j.Algorithm, j.Epsilon = "EXP1", alg, 0
					add(j)
				}
				for _, eps := range append([]float64{1}, o.Epsilons...) {
					j := base
					j.Exp, j.Algorithm, j.Epsilon = "EXP1/2", pfcb.AlgPFCB, eps
					add(j)
				}
				for _, n := range o.Agents {
					j := base
					j.Exp, j.Algorithm, j.Epsilon, j.Agents = "EXP3", pfcb.AlgPFCB, 1, n
					add(j)
				}
			}
		}
	}
	if err := o.Shard.Validate(); err != nil {
		return nil, fmt.Errorf("pfcb experiment: %w", err)
	}
	idx := o.Shard.Jobs(len(jobs))
	start := time.Now()
	runs := make([]Session, len(idx))
	err := experiment.Parallel(ctx, len(idx), o.Workers, func(i int) error {
		run, err := simulatePFCB(ctx, reg, jobs[idx[i]], o)
		if err != nil {
			return fmt.Errorf("%+v: %w", jobs[idx[i]], err)
		}
		if o.stamp != nil {
			o.stamp(&run)
		}
		runs[i] = run
		return nil
	}, func(i, done int) {
		if o.Progress != nil {
			j, run := jobs[idx[i]], runs[i]
			fmt.Fprintf(o.Progress, "[%d/%d] %-7s %-13s ε=%-4g n=%-2d instance %d run %d: regret/agent %.0f  %v\n", done, len(idx),
				j.Family, j.Algorithm, j.Epsilon, j.Agents, j.Instance, j.Run, run.RegretPerAgent, run.Elapsed.Round(time.Millisecond))
		}
	})
	if err != nil {
		return nil, err
	}
	rep := &Report{Runs: runs, Elapsed: time.Since(start)}
	if o.stamp != nil {
		rep.Elapsed = 0
	}
	if !o.Shard.Whole() {
		g := pfcbGridOptions{Rounds: o.Rounds, Instances: o.Instances, Runs: o.Runs, Epsilons: o.Epsilons, Agents: o.Agents, Seed: o.Seed}
		p, err := experiment.NewPartial(Experiment, g, o.Shard, len(jobs))
		if err != nil {
			return nil, err
		}
		p.Workers, p.ElapsedSeconds, p.LoadAverage = o.Workers, rep.Elapsed.Seconds(), experiment.LoadAverage()
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
	files, err := writePFCB(o, rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

// Experiment is this experiment's name in partial outputs and manifests.
const Experiment = "pfcb"

// pfcbGridOptions are the options that define EXP1–3's grid, as Run
// resolved them: all but the output, the workers and the progress.
type pfcbGridOptions struct {
	Rounds    int64     `json:"rounds"`
	Instances int       `json:"instances"`
	Runs      int       `json:"runs"`
	Epsilons  []float64 `json:"epsilons"`
	Agents    []int     `json:"agents"`
	Seed      int64     `json:"seed"`
}

// Merge writes into out, from the shards' partial outputs m (read by
// experiment.ReadPartials), what the unsharded run of EXP1–3 writes: the
// same CSV files, figures and results. The results name the shards'
// workers summed and the sum of their elapsed times.
func Merge(m *experiment.Merged, out string) (*Report, error) {
	if m.Experiment != Experiment {
		return nil, fmt.Errorf("pfcb merge: the partials are of experiment %q", m.Experiment)
	}
	var g pfcbGridOptions
	if err := json.Unmarshal(m.Grid, &g); err != nil {
		return nil, fmt.Errorf("pfcb merge: the grid's options: %w", err)
	}
	runs, err := experiment.Decode[Session](m)
	if err != nil {
		return nil, err
	}
	o := Options{Out: out, Rounds: g.Rounds, Instances: g.Instances, Runs: g.Runs, Epsilons: g.Epsilons, Agents: g.Agents,
		Seed: g.Seed, Workers: m.Workers}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	rep := &Report{Runs: runs, Elapsed: m.Elapsed}
	files, err := writePFCB(o, rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

func simulatePFCB(ctx context.Context, reg *protocol.Registry, j pfcbJob, o Options) (Session, error) {
	params := map[string]any{"algorithm": j.Algorithm, "rounds": o.Rounds}
	if j.Algorithm == pfcb.AlgPFCB {
		params["epsilon"] = j.Epsilon
	}
	instSeed := o.Seed + int64(j.Instance)
	simulation := map[string]any{"agents": int64(j.Agents), "producers": int64(30), "instance": j.Family,
		"instance_seed": instSeed, "seed": 1000*instSeed + int64(j.Run)}
	t0 := time.Now()
	res, err := sim.Run(ctx, reg, &protocol.Spec{Protocol: pfcb.Name, Params: params, Simulation: simulation}, sim.Options{})
	if err != nil {
		return Session{}, err
	}
	r := res.Result.(*pfcb.Result)
	return Session{pfcbJob: j, RegretPerAgent: r.RegretPerAgent, Violations: r.ConstraintViolations, Curve: r.Curve,
		CurveEvery: r.CurveEvery, EpsilonTotal: r.EpsilonTotal, Elapsed: time.Since(t0)}, nil
}

// pfcbMean is the mean regret per agent of the runs matching f.
func pfcbMean(runs []Session, f func(Session) bool) experiment.Summary {
	var xs []float64
	for _, r := range runs {
		if f(r) {
			xs = append(xs, r.RegretPerAgent)
		}
	}
	return experiment.Summarize(xs)
}

// pfcbPaired returns, for each n in ns, the mean over instances of the
// instance's mean regret at n (over its runs matching keep) divided by its
// mean regret at ns[0].
func pfcbPaired(runs []Session, instances int, ns []int, keep func(Session) bool) []float64 {
	out := make([]float64, len(ns))
	used := 0
	for inst := range instances {
		means := make([]float64, len(ns))
		ok := true
		for k, n := range ns {
			s := pfcbMean(runs, func(r Session) bool { return keep(r) && r.Instance == inst && r.Agents == n })
			if s.N == 0 || (k == 0 && s.Mean == 0) {
				ok = false
				break
			}
			means[k] = s.Mean
		}
		if !ok {
			continue
		}
		used++
		for k := range ns {
			out[k] += means[k] / means[0]
		}
	}
	for k := range out {
		out[k] /= float64(max(used, 1))
	}
	return out
}

func writePFCB(o Options, rep *Report) ([]string, error) {
	runs := rep.Runs
	var files []string
	runsPath := filepath.Join(o.Out, "pfcb_runs.csv")
	sorted := append([]Session(nil), runs...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].key() < sorted[b].key() })
	var rows [][]string
	for _, r := range sorted {
		rows = append(rows, []string{r.Family, r.Algorithm, experiment.FmtG(r.Epsilon), strconv.Itoa(r.Agents),
			strconv.Itoa(r.Instance), strconv.Itoa(r.Run), fmt.Sprintf("%.2f", r.RegretPerAgent), strconv.FormatInt(r.Violations, 10),
			fmt.Sprintf("%.4f", r.EpsilonTotal), fmt.Sprintf("%.2f", r.Elapsed.Seconds())})
	}
	if err := experiment.WriteCSV(runsPath, []string{"family", "algorithm", "epsilon", "agents", "instance", "run", "regret_per_agent", "constraint_violations", "epsilon_total", "seconds"}, rows); err != nil {
		return nil, err
	}
	files = append(files, runsPath)

	var b strings.Builder
	fmt.Fprintf(&b, "# P-FCB: EXP1–3, T = %d, m = 30, %d instances × %d runs per family\n\n", o.Rounds, o.Instances, o.Runs)
	fmt.Fprintf(&b, "%d simulated sessions in %v on %d workers. α = 0.4, δ = 0.01, t_lo = 200, t_hi = 40,000, ω1 = 0.1, ω2 = 10, ρ = 1, ζ = 0.3 (pure exploration ⌈3 ln(nT)/(2nζ²)⌉ rounds), oracle margin γ = 0.02.\n\n",
		len(runs), rep.Elapsed.Round(time.Second), o.Workers)

	exp1 := func(fam, alg string, eps float64) experiment.Summary {
		return pfcbMean(runs, func(r Session) bool {
			return r.Family == fam && r.Algorithm == alg && r.Agents == 10 && (alg != pfcb.AlgPFCB || r.Epsilon == eps)
		})
	}
	b.WriteString("## EXP1: regret per agent at T (n = 10)\n\n| instances | FCB | P-FCB (ε = 1) | Non-federated | P-FCB vs FCB | Non-fed. vs FCB | paper |\n|---|---|---|---|---|---|---|\n")
	paper := map[string]string{"uniform": "+136%, +233%", "normal": "+235%, +394%"}
	for _, fam := range []string{"uniform", "normal"} {
		f, p, nf := exp1(fam, pfcb.AlgFCB, 0), exp1(fam, pfcb.AlgPFCB, 1), exp1(fam, pfcb.AlgNonFederated, 0)
		fmt.Fprintf(&b, "| %s | %.0f (±%.0f) | %.0f (±%.0f) | %.0f (±%.0f) | %+.0f%% | %+.0f%% | %s |\n", fam, f.Mean, f.High-f.Mean,
			p.Mean, p.High-p.Mean, nf.Mean, nf.High-nf.Mean, 100*(p.Mean/f.Mean-1), 100*(nf.Mean/f.Mean-1), paper[fam])
		ok, open := experiment.Rising(f, p, nf)
		rep.Claims = append(rep.Claims, experiment.Claim{Text: fmt.Sprintf("regret FCB < P-FCB(ε=1) < Non-federated on %s instances", fam), Holds: ok,
			Unresolved: open, Note: fmt.Sprintf("means %.0f, %.0f, %.0f; judged by their 95 %% intervals", f.Mean, p.Mean, nf.Mean)})
	}
	eps := append([]float64(nil), o.Epsilons...)
	sort.Float64s(eps)
	b.WriteString("\n## EXP2: FRR = regret(P-FCB, ε) / regret(Non-federated), n = 10\n\n")
	experiment.WriteTableHead(&b, []string{"ε"}, "%g", eps)
	frr := map[string][]float64{}
	for _, fam := range []string{"uniform", "normal"} {
		nf := exp1(fam, pfcb.AlgNonFederated, 0).Mean
		fmt.Fprintf(&b, "| %s |", fam)
		for _, e := range eps {
			v := exp1(fam, pfcb.AlgPFCB, e).Mean / nf
			frr[fam] = append(frr[fam], v)
			fmt.Fprintf(&b, " %.3f |", v)
		}
		b.WriteString("\n")
		below, falling := true, true
		for i, e := range eps {
			if e >= 1 && frr[fam][i] >= 1 {
				below = false
			}
			if i > 0 && frr[fam][i] > frr[fam][i-1] {
				falling = false
			}
		}
		rep.Claims = append(rep.Claims,
			experiment.Claim{Text: fmt.Sprintf("FRR < 1 for ε ≥ 1 on %s instances", fam), Holds: below},
			experiment.Claim{Text: fmt.Sprintf("FRR falls as ε grows on %s instances", fam), Holds: falling, Note: fmt.Sprint(roundAll(frr[fam]))})
	}
	// Paired by instance: each instance's P-FCB regret over its own
	// non-federated regret, averaged — the instances' hardness cancels.
	b.WriteString("\nPaired by instance (each instance's FRR, mean over instances):\n\n")
	experiment.WriteTableHead(&b, []string{"ε"}, "%g", eps)
	for _, fam := range []string{"uniform", "normal"} {
		fmt.Fprintf(&b, "| %s |", fam)
		var paired []float64
		for _, e := range eps {
			var sum float64
			used := 0
			for inst := range o.Instances {
				nf := pfcbMean(runs, func(r Session) bool {
					return r.Family == fam && r.Algorithm == pfcb.AlgNonFederated && r.Agents == 10 && r.Instance == inst
				})
				pf := pfcbMean(runs, func(r Session) bool {
					return r.Family == fam && r.Algorithm == pfcb.AlgPFCB && r.Agents == 10 && r.Epsilon == e && r.Instance == inst
				})
				if nf.N > 0 && pf.N > 0 && nf.Mean > 0 {
					sum += pf.Mean / nf.Mean
					used++
				}
			}
			v := sum / float64(max(used, 1))
			paired = append(paired, v)
			fmt.Fprintf(&b, " %.3f |", v)
		}
		b.WriteString("\n")
		falling := true
		for i := 1; i < len(paired); i++ {
			if paired[i] > paired[i-1] {
				falling = false
			}
		}
		rep.Claims = append(rep.Claims, experiment.Claim{Text: fmt.Sprintf("FRR falls as ε grows on %s instances, paired by instance", fam),
			Holds: falling, Note: fmt.Sprint(roundAll(paired))})
	}
	b.WriteString("\n## EXP3: regret per agent at T against n (P-FCB, ε = 1)\n\n")
	experiment.WriteTableHead(&b, []string{"n"}, "%d", o.Agents)
	perN := map[string][]float64{}
	for _, fam := range []string{"uniform", "normal"} {
		fmt.Fprintf(&b, "| %s |", fam)
		var sums []experiment.Summary
		for _, n := range o.Agents {
			s := pfcbMean(runs, func(r Session) bool {
				return r.Family == fam && r.Algorithm == pfcb.AlgPFCB && r.Epsilon == 1 && r.Agents == n
			})
			perN[fam] = append(perN[fam], s.Mean)
			sums = append(sums, s)
			fmt.Fprintf(&b, " %.0f (±%.0f) |", s.Mean, s.High-s.Mean)
		}
		b.WriteString("\n")
		slices.Reverse(sums)
		falling, open := experiment.Rising(sums...)
		rep.Claims = append(rep.Claims, experiment.Claim{Text: fmt.Sprintf("per-agent regret falls as n grows on %s instances", fam), Holds: falling,
			Unresolved: open, Note: fmt.Sprintf("means %v; judged by their 95 %% intervals", roundAll(perN[fam]))})
	}
	// The instances differ in hardness far more than the n's do (the spread
	// above), and instance i is the same problem at every n — the same
	// qualities, and the first n agents' costs and capacities — so the
	// comparison paired by instance is the sharper test: each instance's
	// regret at n over its regret at the smallest n, averaged.
	b.WriteString("\nPaired by instance (regret at n / regret at the smallest n, mean over instances):\n\n")
	experiment.WriteTableHead(&b, []string{"n"}, "%d", o.Agents)
	for _, fam := range []string{"uniform", "normal"} {
		ratios := pfcbPaired(runs, o.Instances, o.Agents, func(r Session) bool {
			return r.Family == fam && r.Algorithm == pfcb.AlgPFCB && r.Epsilon == 1
		})
		fmt.Fprintf(&b, "| %s |", fam)
		falling := true
		for i, v := range ratios {
			fmt.Fprintf(&b, " %.3f |", v)
			if i > 0 && v > ratios[i-1] {
				falling = false
			}
		}
		b.WriteString("\n")
		rep.Claims = append(rep.Claims, experiment.Claim{Text: fmt.Sprintf("per-agent regret falls as n grows on %s instances, paired by instance", fam),
			Holds: falling, Note: fmt.Sprint(roundAll(ratios))})
	}
	b.WriteString("\n## The paper's claims\n\n")
	experiment.WriteClaims(&b, rep.Claims)
	figs, err := plotPFCB(o, runs, eps, frr, perN)
	if err != nil {
		return nil, err
	}
	files = append(files, figs...)
	mdPath := filepath.Join(o.Out, "pfcb_results.md")
	if err := os.WriteFile(mdPath, []byte(b.String()), 0o644); err != nil {
		return nil, err
	}
	return append(files, mdPath), nil
}

func roundAll(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = math.Round(x*1000) / 1000
	}
	return out
}
