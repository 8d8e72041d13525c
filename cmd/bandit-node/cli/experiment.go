package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/experiment"
)

// experimentCommands are the experiments of experiment.
func experimentCommands() []command {
	return []command{
		{"bai", "multi-agent best-arm identification (Rio et al.)", runExperimentBAI, nil},
		{"pfcb", "P-FCB (Solanki et al.)", runExperimentPFCB, nil},
		{"mpccb", "privacy-preserving contextual bandits (Hannun et al.)", runExperimentMPCCB, nil},
		{"samba", "SAMBA, secure federated bandits (Ciucanu et al.)", runExperimentSAMBA, nil},
	}
}

func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node experiment NAME [flags]\n\nExperiments:\n  bai    multi-agent best-arm identification: Figures 1, 5 and 6 of Rio et al. (ICML 2023)\n  pfcb   P-FCB: EXP1–3 of Solanki et al. (ECML PKDD 2022)\n  mpccb  privacy-preserving contextual bandits: Figures 1–4 and Table 1 of Hannun et al.\n  samba  SAMBA: Figure 8 of Ciucanu et al. (secure against standard: reward, time, per-role costs)")
		fmt.Fprintln(stdout, "\nExample:\n  bandit-node experiment bai --out results/bai --runs 10")
		if len(args) == 0 {
			return usageError{"experiment: name an experiment"}
		}
		return nil
	}
	for _, c := range experimentCommands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageError{fmt.Sprintf("experiment: unknown experiment %q (known: bai, pfcb, mpccb, samba)", args[0])}
}

func runExperimentBAI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment bai", "experiment bai [--out DIR] [--runs N] [--agents N,N,...] [--problem 1|2] [--workers N] [--seed N] [--quiet]", `
bandit-node experiment bai --out results/bai --runs 10 --agents 64,128,256,512,1024`, stderr)
	out := fs.String("out", "results/bai", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	runs := fs.Int("runs", 10, "runs per point")
	agents := fs.String("agents", "64,128,256,512,1024", "comma-separated values of N")
	problem := fs.Int("problem", 1, "the paper's problem: 1 (Bernoulli) or 2 (Gaussian)")
	workers := fs.Int("workers", 0, "parallel simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if err := atLeastOne(fs, "runs", "workers"); err != nil {
		return err
	}
	if *problem != 1 && *problem != 2 {
		return usageError{fmt.Sprintf("experiment bai: --problem %d: the paper has problems 1 and 2", *problem)}
	}
	var ns []int
	for _, f := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return usageError{fmt.Sprintf("experiment bai: --agents %q: %q is not a positive number", *agents, f)}
		}
		ns = append(ns, n)
	}
	reg, err := Families()
	if err != nil {
		return err
	}
	o := experiment.BAIOptions{Out: *out, Runs: *runs, Agents: ns, Problem: *problem, Workers: *workers, Seed: *seed}
	if !*quiet {
		o.Progress = stderr
	}
	rep, err := experiment.RunBAI(ctx, reg, o)
	if err != nil {
		return err
	}
	printClaims(stdout, len(rep.Runs), rep.Elapsed, rep.Claims, rep.Files)
	return nil
}

func printClaims(stdout io.Writer, runs int, elapsed time.Duration, claims []experiment.Claim, files []string) {
	fmt.Fprintf(stdout, "%d sessions simulated in %v\n", runs, elapsed.Round(time.Millisecond))
	for _, c := range claims {
		mark := "holds"
		if !c.Holds {
			mark = "DOES NOT HOLD"
		}
		fmt.Fprintf(stdout, "  %-13s %s %s\n", mark, c.Text, c.Note)
	}
	fmt.Fprintln(stdout, "wrote:")
	for _, f := range files {
		fmt.Fprintln(stdout, "  "+f)
	}
}

func runExperimentPFCB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment pfcb", "experiment pfcb [--out DIR] [--rounds T] [--instances N] [--runs N] [--epsilons E,E,...] [--agents N,N,...] [--workers N] [--seed N] [--quiet]\n       bandit-node experiment pfcb --sensitivity [--settings NAME,...] [--out DIR] [--rounds T] [--instances N] [--runs N] [--workers N] [--seed N] [--quiet]", `
bandit-node experiment pfcb --out results/pfcb --rounds 100000 --instances 10 --runs 3
bandit-node experiment pfcb --sensitivity --out results/pfcb --instances 4 --runs 1   # the gap to the paper's EXP1: pfcb_sensitivity.md`, stderr)
	out := fs.String("out", "results/pfcb", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	rounds := fs.Int64("rounds", 100000, "rounds T of every session")
	instances := fs.Int("instances", 10, "instances per family (uniform, normal); the instances vary far more than the effects measured, and the paired comparisons need several")
	runs := fs.Int("runs", 3, "runs per instance")
	epsilons := fs.String("epsilons", "0.25,0.5,1,2,4,8", "EXP2's privacy budgets")
	agents := fs.String("agents", "2,4,6,8,10", "EXP3's numbers of agents")
	workers := fs.Int("workers", 0, "parallel simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first instance seed")
	quiet := fs.Bool("quiet", false, "no progress lines")
	sensitivity := fs.Bool("sensitivity", false, "run the sensitivity study of EXP1's gaps to the paper over the choices it leaves open (default 4 instances × 1 run) instead of EXP1–3")
	settings := fs.String("settings", "", "with --sensitivity: the settings to run, comma-separated (default all; the defaults always run)")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if err := atLeastOne(fs, "rounds", "instances", "runs", "workers"); err != nil {
		return err
	}
	if *sensitivity {
		return runPFCBSensitivity(ctx, fs, *out, *rounds, *workers, *seed, *settings, *quiet, stdout, stderr)
	}
	if *settings != "" {
		return usageError{"experiment pfcb: --settings needs --sensitivity"}
	}
	var eps []float64
	for _, f := range strings.Split(*epsilons, ",") {
		e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(e > 0) {
			return usageError{fmt.Sprintf("experiment pfcb: --epsilons %q: %q is not a positive number", *epsilons, f)}
		}
		eps = append(eps, e)
	}
	var ns []int
	for _, f := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return usageError{fmt.Sprintf("experiment pfcb: --agents %q: %q is not a number of agents (at least 2)", *agents, f)}
		}
		ns = append(ns, n)
	}
	reg, err := Families()
	if err != nil {
		return err
	}
	o := experiment.PFCBOptions{Out: *out, Rounds: *rounds, Instances: *instances, Runs: *runs, Epsilons: eps, Agents: ns, Workers: *workers, Seed: *seed}
	if !*quiet {
		o.Progress = stderr
	}
	rep, err := experiment.RunPFCB(ctx, reg, o)
	if err != nil {
		return err
	}
	printClaims(stdout, len(rep.Runs), rep.Elapsed, rep.Claims, rep.Files)
	return nil
}

// runPFCBSensitivity runs experiment pfcb --sensitivity: --instances and
// --runs default to the study's (4 and 1) unless given.
func runPFCBSensitivity(ctx context.Context, fs *flag.FlagSet, out string, rounds int64, workers int, seed int64, settings string, quiet bool, stdout, stderr io.Writer) error {
	o := experiment.PFCBSensitivityOptions{Out: out, Rounds: rounds, Workers: workers, Seed: seed}
	var unused []string
	fs.Visit(func(f *flag.Flag) {
		n, _ := strconv.Atoi(f.Value.String())
		switch f.Name {
		case "instances":
			o.Instances = n
		case "runs":
			o.Runs = n
		case "epsilons", "agents":
			unused = append(unused, "--"+f.Name)
		}
	})
	if len(unused) > 0 {
		return usageError{fmt.Sprintf("experiment pfcb --sensitivity: %s set EXP2 and EXP3, which the study does not run", strings.Join(unused, " and "))}
	}
	if settings != "" {
		for _, s := range strings.Split(settings, ",") {
			o.Settings = append(o.Settings, strings.TrimSpace(s))
		}
	}
	if !quiet {
		o.Progress = stderr
	}
	reg, err := Families()
	if err != nil {
		return err
	}
	rep, err := experiment.RunPFCBSensitivity(ctx, reg, o)
	if err != nil {
		return err
	}
	printClaims(stdout, rep.Jobs, rep.Elapsed, rep.Claims, rep.Files)
	return nil
}

func runExperimentMPCCB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment mpccb", "experiment mpccb [--out DIR] [--steps N] [--runs N] [--epsilons E,E,...] [--timing-steps N] [--timing-repeats N] [--workers N] [--seed N] [--quick] [--quiet]", `
bandit-node experiment mpccb --out results/mpccb
bandit-node experiment mpccb --out results/mpccb-paper --steps 60000 --runs 10   # the paper's size: ~1.5 h on 2 CPUs
bandit-node experiment mpccb --out /tmp/mpccb --quick                           # smoke test, under a minute`, stderr)
	out := fs.String("out", "results/mpccb", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	steps := fs.Int64("steps", 0, "steps T of each Fashion-MNIST reward run, 100..60000 (default 10000; --quick 500)")
	runs := fs.Int("runs", 0, "runs per ε (default 3; --quick 1)")
	epsilons := fs.String("epsilons", "", "Figure 2's ε values (default 0.005,0.01,0.02,0.05,0.1,0.2,0.5); Figure 1's 0.01,0.05,0.1,0.2 are always run")
	timingSteps := fs.Int64("timing-steps", 0, "steps of each timing run of Figures 3 and 4 (default 100; --quick 40); they run one at a time")
	timingRepeats := fs.Int("timing-repeats", 0, "runs of each timing point; the figures take the fastest (default 2; --quick 1)")
	workers := fs.Int("workers", 0, "parallel reward simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	quick := fs.Bool("quick", false, "a small smoke-test version (500 steps, 1 run, few points)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	var eps []float64
	if *epsilons != "" {
		for _, f := range strings.Split(*epsilons, ",") {
			e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(e > 0 && e <= 1) {
				return usageError{fmt.Sprintf("experiment mpccb: --epsilons %q: %q is not in (0, 1]", *epsilons, f)}
			}
			eps = append(eps, e)
		}
	}
	if err := atLeastOne(fs, "steps", "runs", "timing-steps", "timing-repeats", "workers"); err != nil {
		return err
	}
	if setFlags(fs)["steps"] && (*steps < experiment.MPCCBMinSteps || *steps > experiment.MPCCBMaxSteps) {
		return usageError{fmt.Sprintf("experiment mpccb: --steps %d: must be within %d..%d (Fashion-MNIST has %d training images; the curves need %d checkpoints)",
			*steps, experiment.MPCCBMinSteps, experiment.MPCCBMaxSteps, experiment.MPCCBMaxSteps, experiment.MPCCBMinSteps)}
	}
	reg, err := Families()
	if err != nil {
		return err
	}
	o := experiment.MPCCBOptions{Out: *out, Steps: *steps, Runs: *runs, Epsilons: eps, TimingSteps: *timingSteps, TimingRepeats: *timingRepeats, Workers: *workers,
		Seed: *seed, Quick: *quick, Command: strings.Join(append([]string{"bandit-node experiment mpccb"}, args...), " ")}
	if !*quiet {
		o.Progress = stderr
	}
	rep, err := experiment.RunMPCCB(ctx, reg, o)
	if err != nil {
		return err
	}
	printClaims(stdout, len(rep.Runs), rep.Elapsed, rep.Claims, rep.Files)
	return nil
}
