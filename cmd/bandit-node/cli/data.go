package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// runData prepares the per-organisation data files of a protocol's session.
func runData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node data NAME [flags]\n\nData sets:\n  mpccb  the private contextual bandit's feature-party and reward files (Fashion-MNIST or synthetic)")
		fmt.Fprintln(stdout, "\nExample:\n  bandit-node data mpccb --out mpccb-data --parties 2 --steps 1000")
		if len(args) == 0 {
			return usageError{"data: name a data set"}
		}
		return nil
	}
	if args[0] != "mpccb" {
		return usageError{fmt.Sprintf("data: unknown data set %q (known: mpccb)", args[0])}
	}
	fs := newFlags("data mpccb", "data mpccb --out DIR [--parties P] [--dataset fashion-mnist|synthetic] [--arms N] [--steps N] [--seed N] [--source DIR]", `
bandit-node data mpccb --out mpccb-data --parties 2 --steps 1000
  then give party0.csv to the first feature party's organisation, party1.csv
  to the second, rewards.csv to the reward receiver's.`, stderr)
	out := fs.String("out", "", "directory to write party0.csv … and rewards.csv into (required)")
	parties := fs.Int("parties", 2, fmt.Sprintf("number of feature parties, 2..%d; each gets a contiguous block of the 20 columns", mpccb.MaxParties))
	set := fs.String("dataset", dataset.FashionMNIST, "fashion-mnist (10 arms, reward 1 for the right class) or synthetic (k-means arms, Bernoulli rewards)")
	arms := fs.Int("arms", 10, "arms (synthetic only; Fashion-MNIST has 10 classes)")
	steps := fs.Int("steps", 0, "contexts to write (0: all 60,000)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic clustering and reward draws")
	source := fs.String("source", dataset.FashionMNISTDir, "directory of the Fashion-MNIST IDX files")
	if _, err := parseArgs(fs, args[1:], 0, 0); err != nil {
		return err
	}
	if *out == "" {
		fs.Usage()
		return usageError{"data mpccb: --out is required"}
	}
	// A session takes as many feature parties as the role allows.
	rs, err := protocol.RoleSpecOf(mpccb.Family{}, mpccb.RoleFeature)
	if err != nil {
		return err
	}
	if *parties < rs.Min || *parties > rs.Max {
		return usageError{fmt.Sprintf("data mpccb: --parties %d: a session has %d..%d feature parties", *parties, rs.Min, rs.Max)}
	}
	if *steps < 0 {
		return usageError{fmt.Sprintf("data mpccb: --steps %d: must be 0 (all contexts) or more", *steps)}
	}
	if *set == dataset.FashionMNIST && *arms != 10 {
		return usageError{fmt.Sprintf("data mpccb: --arms %d: Fashion-MNIST has 10 classes", *arms)}
	}
	start := time.Now()
	if err := dataset.Prepare(*source, *out, *parties, *set, *arms, *seed, *steps); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d feature-party files and %s into %s (%.1fs)\n", *parties, dataset.RewardsFile, *out, time.Since(start).Seconds())
	return nil
}
