package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/experiment/bai"
)

func runExperimentBAI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment bai", "experiment bai [--out DIR] [--runs N] [--agents N,N,...] [--problem 1|2] [--workers N] [--seed N] [--shard I/N] [--quiet]", `
bandit-lab experiment bai --out results/bai --runs 10 --agents 64,128,256,512,1024`, stderr)
	out := fs.String("out", "results/bai", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	runs := fs.Int("runs", 10, "runs per point")
	agents := fs.String("agents", "64,128,256,512,1024", "comma-separated values of N")
	problem := fs.Int("problem", 1, "the paper's problem: 1 (Bernoulli) or 2 (Gaussian)")
	workers := fs.Int("workers", 0, "parallel simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	shardFlag := fs.String("shard", "", shardUsage)
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if err := clikit.AtLeastOne(fs, "runs", "workers"); err != nil {
		return err
	}
	if *problem != 1 && *problem != 2 {
		return clikit.UsageError{Msg: fmt.Sprintf("experiment bai: --problem %d: the paper has problems 1 and 2", *problem)}
	}
	var ns []int
	for _, f := range strings.Split(*agents, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return clikit.UsageError{Msg: fmt.Sprintf("experiment bai: --agents %q: %q is not a positive number", *agents, f)}
		}
		ns = append(ns, n)
	}
	shard, err := parseShard("bai", *shardFlag)
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	o := bai.Options{Out: *out, Runs: *runs, Agents: ns, Problem: *problem, Workers: *workers, Seed: *seed, Shard: shard}
	if !*quiet {
		o.Progress = stderr
	}
	m := manifest("bai", args)
	rep, err := bai.Run(ctx, reg, o)
	if err != nil {
		return err
	}
	return finish(stdout, m, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
}
