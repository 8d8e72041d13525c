package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/experiment/mpccb"
)

func runExperimentMPCCB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment mpccb", "experiment mpccb [--out DIR] [--steps N] [--runs N] [--epsilons E,E,...] [--timing-steps N] [--timing-repeats N] [--batch B,B,... [--batch-only]] [--workers N] [--seed N] [--quick] [--shard I/N] [--quiet]", `
bandit-lab experiment mpccb --out results/mpccb
bandit-lab experiment mpccb --out results/mpccb-paper --steps 60000 --runs 10   # the paper's size: ~1.5 h on 2 CPUs
bandit-lab experiment mpccb --out /tmp/mpccb --quick                           # smoke test, under a minute
bandit-lab experiment mpccb --out results/mpccb-batch --steps 60000 --runs 5 --batch 10,100,1000 --batch-only   # the regret of batches against B = 1`, stderr)
	out := fs.String("out", "results/mpccb", "directory for the CSV files, figures (PNG, SVG and PDF) and written results")
	steps := fs.Int64("steps", 0, "steps T of each Fashion-MNIST reward run, 100..60000 (default 10000; --quick 500)")
	runs := fs.Int("runs", 0, "runs per ε (default 3; --quick 1)")
	epsilons := fs.String("epsilons", "", "Figure 2's ε values (default 0.005,0.01,0.02,0.05,0.1,0.2,0.5); Figure 1's 0.01,0.05,0.1,0.2 are always run")
	timingSteps := fs.Int64("timing-steps", 0, "steps of each timing run of Figures 3 and 4 (default 100; --quick 40); they run one at a time")
	timingRepeats := fs.Int("timing-repeats", 0, "runs of each timing point; the figures take the fastest (default 2; --quick 1)")
	batches := fs.String("batch", "", "comma-separated batch sizes B whose regret on Fashion-MNIST is compared with the sequential algorithm's (B = 1), the plaintext batched algorithm (mpccb_batch_results.md)")
	batchOnly := fs.Bool("batch-only", false, "run only the --batch comparison (seconds), not the figures' secure sessions")
	workers := fs.Int("workers", 0, "parallel reward simulations (default: the number of CPUs)")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	quick := fs.Bool("quick", false, "a small smoke-test version (500 steps, 1 run, few points)")
	shardFlag := fs.String("shard", "", shardUsage+" (the reward runs; shard 1 also runs the timing runs and Table 1, which compare times on one machine)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	var eps []float64
	if *epsilons != "" {
		for _, f := range strings.Split(*epsilons, ",") {
			e, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || !(e > 0 && e <= 1) {
				return clikit.UsageError{Msg: fmt.Sprintf("experiment mpccb: --epsilons %q: %q is not in (0, 1]", *epsilons, f)}
			}
			eps = append(eps, e)
		}
	}
	var bv []int
	if *batches != "" {
		for _, f := range strings.Split(*batches, ",") {
			b, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || b < 1 || b > mpccb.MaxBatch {
				return clikit.UsageError{Msg: fmt.Sprintf("experiment mpccb: --batch %q: %q is not a batch size in [1, %d]", *batches, f, mpccb.MaxBatch)}
			}
			bv = append(bv, b)
		}
	}
	if *batchOnly && len(bv) == 0 {
		return clikit.UsageError{Msg: "experiment mpccb: --batch-only needs --batch"}
	}
	if err := clikit.AtLeastOne(fs, "steps", "runs", "timing-steps", "timing-repeats", "workers"); err != nil {
		return err
	}
	if clikit.SetFlags(fs)["steps"] && (*steps < mpccb.MinSteps || *steps > mpccb.MaxSteps) {
		return clikit.UsageError{Msg: fmt.Sprintf("experiment mpccb: --steps %d: must be within %d..%d (Fashion-MNIST has %d training images; the curves need %d checkpoints)",
			*steps, mpccb.MinSteps, mpccb.MaxSteps, mpccb.MaxSteps, mpccb.MinSteps)}
	}
	shard, err := parseShard("mpccb", *shardFlag)
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	o := mpccb.Options{Out: *out, Steps: *steps, Runs: *runs, Epsilons: eps, TimingSteps: *timingSteps, TimingRepeats: *timingRepeats, Batches: bv, BatchOnly: *batchOnly, Workers: *workers,
		Seed: *seed, Quick: *quick, Command: strings.Join(append([]string{"bandit-lab experiment mpccb"}, withoutShard(args)...), " "), Shard: shard}
	if !*quiet {
		o.Progress = stderr
	}
	m := manifest("mpccb", args)
	rep, err := mpccb.Run(ctx, reg, o)
	if err != nil {
		return err
	}
	return finish(stdout, m, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
}
