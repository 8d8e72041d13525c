package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/experiment"
)

// experimentCommands are the experiments, one package of experiment/ each.
func experimentCommands() []clikit.Command {
	return []clikit.Command{
		{Name: "bai", Summary: "multi-agent best-arm identification (Rio et al.)", Run: runExperimentBAI},
		{Name: "pfcb", Summary: "P-FCB (Solanki et al.)", Run: runExperimentPFCB},
		{Name: "mpccb", Summary: "privacy-preserving contextual bandits (Hannun et al.)", Run: runExperimentMPCCB},
		{Name: "samba", Summary: "SAMBA, secure federated bandits (Ciucanu et al.)", Run: runExperimentSAMBA},
	}
}

func runExperiment(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "Usage: bandit-lab experiment NAME [flags]\n\nExperiments:\n  bai    multi-agent best-arm identification: Figures 1, 5 and 6 of Rio et al. (ICML 2023)\n  pfcb   P-FCB: EXP1–3 of Solanki et al. (ECML PKDD 2022)\n  mpccb  privacy-preserving contextual bandits: Figures 1–4 and Table 1 of Hannun et al.\n  samba  SAMBA: Figure 8 of Ciucanu et al. (secure against standard: reward, time, per-role costs)")
		fmt.Fprintln(stdout, "\nAcross machines: run each shard with --shard I/N (1 ≤ I ≤ N; as a Slurm job array, a Kubernetes\n"+
			"indexed Job or GNU parallel over ssh: docs/papers.md), then\n  merge  bandit-lab experiment merge --out DIR PARTIAL_DIR...   (the unsharded run's files, byte for byte)")
		fmt.Fprintln(stdout, "\nExample:\n  bandit-lab experiment bai --out results/bai --runs 10")
		if len(args) == 0 {
			return clikit.UsageError{Msg: "experiment: name an experiment"}
		}
		return nil
	}
	if args[0] == "merge" {
		return runExperimentMerge(ctx, args[1:], stdout, stderr)
	}
	for _, c := range experimentCommands() {
		if c.Name == args[0] {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	return clikit.UsageError{Msg: fmt.Sprintf("experiment: unknown experiment %q (known: bai, pfcb, mpccb, samba)", args[0])}
}

// finish prints what an experiment found and wrote, and writes its
// manifest (experiment.Manifest) beside: m began when the experiment did,
// fs holds the options it ran with, ran says what it ran (simulated(n)
// for n sessions).
func finish(stdout io.Writer, m experiment.Manifest, fs *flag.FlagSet, out string, ran string, elapsed time.Duration, claims []experiment.Claim, files []string) error {
	return finishAs(stdout, m, fs, out, experiment.ManifestFile, ran, elapsed, claims, files)
}

// simulated is what an experiment of n simulated sessions ran.
func simulated(n int) string { return fmt.Sprintf("%d sessions simulated", n) }

// finishAs is finish with the manifest's file name.
func finishAs(stdout io.Writer, m experiment.Manifest, fs *flag.FlagSet, out, name string, ran string, elapsed time.Duration, claims []experiment.Claim, files []string) error {
	m.Options = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { m.Options[f.Name] = f.Value.String() })
	if err := m.Write(out, name, files); err != nil {
		return err
	}
	printClaims(stdout, ran, elapsed, claims, append(files, filepath.Join(out, name)))
	return nil
}

// manifest begins the manifest of experiment name run with args.
func manifest(name string, args []string) experiment.Manifest {
	return experiment.NewManifest(program, name, append([]string{program, "experiment", name}, args...), nil)
}

func printClaims(stdout io.Writer, ran string, elapsed time.Duration, claims []experiment.Claim, files []string) {
	fmt.Fprintf(stdout, "%s in %v\n", ran, elapsed.Round(time.Millisecond))
	for _, c := range claims {
		mark := c.Verdict()
		if !c.Holds {
			mark = strings.ToUpper(mark)
		}
		fmt.Fprintf(stdout, "  %-13s %s %s\n", mark, c.Text, c.Note)
	}
	fmt.Fprintln(stdout, "wrote:")
	for _, f := range files {
		fmt.Fprintln(stdout, "  "+f)
	}
}
