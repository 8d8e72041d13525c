package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/experiment"
	"github.com/bandit-node/bandit-node/experiment/bai"
	"github.com/bandit-node/bandit-node/experiment/mpccb"
	"github.com/bandit-node/bandit-node/experiment/pfcb"
	"github.com/bandit-node/bandit-node/experiment/samba"
)

// shardUsage is the help of every experiment's --shard flag.
const shardUsage = "run only shard I of N of the grid (1 ≤ I ≤ N: the jobs at positions p with p mod N = I−1, in the unsharded run's order) " +
	"and write a partial output (partial.json, manifest.json) for 'experiment merge'; a 0-based array index needs +1"

// parseShard parses an experiment's --shard value ("" for the whole grid).
func parseShard(name, v string) (experiment.Shard, error) {
	if v == "" {
		return experiment.Shard{}, nil
	}
	sh, err := experiment.ParseShard(v)
	if err != nil {
		return experiment.Shard{}, clikit.UsageError{Msg: fmt.Sprintf("experiment %s: --shard: %v", name, err)}
	}
	return sh, nil
}

// withoutShard returns args without --shard and its value: the command
// line a merge of the shards names, the unsharded run's.
func withoutShard(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--shard" || a == "-shard":
			i++
		case strings.HasPrefix(a, "--shard=") || strings.HasPrefix(a, "-shard="):
		default:
			out = append(out, a)
		}
	}
	return out
}

func runExperimentMerge(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("experiment merge", "experiment merge --out DIR PARTIAL_DIR...", `
bandit-lab experiment samba --out part/1 --shard 1/4   # … and 2/4, 3/4, 4/4, anywhere
bandit-lab experiment merge --out results/samba part/1 part/2 part/3 part/4`, stderr)
	out := fs.String("out", "", "directory for the merged output: the unsharded run's files")
	dirs, err := clikit.ParseArgs(fs, args, 1, 1<<20)
	if err != nil {
		return err
	}
	if *out == "" {
		return clikit.UsageError{Msg: "experiment merge: --out DIR is required"}
	}
	m, err := experiment.ReadPartials(dirs)
	if err != nil {
		return err
	}
	mf := experiment.NewManifest(program, m.Experiment, append([]string{program, "experiment", "merge"}, args...), nil)
	mf.Partials = m.Sources
	switch m.Experiment {
	case pfcb.Experiment:
		rep, err := pfcb.Merge(m, *out)
		if err != nil {
			return err
		}
		return finish(stdout, mf, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
	case mpccb.Experiment:
		rep, err := mpccb.Merge(m, *out)
		if err != nil {
			return err
		}
		return finish(stdout, mf, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
	case bai.Experiment:
		rep, err := bai.Merge(m, *out)
		if err != nil {
			return err
		}
		return finish(stdout, mf, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
	case samba.Experiment:
		rep, err := samba.Merge(m, *out)
		if err != nil {
			return err
		}
		return finish(stdout, mf, fs, *out, simulated(len(rep.Runs)), rep.Elapsed, rep.Claims, rep.Files)
	}
	return fmt.Errorf("experiment merge: experiment %q cannot be merged by this bandit-lab", m.Experiment)
}
