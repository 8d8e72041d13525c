package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("simulate", "simulate SPEC.toml [--json] [--seed N] [--progress]", `
bandit-node simulate examples/ping.toml --json --seed 7`, stderr)
	asJSON := fs.Bool("json", false, "print JSON in session result --json's shape (session, result, local) plus simulation: seed, messages, bytes, elapsed_seconds, role_seconds")
	seed := fs.Int64("seed", 0, "override the spec's simulation.seed")
	showProgress := fs.Bool("progress", false, "show progress on stderr (redrawn on a terminal, else a line every few seconds)")
	pos, err := clikit.ParseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	defer simulationGC()()
	text, err := os.ReadFile(pos[0])
	if err != nil {
		return fmt.Errorf("reading the spec: %w", err)
	}
	spec, err := protocol.ParseSpec(pos[0], text)
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	// The preparation may leave far more garbage than the session keeps
	// live (reading and projecting Fashion-MNIST: ≈ 90 MB); collected
	// there, the collector's target follows the session's heap (≈ 20 MB
	// for mpccb), not the preparation's peak times the GC percentage.
	opts := sim.Options{Environments: simEnvironments(stderr), Dir: filepath.Dir(pos[0]), Prepared: runtime.GC}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			opts.Seed = seed
		}
	})
	var progress *progressLine
	if *showProgress {
		progress = newProgressLine(stderr)
		opts.OnProgress = func(p protocol.Progress) {
			progress.show(fmt.Sprintf("%d/%d", p.Step, p.Total), p.Step == p.Total)
		}
	}
	start := time.Now()
	res, err := sim.Run(ctx, reg, spec, opts)
	if progress != nil {
		progress.done()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	elapsed := time.Since(start)
	if *asJSON {
		out, err := newSimulatedResult(res, text, start, elapsed)
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	}
	raw, err := json.Marshal(res.Result)
	if err != nil {
		return err
	}
	span := res.VirtualTime.Round(time.Microsecond).String() + " simulated"
	if res.Steps > 0 {
		span = fmt.Sprintf("%d global steps", res.Steps)
	}
	fmt.Fprintf(stdout, "simulated %s, seed %d: %d messages, %d bytes, %s, %v elapsed\n",
		res.Protocol, res.Seed, res.Messages, res.Bytes, span, elapsed.Round(time.Millisecond))
	for _, p := range slices.Sorted(maps.Keys(res.Environments)) {
		u := res.Environments[p]
		fmt.Fprintf(stdout, "%s: %s answered %d queries in %.3f s (the longest %.1f ms)\n", p, u.Source, u.Queries, u.Seconds, u.MaxMillis)
	}
	fmt.Fprintln(stdout)
	return formatResult(stdout, res.Protocol, raw)
}

// simulationGCPercent is the garbage collector's target while a simulation
// runs, unless GOGC is set. A simulation allocates fast and keeps little:
// SAMBA with full cryptography (UCB, K = 100, N = 100,000) took 11.0 s at
// Go's default of 100 and 9.0–9.6 s at 400, its peak memory going from 50 to
// 82 MB (`/usr/bin/time`, alternating, on the 2-core test machine). The
// contextual bandit (mpccb) needed it while a step allocated 4.3 MB; since
// its engine reuses a step's words it runs the same at 100 and 400 (2,000
// Fashion-MNIST steps: 1.05× the CPU at 400, peak 183 against 182 MiB;
// docs/performance.md, "mpccb's memory"), so 400 stays for SAMBA's sake.
const simulationGCPercent = 400

// simulationGC sets the collector's target for a simulation and returns the
// function that restores it.
func simulationGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(simulationGCPercent)
	return func() { debug.SetGCPercent(old) }
}
