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
	"github.com/bandit-node/bandit-node/experiment/samba"
)

func runExperimentSAMBA(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment samba", "experiment samba [--out DIR] [--dataset movielens|FILE] [--epsilon E] [--epsilon-schedule ln|log2] [--tau T] [--beta B] [--runs N] [--budget N] [--k K,K,...] [--paillier-bits B] [--batch B,B,... [--batch-only]] [--workers N] [--seed N] [--shard I/N] [--quiet]", `
bandit-lab experiment samba --out results/samba --runs 3 --budget 20000
bandit-lab experiment samba --out /tmp/mine --dataset my-arms.txt --k 10,25,50   # one arm mean per line
bandit-lab experiment samba --dataset jester.txt --tau 0.02 --beta 0.2   # Jester's prototype parameters
  (or write them in jester.toml beside jester.txt: tau = 0.02, beta = 0.2; epsilon and epsilon_schedule too)
bandit-lab experiment samba --out results/samba --budget 100000 --k 100 --batch 10,100,1000 --batch-only   # the regret of batches against B = 1`, stderr)
	out := fs.String("out", "results/samba", "directory for the CSV files, figures (PNG) and written results")
	dataset := fs.String("dataset", samba.DatasetMovieLens, "movielens (the paper's MovieLens-100k means) or a file of arm means in [0, 1], one per line; the K largest are taken")
	epsilon := fs.Float64("epsilon", 0, "ε of ε-greedy and the ε-first step (default: the dataset's: its description's, else MovieLens's 0.1)")
	schedule := fs.String("epsilon-schedule", "", "ε-decreasing's f_ε(t): ln (1/ln t) or log2 (1/log₂ t) (default: the dataset's, else MovieLens's log2)")
	tau := fs.Float64("tau", 0, "softmax's temperature τ (default: the dataset's, else MovieLens's 0.06)")
	beta := fs.Float64("beta", 0, "pursuit's learning rate β (default: the dataset's, else MovieLens's 0.1)")
	runs := fs.Int("runs", 3, "runs per point")
	budget := fs.Int64("budget", 20000, "the budget N; the largest K also runs N/4 and N/2 (time and reward as N grows)")
	ks := fs.String("k", "10,100", "comma-separated numbers of arms (data owners) K")
	batches := fs.String("batch", "", "comma-separated batch sizes B (params.batch) whose regret is compared with the sequential algorithm's at the largest K and the budget N (samba_batch.csv)")
	growth := fs.Float64("batch-growth", 1, "with --batch: each size B > 1 starts a geometric schedule, each batch this many times the last (params.batch_growth, at most 1,000 steps a batch); 1: batches of B")
	batchOnly := fs.Bool("batch-only", false, "run only the --batch comparison (the plaintext batched algorithm, seconds), not Figure 8's secure sessions")
	bits := fs.Int("paillier-bits", 2048, "the data customer's Paillier modulus (the paper's 2048; smaller only to try the command quickly)")
	workers := fs.Int("workers", 0, "parallel simulations (default: GOMAXPROCS; more make the per-role busy times, which are wall times, count each other's work); a session's time is its thread's CPU time")
	seed := fs.Int64("seed", 1, "first seed; run r uses seed+r")
	shardFlag := fs.String("shard", "", shardUsage)
	quiet := fs.Bool("quiet", false, "no progress lines")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	if err := clikit.AtLeastOne(fs, "runs", "budget", "workers", "paillier-bits"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"epsilon", *epsilon}, {"tau", *tau}, {"beta", *beta}} {
		if given(fs, f.name) && !(f.v > 0) {
			return clikit.UsageError{Msg: fmt.Sprintf("experiment samba: --%s %v: want a positive number", f.name, f.v)}
		}
	}
	var kv []int
	for _, f := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 2 {
			return clikit.UsageError{Msg: fmt.Sprintf("experiment samba: --k %q: %q is not a number of arms (at least 2)", *ks, f)}
		}
		kv = append(kv, k)
	}
	var bv []int
	if *batches != "" {
		for _, f := range strings.Split(*batches, ",") {
			b, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || b < 1 {
				return clikit.UsageError{Msg: fmt.Sprintf("experiment samba: --batch %q: %q is not a batch size (at least 1)", *batches, f)}
			}
			bv = append(bv, b)
		}
	}
	if *batchOnly && len(bv) == 0 {
		return clikit.UsageError{Msg: "experiment samba: --batch-only needs --batch"}
	}
	shard, err := parseShard("samba", *shardFlag)
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	o := samba.Options{Out: *out, Dataset: *dataset, Runs: *runs, Budget: *budget, Ks: kv, PaillierBits: *bits, Batches: bv, BatchGrowth: *growth, BatchOnly: *batchOnly, Workers: *workers,
		Seed: *seed, Command: strings.Join(append([]string{"bandit-lab experiment samba"}, withoutShard(args)...), " "), Shard: shard,
		Tuning: samba.Tuning{Epsilon: *epsilon, EpsilonSchedule: *schedule, Tau: *tau, Beta: *beta}}
	if !*quiet {
		o.Progress = stderr
	}
	m := manifest("samba", args)
	rep, err := samba.Run(ctx, reg, o)
	if err != nil {
		return err
	}
	return finish(stdout, m, fs, *out, sambaRan(rep), rep.Elapsed, rep.Claims, rep.Files)
}

// sambaRan says what a SAMBA experiment ran: its secure sessions and the
// runs of the plaintext batched reference behind --batch (only those with
// --batch-only, which simulates no secure session).
func sambaRan(rep *samba.Report) string {
	if rep.BatchRuns == 0 {
		return simulated(len(rep.Runs))
	}
	batched := fmt.Sprintf("%d runs of the batched plaintext reference", rep.BatchRuns)
	if len(rep.Runs) == 0 {
		return batched + " (no secure session simulated)"
	}
	return simulated(len(rep.Runs)) + " and " + batched
}

// given reports whether the command line set flag name.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
