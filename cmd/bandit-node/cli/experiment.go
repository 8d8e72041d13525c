package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/experiment"
)

func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node experiment NAME [flags]\n\nExperiments:\n  bai   multi-agent best-arm identification: Figures 1, 5 and 6 of Rio et al. (ICML 2023)")
		fmt.Fprintln(stdout, "\nExample:\n  bandit-node experiment bai --out results/bai --runs 10")
		if len(args) == 0 {
			return usageError{"experiment: name an experiment"}
		}
		return nil
	}
	switch args[0] {
	case "bai":
		return runExperimentBAI(ctx, args[1:], stdout, stderr)
	}
	return usageError{fmt.Sprintf("experiment: unknown experiment %q (known: bai)", args[0])}
}

func runExperimentBAI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment bai", "experiment bai [--out DIR] [--runs N] [--agents N,N,...] [--problem 1|2] [--workers N] [--seed N] [--quiet]", `
bandit-node experiment bai --out results/bai --runs 10 --agents 64,128,256,512,1024`, stderr)
	out := fs.String("out", "results/bai", "directory for the CSV files, figures (PNG) and written results")
	runs := fs.Int("runs", 10, "runs per point")
	agents := fs.String("agents", "64,128,256,512,1024", "comma-separated values of N")
	problem := fs.Int("problem", 1, "the paper's problem: 1 (Bernoulli) or 2 (Gaussian)")
	workers := fs.Int("workers", 0, "parallel simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
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
	fmt.Fprintf(stdout, "%d sessions simulated in %v\n", len(rep.Runs), rep.Elapsed.Round(1e6))
	for _, c := range rep.Claims {
		mark := "holds"
		if !c.Holds {
			mark = "DOES NOT HOLD"
		}
		fmt.Fprintf(stdout, "  %-13s %s %s\n", mark, c.Text, c.Note)
	}
	fmt.Fprintln(stdout, "wrote:")
	for _, f := range rep.Files {
		fmt.Fprintln(stdout, "  "+f)
	}
	return nil
}
