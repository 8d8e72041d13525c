package pfcb

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

// SensitivityOptions configure the sensitivity study of the gap between
// our EXP1 and the paper's (experiment pfcb --sensitivity).
type SensitivityOptions struct {
	// Out is the directory pfcb_sensitivity.md and its CSV files go to.
	Out string
	// Rounds is T (0: the default, 100,000).
	Rounds int64
	// Instances per family (0: the default, 4) and Runs per instance (0:
	// the default, 1).
	Instances, Runs int
	// Workers run simulations in parallel (0: the number of CPUs).
	Workers int
	// Seed is the first instance seed, as in Options.
	Seed int64
	// Settings names the settings to run (nil: all); "defaults" always runs.
	Settings []string
	// Progress receives one line per finished run; nil for none.
	Progress io.Writer
}

// pfcbPaperRatio returns the paper's EXP1 (§6.2) regret ratios to FCB on a family:
// P-FCB(ε = 1) and Non-federated (uniform +136 %, +233 %; normal +235 %,
// +394 %).
func pfcbPaperRatio(family string) (pfcbRatio, nonFedRatio float64) {
	if family == "normal" {
		return 3.35, 4.94
	}
	return 2.36, 3.33
}

// pfcbCloseFactor is how near a ratio must be to the paper's to count as
// reproducing it: within ×/÷ 1.25.
const pfcbCloseFactor = 1.25

// sensJob is one simulated session of the study.
type sensJob struct {
	Setting   int // index into the settings; the first job of a key runs it
	Family    string
	Algorithm string
	Epsilon   float64
	Agents    int
	Instance  int
	Run       int
	Params    map[string]any
	Sim       map[string]any
}

// key identifies the session a job runs: settings that do not change an
// algorithm share its runs.
func (j sensJob) key() string {
	return fmt.Sprintf("%s|%s|%g|%d|%d|%d|%s|%s", j.Family, j.Algorithm, j.Epsilon, j.Agents, j.Instance, j.Run, canon(j.Params), canon(j.Sim))
}

func canon(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%v;", k, m[k])
	}
	return b.String()
}

// SensRun is the outcome of one session: its regret per agent at T, at
// T/10 (the horizon read shorter) and from T/100 to T (net of the
// exploration phase and the first rounds), and its constraint violations.
type SensRun struct {
	RegretT, RegretT10, RegretNet float64
	Violations                    int64
	Elapsed                       time.Duration
}

// SensCell is one setting on one family: the three algorithms' mean regret
// per agent (at T) and the ratios to FCB.
type SensCell struct {
	Setting, Choice, Family string
	FCB, PFCB, NonFed       float64
	// PRatio and NRatio are P-FCB's and Non-federated's regret over FCB's,
	// at T; PRatio10, NRatio10 at T/10; PRatioNet, NRatioNet net of the
	// first T/100 rounds.
	PRatio, NRatio, PRatio10, NRatio10, PRatioNet, NRatioNet float64
	// Violations is the mean constraint violations per agent, FCB, P-FCB,
	// Non-federated.
	Violations [3]float64
	// Ordered: FCB < P-FCB < Non-federated at T.
	Ordered bool
	// Distance is |ln(PRatio/paper)| + |ln(NRatio/paper)|; Close: both
	// ratios within pfcbCloseFactor of the paper's, and Ordered.
	Distance float64
	Close    bool
}

// SensitivityReport is what the study produced.
type SensitivityReport struct {
	Cells   []SensCell
	Claims  []experiment.Claim
	Jobs    int
	Elapsed time.Duration
	Files   []string
}

// RunSensitivity runs FCB, P-FCB (ε = 1) and Non-federated under each
// setting of the sweep (pfcbSettings) on uniform and normal instances, then,
// under the setting closest to the paper's EXP1, P-FCB at ε = 0.25 and 4 and
// with n = 2 to check the paper's EXP2 and EXP3 statements there, and writes
// DIR/pfcb_sensitivity.md, pfcb_sensitivity.csv and
// pfcb_sensitivity_runs.csv.
func RunSensitivity(ctx context.Context, reg *protocol.Registry, o SensitivityOptions) (*SensitivityReport, error) {
	if o.Rounds < 0 || o.Instances < 0 || o.Runs < 0 || o.Workers < 0 {
		return nil, fmt.Errorf("pfcb sensitivity: rounds, instances, runs and workers must not be negative (0 for the default)")
	}
	if o.Rounds == 0 {
		o.Rounds = 100000
	}
	if _, err := (pfcb.Family{}).ParseParams(map[string]any{"algorithm": "pfcb", "rounds": o.Rounds}); err != nil {
		return nil, fmt.Errorf("pfcb sensitivity: rounds %d does not suit the federated runs: %w", o.Rounds, err)
	}
	if o.Instances == 0 {
		o.Instances = 4
	}
	if o.Runs == 0 {
		o.Runs = 1
	}
	if o.Workers == 0 {
		o.Workers = runtime.NumCPU()
	}
	all := pfcbSettings()
	var settings []Setting
	for i, s := range all {
		if i == 0 || len(o.Settings) == 0 || slices.Contains(o.Settings, s.Name) {
			settings = append(settings, s)
		}
	}
	for _, name := range o.Settings {
		if !slices.ContainsFunc(all, func(s Setting) bool { return s.Name == name }) {
			return nil, fmt.Errorf("pfcb sensitivity: no setting %q (known: %s)", name, settingNames(all))
		}
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("creating the output directory: %w", err)
	}
	start := time.Now()
	runs := map[string]SensRun{}
	var jobs []sensJob
	for si, s := range settings {
		for _, fam := range []string{"uniform", "normal"} {
			for _, alg := range []string{pfcb.AlgFCB, pfcb.AlgPFCB, pfcb.AlgNonFederated} {
				eps := 0.0
				if alg == pfcb.AlgPFCB {
					eps = 1
				}
				jobs = append(jobs, sensJobs(si, s, fam, alg, eps, 0, o)...)
			}
		}
	}
	if err := runSens(ctx, reg, jobs, runs, settings, o); err != nil {
		return nil, err
	}
	rep := &SensitivityReport{}
	for si, s := range settings {
		for _, fam := range []string{"uniform", "normal"} {
			rep.Cells = append(rep.Cells, sensCell(si, s, fam, runs, o))
		}
	}
	// The setting closest to the paper on both families together.
	best, bestD := 0, math.Inf(1)
	for si := range settings {
		if d := rep.Cells[2*si].Distance + rep.Cells[2*si+1].Distance; d < bestD {
			best, bestD = si, d
		}
	}
	// The paper's other statements under it: EXP2 (regret falls as ε
	// grows; FRR < 1) and EXP3 (per-agent regret falls as n grows).
	var extra []sensJob
	for _, fam := range []string{"uniform", "normal"} {
		for _, eps := range []float64{0.25, 4} {
			extra = append(extra, sensJobs(best, settings[best], fam, pfcb.AlgPFCB, eps, 0, o)...)
		}
		extra = append(extra, sensJobs(best, settings[best], fam, pfcb.AlgPFCB, 1, 2, o)...)
	}
	if err := runSens(ctx, reg, extra, runs, settings, o); err != nil {
		return nil, err
	}
	rep.Jobs = len(runs)
	rep.Elapsed = time.Since(start)
	rep.Claims = sensClaims(best, settings[best], rep.Cells[2*best:2*best+2], runs, o)
	files, err := writeSens(o, settings, best, jobs, extra, runs, rep)
	if err != nil {
		return nil, err
	}
	rep.Files = files
	return rep, nil
}

func settingNames(ss []Setting) string {
	var names []string
	for _, s := range ss {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// sensJobs are the runs of one algorithm under setting s on a family, at
// ε and with n agents (0: the setting's, else 10).
func sensJobs(si int, s Setting, fam, alg string, eps float64, n int, o SensitivityOptions) []sensJob {
	if n == 0 {
		n = s.Agents
	}
	if n == 0 {
		n = 10
	}
	params := map[string]any{}
	for k, v := range s.Params {
		if pfcbRelevant(alg, k) {
			params[k] = v
		}
	}
	simulation := map[string]any{}
	for k, v := range s.Simulation {
		if pfcbRelevantSim(fam, k) {
			simulation[k] = v
		}
	}
	var out []sensJob
	for inst := range o.Instances {
		for r := range o.Runs {
			out = append(out, sensJob{Setting: si, Family: fam, Algorithm: alg, Epsilon: eps, Agents: n, Instance: inst, Run: r,
				Params: params, Sim: simulation})
		}
	}
	return out
}

// runSens runs the jobs whose session is not in runs yet, in parallel.
func runSens(ctx context.Context, reg *protocol.Registry, jobs []sensJob, runs map[string]SensRun, settings []Setting, o SensitivityOptions) error {
	var todo []sensJob
	queued := map[string]bool{}
	for _, j := range jobs {
		if _, ok := runs[j.key()]; !ok && !queued[j.key()] {
			queued[j.key()] = true
			todo = append(todo, j)
		}
	}
	out := make([]SensRun, len(todo))
	err := experiment.Parallel(ctx, len(todo), o.Workers, func(i int) error {
		r, err := simulateSens(ctx, reg, todo[i], o)
		if err != nil {
			return fmt.Errorf("setting %s, %s %s ε=%g n=%d instance %d run %d: %w", settings[todo[i].Setting].Name, todo[i].Family,
				todo[i].Algorithm, todo[i].Epsilon, todo[i].Agents, todo[i].Instance, todo[i].Run, err)
		}
		out[i] = r
		return nil
	}, func(i, done int) {
		if o.Progress != nil {
			j := todo[i]
			fmt.Fprintf(o.Progress, "[%d/%d] %-14s %-7s %-13s ε=%-4g n=%-2d instance %d run %d: regret/agent %.0f  %v\n", done, len(todo),
				settings[j.Setting].Name, j.Family, j.Algorithm, j.Epsilon, j.Agents, j.Instance, j.Run, out[i].RegretT, out[i].Elapsed.Round(time.Millisecond))
		}
	})
	if err != nil {
		return err
	}
	for i, j := range todo {
		runs[j.key()] = out[i]
	}
	return nil
}

func simulateSens(ctx context.Context, reg *protocol.Registry, j sensJob, o SensitivityOptions) (SensRun, error) {
	params := map[string]any{"algorithm": j.Algorithm, "rounds": o.Rounds}
	for k, v := range j.Params {
		params[k] = v
	}
	if j.Algorithm == pfcb.AlgPFCB {
		params["epsilon"] = j.Epsilon
	}
	instSeed := o.Seed + int64(j.Instance)
	simulation := map[string]any{"agents": int64(j.Agents), "producers": int64(30), "instance": j.Family,
		"instance_seed": instSeed, "seed": 1000*instSeed + int64(j.Run)}
	for k, v := range j.Sim {
		simulation[k] = v
	}
	t0 := time.Now()
	res, err := sim.Run(ctx, reg, &protocol.Spec{Protocol: pfcb.Name, Params: params, Simulation: simulation}, sim.Options{})
	if err != nil {
		return SensRun{}, err
	}
	r := res.Result.(*pfcb.Result)
	return SensRun{RegretT: r.RegretPerAgent, RegretT10: curveAt(r, o.Rounds/10), RegretNet: r.RegretPerAgent - curveAt(r, o.Rounds/100),
		Violations: r.ConstraintViolations, Elapsed: time.Since(t0)}, nil
}

// curveAt is the cumulative regret per agent at the last curve point at or
// before round t (0 before the first).
func curveAt(r *pfcb.Result, t int64) float64 {
	if r.CurveEvery <= 0 {
		return 0
	}
	k := int(t/r.CurveEvery) - 1
	if k < 0 {
		return 0
	}
	return r.Curve[min(k, len(r.Curve)-1)]
}

// sensMean is the mean over instances and runs of one algorithm's runs under
// setting s on a family.
func sensMean(si int, s Setting, fam, alg string, eps float64, n int, runs map[string]SensRun, o SensitivityOptions) (t, t10, net, viol float64) {
	jobs := sensJobs(si, s, fam, alg, eps, n, o)
	for _, j := range jobs {
		r := runs[j.key()]
		t += r.RegretT
		t10 += r.RegretT10
		net += r.RegretNet
		viol += float64(r.Violations)
	}
	k := float64(len(jobs))
	return t / k, t10 / k, net / k, viol / k
}

func sensCell(si int, s Setting, fam string, runs map[string]SensRun, o SensitivityOptions) SensCell {
	f, f10, fn, fv := sensMean(si, s, fam, pfcb.AlgFCB, 0, 0, runs, o)
	p, p10, pn, pv := sensMean(si, s, fam, pfcb.AlgPFCB, 1, 0, runs, o)
	nf, nf10, nfn, nfv := sensMean(si, s, fam, pfcb.AlgNonFederated, 0, 0, runs, o)
	c := SensCell{Setting: s.Name, Choice: s.Choice, Family: fam, FCB: f, PFCB: p, NonFed: nf,
		PRatio: p / f, NRatio: nf / f, PRatio10: p10 / f10, NRatio10: nf10 / f10, PRatioNet: pn / fn, NRatioNet: nfn / fn,
		Violations: [3]float64{fv, pv, nfv}, Ordered: f < p && p < nf}
	pp, pn2 := pfcbPaperRatio(fam)
	c.Distance = math.Abs(math.Log(c.PRatio/pp)) + math.Abs(math.Log(c.NRatio/pn2))
	within := func(x, paper float64) bool { return x >= paper/pfcbCloseFactor && x <= paper*pfcbCloseFactor }
	c.Close = c.Ordered && within(c.PRatio, pp) && within(c.NRatio, pn2)
	return c
}

// sensClaims checks the paper's statements under the closest setting.
func sensClaims(si int, s Setting, cells []SensCell, runs map[string]SensRun, o SensitivityOptions) []experiment.Claim {
	var claims []experiment.Claim
	for _, c := range cells {
		pp, pn := pfcbPaperRatio(c.Family)
		claims = append(claims,
			experiment.Claim{Text: fmt.Sprintf("EXP1 (%s): FCB < P-FCB(ε=1) < Non-federated", c.Family), Holds: c.Ordered,
				Note: fmt.Sprintf("%.0f < %.0f < %.0f", c.FCB, c.PFCB, c.NonFed)},
			experiment.Claim{Text: fmt.Sprintf("EXP1 (%s): P-FCB and Non-federated at the paper's +%.0f%% and +%.0f%% over FCB (within ×/÷%.2f)",
				c.Family, 100*(pp-1), 100*(pn-1), pfcbCloseFactor), Holds: c.Close,
				Note: fmt.Sprintf("%+.0f%%, %+.0f%%", 100*(c.PRatio-1), 100*(c.NRatio-1))})
		lo, _, _, _ := sensMean(si, s, c.Family, pfcb.AlgPFCB, 0.25, 0, runs, o)
		hi, _, _, _ := sensMean(si, s, c.Family, pfcb.AlgPFCB, 4, 0, runs, o)
		claims = append(claims,
			experiment.Claim{Text: fmt.Sprintf("EXP2 (%s): regret falls as ε grows (0.25, 1, 4)", c.Family), Holds: lo > c.PFCB && c.PFCB > hi,
				Note: fmt.Sprintf("%.0f, %.0f, %.0f", lo, c.PFCB, hi)},
			experiment.Claim{Text: fmt.Sprintf("EXP2 (%s): FRR < 1 at ε = 1", c.Family), Holds: c.PFCB < c.NonFed,
				Note: fmt.Sprintf("FRR %.3f", c.PFCB/c.NonFed)})
		n2, _, _, _ := sensMean(si, s, c.Family, pfcb.AlgPFCB, 1, 2, runs, o)
		n := s.Agents
		if n == 0 {
			n = 10
		}
		claims = append(claims, experiment.Claim{Text: fmt.Sprintf("EXP3 (%s): per-agent regret lower with n = %d than n = 2", c.Family, n),
			Holds: c.PFCB < n2, Note: fmt.Sprintf("%.0f vs %.0f", c.PFCB, n2)})
	}
	return claims
}
