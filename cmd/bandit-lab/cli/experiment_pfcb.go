package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/experiment/pfcb"
)

func runExperimentPFCB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment pfcb", "experiment pfcb [--out DIR] [--rounds T] [--instances N] [--runs N] [--epsilons E,E,...] [--agents N,N,...] [--workers N] [--seed N] [--shard I/N] [--quiet]\n       bandit-lab experiment pfcb --sensitivity [--settings NAME,...] [--out DIR] [--rounds T] [--instances N] [--runs N] [--workers N] [--seed N] [--quiet]", `
bandit-lab experiment pfcb --out results/pfcb --rounds 100000 --instances 10 --runs 3
bandit-lab experiment pfcb --sensitivity --out results/pfcb --instances 4 --runs 1   # the gap to the paper's EXP1: pfcb_sensitivity.md`, stderr)
	out := fs.String("out", "results/pfcb", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	rounds := fs.Int64("rounds", 100000, "rounds T of every session")
	instances := fs.Int("instances", 10, "instances per family (uniform, normal); the instances vary far more than the effects measured, and the paired comparisons need several")
	runs := fs.Int("runs", 3, "runs per instance")
	epsilons := fs.String("epsilons", "0.25,0.5,1,2,4,8", "EXP2's privacy budgets")
	agents := fs.String("agents", "2,4,6,8,10", "EXP3's numbers of agents")
	workers := fs.Int("workers", 0, "parallel simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first instance seed")
	shardFlag := fs.String("shard", "", shardUsage+" (EXP1–3 only; the sensitivity study runs whole)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	sensitivity := fs.Bool("sensitivity", false, "run the sensitivity study of EXP1's gaps to the paper over the choices it leaves open (default 4 instances × 1 run) instead of EXP1–3")
	settings := fs.String("settings", "", "with --sensitivity: the settings to run, comma-separated (default all; the defaults always run)")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if err := clikit.AtLeastOne(fs, "rounds", "instances", "runs", "workers"); err != nil {
		return err
	}
	if *sensitivity && *shardFlag != "" {
		return clikit.UsageError{Msg: "experiment pfcb: --shard splits EXP1–3's grid; the sensitivity study runs whole"}
	}
	if *sensitivity {
		return runPFCBSensitivity(ctx, fs, args, *out, *rounds, *workers, *seed, *settings, *quiet, stdout, stderr)
	}
	if *settings != "" {
		return clikit.UsageError{Msg: "experiment pfcb: --settings needs --sensitivity"}
	}
	var eps []float64
	for _, f := range strings.Split(*epsilons, ",") {
		e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(e > 0) {
			return clikit.UsageError{Msg: fmt.Sprintf("experiment pfcb: --epsilons %q: %q is not a positive number", *epsilons, f)}
		}
		eps = append(eps, e)
	}
	var ns []int
	for _, f := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 {
			return clikit.UsageError{Msg: fmt.Sprintf("experiment pfcb: --agents %q: %q is not a number of agents (at least 2)", *agents, f)}
		}
		ns = append(ns, n)
	}
	shard, err := parseShard("pfcb", *shardFlag)
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	o := pfcb.Options{Shard: shard, Out: *out, Rounds: *rounds, Instances: *instances, Runs: *runs, Epsilons: eps, Agents: ns, Workers: *workers, Seed: *seed}
	if !*quiet {
		o.Progress = stderr
	}
	m := manifest("pfcb", args)
	rep, err := pfcb.Run(ctx, reg, o)
	if err != nil {
		return err
	}
	return finish(stdout, m, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
}

// runPFCBSensitivity runs experiment pfcb --sensitivity: --instances and
// --runs default to the study's (4 and 1) unless given.
func runPFCBSensitivity(ctx context.Context, fs *flag.FlagSet, args []string, out string, rounds int64, workers int, seed int64, settings string, quiet bool, stdout, stderr io.Writer) error {
	o := pfcb.SensitivityOptions{Out: out, Rounds: rounds, Workers: workers, Seed: seed}
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
		return clikit.UsageError{Msg: fmt.Sprintf("experiment pfcb --sensitivity: %s set EXP2 and EXP3, which the study does not run", strings.Join(unused, " and "))}
	}
	if settings != "" {
		for _, s := range strings.Split(settings, ",") {
			o.Settings = append(o.Settings, strings.TrimSpace(s))
		}
	}
	if !quiet {
		o.Progress = stderr
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	m := manifest("pfcb", args)
	rep, err := pfcb.RunSensitivity(ctx, reg, o)
	if err != nil {
		return err
	}
	// The study shares the directory of the main run: a manifest of its own.
	return finishAs(stdout, m, fs, out, "manifest_sensitivity.json", simulated(rep.Jobs), rep.Elapsed, rep.Claims, rep.Files)
}
