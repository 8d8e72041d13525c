package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// stageProgressAfter is how long preparing data may take before its stage
// is shown on stderr; stageProgressEvery how often it is refreshed then.
const (
	stageProgressAfter = time.Second
	stageProgressEvery = time.Second
)

// runData prepares the per-organisation data files of a protocol's session.
func runData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-node data NAME [flags]\n\nData sets:\n  mpccb  the private contextual bandit's feature-party and reward files (Fashion-MNIST, synthetic, or your own CSV table)")
		fmt.Fprintln(stdout, "\nExamples:\n  bandit-node data mpccb --out mpccb-data --parties 2 --steps 1000")
		fmt.Fprintln(stdout, "  bandit-node data mpccb --csv examples/data/iris.csv --label species --pca 3 --normalize --out iris-data")
		if len(args) == 0 {
			return clikit.UsageError{Msg: "data: name a data set"}
		}
		return nil
	}
	for _, c := range dataCommands() {
		if c.Name == args[0] {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	return clikit.UsageError{Msg: fmt.Sprintf("data: unknown data set %q (known: mpccb)", args[0])}
}

// dataCommands are the data sets of data.
func dataCommands() []clikit.Command {
	return []clikit.Command{{Name: "mpccb", Summary: "the private contextual bandit's feature-party and reward files", Run: runDataMPCCB}}
}

// runDataMPCCB prepares the files of an mpccb session.
func runDataMPCCB(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("data mpccb", "data mpccb --out DIR [--parties P] [--csv FILE --label COLUMN [--pca D] [--normalize | --standardize] | --dataset fashion-mnist|synthetic [--seed N] [--source DIR]] [--arms N] [--steps N]", `
bandit-node data mpccb --out mpccb-data --parties 2 --steps 1000
  then give party0.csv to the first feature party's organisation, party1.csv
  to the second, rewards.csv to the reward receiver's.
bandit-node data mpccb --csv examples/data/iris.csv --label species --pca 3 --normalize --out iris-data
  the same from your own table: every column but the label is a feature, the
  label is the class (0, 1, …), the arm that pays 1.
bandit-node data mpccb --csv wine.csv --label class --standardize --out wine-data
  columns on different scales: z-scored first, so none dominates.`, stderr)
	out := fs.String("out", "", "directory to write party0.csv … and rewards.csv into (required)")
	parties := fs.Int("parties", 2, fmt.Sprintf("number of feature parties, 2..%d; each gets a contiguous block of the columns", mpccb.MaxParties))
	set := fs.String("dataset", dataset.FashionMNIST, "fashion-mnist (10 arms, reward 1 for the right class) or synthetic (k-means arms, Bernoulli rewards)")
	arms := fs.Int("arms", 10, "arms (synthetic; with --csv the default is the largest label + 1; Fashion-MNIST has 10 classes)")
	steps := fs.Int("steps", 0, "contexts to write (0: all of them, 60,000 for Fashion-MNIST, every row of a --csv table)")
	seed := fs.Uint64("seed", 1, "seed of the synthetic clustering and reward draws")
	source := fs.String("source", dataset.FashionMNISTDir, "directory of the Fashion-MNIST IDX files")
	csvPath := fs.String("csv", "", "your own table: a CSV file with a header, numeric feature columns and a label column")
	label := fs.String("label", "", "with --csv: the column holding each row's class, an integer in 0..arms-1, the arm that pays 1")
	pca := fs.Int("pca", 0, "with --csv: project the feature columns onto their first D principal components (0: keep the columns)")
	normalize := fs.Bool("normalize", false, "with --csv: scale every context (after --pca) to unit norm, as Fashion-MNIST's are; without it every row's norm must be at most 1")
	standardize := fs.Bool("standardize", false, "with --csv: z-score every feature column (the table's mean and standard deviation) before --pca, then scale every context to unit norm: for columns on different scales")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *out == "" {
		fs.Usage()
		return clikit.UsageError{Msg: "data mpccb: --out is required"}
	}
	// A session takes as many feature parties as the role allows.
	rs, err := protocol.RoleSpecOf(mpccb.Family{}, mpccb.RoleFeature)
	if err != nil {
		return err
	}
	if *parties < rs.Min || *parties > rs.Max {
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --parties %d: a session has %d..%d feature parties", *parties, rs.Min, rs.Max)}
	}
	if *steps < 0 {
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --steps %d: must be 0 (all contexts) or more", *steps)}
	}
	if *csvPath != "" {
		for _, name := range []string{"dataset", "seed", "source"} {
			if given[name] {
				return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --%s is not for a --csv table", name)}
			}
		}
		a := 0 // the largest label + 1
		if given["arms"] {
			a = *arms
		}
		return dataCSV(stdout, stderr, csvOptions{path: *csvPath, out: *out, parties: *parties, steps: *steps,
			opts: dataset.TableOptions{Label: *label, Arms: a, PCA: *pca, Normalize: *normalize, Standardize: *standardize}})
	}
	for _, name := range []string{"label", "pca", "normalize", "standardize"} {
		if given[name] {
			return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --%s is for a --csv table only", name)}
		}
	}
	if *set == dataset.FashionMNIST && *arms != 10 {
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --arms %d: Fashion-MNIST has 10 classes", *arms)}
	}
	start := time.Now()
	if err := dataset.Prepare(*source, *out, *parties, *set, *arms, *seed, *steps); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d feature-party files and %s into %s (%.1fs)\n", *parties, dataset.RewardsFile, *out, time.Since(start).Seconds())
	return nil
}

// csvOptions are data mpccb's arguments for a --csv table.
type csvOptions struct {
	path, out      string
	parties, steps int
	opts           dataset.TableOptions
}

// dataCSV writes the session files of an organisation's own table: checks
// the arguments that need no reading, reads and projects the table (showing
// the stage on stderr if that takes more than a second), checks that a
// session can take the contexts and writes them.
func dataCSV(stdout, stderr io.Writer, c csvOptions) error {
	o := c.opts
	switch {
	case o.Label == "":
		return clikit.UsageError{Msg: "data mpccb: --csv needs --label COLUMN, the column holding each row's class"}
	case o.Arms != 0 && (o.Arms < 2 || o.Arms > mpccb.MaxArms):
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --arms %d: a session has 2..%d arms", o.Arms, mpccb.MaxArms)}
	case o.PCA < 0 || o.PCA > mpccb.MaxDimensions:
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --pca %d: want 1..%d components (a session's dimensions), or 0 to keep the columns", o.PCA, mpccb.MaxDimensions)}
	case o.PCA > 0 && c.parties > o.PCA:
		return clikit.UsageError{Msg: fmt.Sprintf("data mpccb: --parties %d for --pca %d: every feature party must hold one column at least", c.parties, o.PCA)}
	}
	start := time.Now()
	progress := startStageProgress(stderr, "data mpccb", stageProgressAfter, stageProgressEvery)
	o.Progress = progress.set
	b, err := func() (*dataset.TableBandit, error) {
		b, err := dataset.LoadCSV(c.path, o, c.steps)
		if err != nil {
			var ne *dataset.NormError
			var re *dataset.RangeError
			switch {
			case errors.As(err, &ne) && ne.Scales != "":
				return nil, fmt.Errorf("%w: pass --standardize (or --normalize to scale every context to unit norm as it is)", err)
			case errors.As(err, &ne):
				return nil, fmt.Errorf("%w: pass --normalize to scale every context to unit norm", err)
			case errors.As(err, &re) && re.Arg == "steps":
				return nil, fmt.Errorf("--steps %d: %w", c.steps, err)
			case errors.As(err, &re) && re.Arg == "arms":
				return nil, fmt.Errorf("--arms: %w", err)
			}
			return nil, err
		}
		d := len(b.Contexts[0])
		switch {
		case d > mpccb.MaxDimensions:
			return nil, fmt.Errorf("CSV table %s: %d feature columns, but a session takes at most %d dimensions: pass --pca D with D ≤ %d", c.path, d, mpccb.MaxDimensions, mpccb.MaxDimensions)
		case b.Arms*d*d > mpccb.MaxMatrixWords:
			return nil, fmt.Errorf("CSV table %s: %d arms × %d² dimensions = %d words of W⁻¹ each step, more than the %d a session opens: pass a smaller --pca", c.path, b.Arms, d, b.Arms*d*d, mpccb.MaxMatrixWords)
		case c.parties > d:
			return nil, fmt.Errorf("CSV table %s: %d feature parties for %d feature columns: every feature party must hold one column at least", c.path, c.parties, d)
		}
		progress.set(fmt.Sprintf("writing %d contexts into %s", len(b.Contexts), c.out))
		return b, dataset.WriteSession(c.out, c.parties, b.Contexts, b.Rewards)
	}()
	progress.finish()
	if err != nil {
		return err
	}
	d := len(b.Contexts[0])
	how := fmt.Sprintf("%d feature columns", d)
	if o.PCA > 0 {
		how = fmt.Sprintf("PCA to %d components (%.1f %% of the variance)", d, 100*b.Explained)
	}
	switch {
	case o.Standardize:
		how = "standardized columns, " + how + ", unit norm"
	case o.Normalize:
		how += ", unit norm"
	}
	if len(b.Unused) > 0 {
		fmt.Fprintf(stderr, "data mpccb: warning: no row of %s has label %s: %s never pay (gaps in the labels, or --arms above the classes)\n",
			c.path, joinInts(b.Unused), plural(len(b.Unused), "that arm", "those arms"))
	}
	fmt.Fprintf(stdout, "wrote %d feature-party files and %s into %s: %d contexts of %s, %d arms (%.1fs)\n",
		c.parties, dataset.RewardsFile, c.out, len(b.Contexts), how, b.Arms, time.Since(start).Seconds())
	fmt.Fprintf(stdout, "a session on them: [params] arms = %d, dimensions = %d, steps = %d or fewer; [local.mpccb.feature_party] features = %q … on each feature party, [local.mpccb.reward_receiver] rewards = %q\n",
		b.Arms, d, len(b.Contexts), filepath.Join(c.out, dataset.PartyFile(0)), filepath.Join(c.out, dataset.RewardsFile))
	return nil
}

// stageProgress shows what a long preparation is doing: once it has run for
// a while, a line on stderr with its current stage and the time so far,
// refreshed until finish (redrawn on a terminal, see progressLine).
type stageProgress struct {
	mu    sync.Mutex // guards stage
	stage string
	stop  chan struct{} // closed by finish
	done  chan struct{} // closed when the showing goroutine has returned
}

// startStageProgress starts showing stages on w, prefixed with name, after
// the given delay and every period after that.
func startStageProgress(w io.Writer, name string, after, every time.Duration) *stageProgress {
	s := &stageProgress{stop: make(chan struct{}), done: make(chan struct{})}
	start := time.Now()
	go func() {
		defer close(s.done)
		line := newProgressLine(w)
		defer line.done()
		timer := time.NewTimer(after)
		defer timer.Stop()
		select {
		case <-s.stop:
			return
		case <-timer.C:
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			s.mu.Lock()
			stage := s.stage
			s.mu.Unlock()
			line.show(fmt.Sprintf("%s: %s (%.0fs)", name, stage, time.Since(start).Seconds()), false)
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// set records the current stage.
func (s *stageProgress) set(stage string) {
	s.mu.Lock()
	s.stage = stage
	s.mu.Unlock()
}

// finish stops showing stages and ends the line, if one was shown.
func (s *stageProgress) finish() {
	close(s.stop)
	<-s.done
}

// joinInts writes xs as "1, 4 and 7".
func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// plural returns one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
