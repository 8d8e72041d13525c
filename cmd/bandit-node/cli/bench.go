package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/bandit-node/bandit-node/bench/pattern"
	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/multiformats/go-multiaddr"
)

// benchCommands are the benchmarks of bench (not its internal
// pattern-party, the child process of pattern --processes).
func benchCommands(restart Restarter) []clikit.Command {
	return []clikit.Command{{Name: "pattern", Summary: "the bare message pattern of one SAMBA step over libp2p", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return runBenchPattern(ctx, args, stdout, stderr, restart)
	}}}
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer, restart Restarter) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, `Usage: bandit-node bench pattern [flags]

  pattern   the bare message pattern of one SAMBA step over libp2p (no
            cryptography, no protocol): K frames in, one batch to comp and
            back, K frames out. The baseline SAMBA sessions are held to.`)
		if len(args) == 0 {
			return clikit.UsageError{Msg: "bench: no benchmark given"}
		}
		return nil
	}
	for _, c := range benchCommands(restart) {
		if c.Name == args[0] {
			return c.Run(ctx, args[1:], stdout, stderr)
		}
	}
	switch args[0] {
	case "pattern-party":
		// A child process of `bench pattern --processes`.
		return pattern.ServeChild(ctx, os.Stdin, stdout)
	}
	return clikit.UsageError{Msg: fmt.Sprintf("bench: unknown benchmark %q (want pattern)", args[0])}
}

func runBenchPattern(ctx context.Context, args []string, stdout, stderr io.Writer, restart Restarter) error {
	fs := newFlags("bench pattern", "bench pattern [--k K] [--steps N] [--processes] [--procs P] [--owner-procs P] [--transport tcp|quic] [--json]", `
bandit-node bench pattern --k 10 --steps 100000 --processes --procs 1`, stderr)
	k := fs.Int("k", 10, "number of data owners")
	steps := fs.Int("steps", 10000, "timed steps")
	warmup := fs.Int("warmup", pattern.DefaultWarmup, "untimed steps first")
	processes := fs.Bool("processes", false, "run each party in its own process (default: all in this one)")
	procs := fs.Int("procs", 0, "GOMAXPROCS of every party's process with --processes (0: Go's default)")
	ownerProcs := fs.Int("owner-procs", 0, "GOMAXPROCS of each data owner's process with --processes, in place of --procs (0: as --procs)")
	transport := fs.String("transport", pattern.DefaultTransport, "tcp or quic")
	scoreSize := fs.Int("score-bytes", pattern.DefaultScoreSize, "bytes of a data owner's frame")
	bitSize := fs.Int("bit-bytes", pattern.DefaultBitSize, "bytes of the controller's frame to a data owner")
	batchHead := fs.Int("batch-head-bytes", pattern.DefaultBatchHeadSize, "bytes of each batch besides its K items")
	scoreItem := fs.Int("score-item-bytes", pattern.DefaultScoreItemSize, "bytes of each item of the controller's batch to comp")
	bitItem := fs.Int("bit-item-bytes", pattern.DefaultBitItemSize, "bytes of each item of comp's batch to the controller")
	wrapper := fs.String("party-wrapper", "", "with --processes, a program that starts each party's process (it gets the party's command as its arguments; a profiler, say)")
	listen := fs.String("listen", "", "with --processes, the multiaddr every party process listens on (default: a free loopback port; with each party in a network namespace of its own, the same address serves all)")
	routesPath := fs.String("routes", "", "with --processes, a file of \"FROM TO MULTIADDR\" lines: party FROM reaches party TO at MULTIADDR (0 the controller, 1 comp, 2 … the data owners; each party process gets its number in $"+pattern.PartyEnv+")")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	schedtrace := fs.Bool("schedtrace", true, "restart with GODEBUG=schedtrace=2147483647 to keep the Go runtime's monitor thread awake, as the daemon's [runtime] schedtrace does (the party processes inherit it)")
	if _, err := clikit.ParseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	cfg := pattern.Config{K: *k, Steps: *steps, Warmup: *warmup, ScoreSize: *scoreSize, BitSize: *bitSize,
		BatchHeadSize: *batchHead, ScoreItemSize: *scoreItem, BitItemSize: *bitItem, Transport: *transport}
	if err := cfg.Validate(); err != nil {
		return clikit.UsageError{Msg: "bench " + err.Error()}
	}
	if *procs < 0 || *ownerProcs < 0 {
		return clikit.UsageError{Msg: fmt.Sprintf("bench pattern: --procs %d and --owner-procs %d must not be negative (0: Go's default)", *procs, *ownerProcs)}
	}
	if *wrapper != "" && !*processes {
		return clikit.UsageError{Msg: "bench pattern: --party-wrapper starts party processes, so it needs --processes"}
	}
	if (*listen != "" || *routesPath != "") && !*processes {
		return clikit.UsageError{Msg: "bench pattern: --listen and --routes place party processes, so they need --processes"}
	}
	var routes map[pattern.Route]string
	if *routesPath != "" {
		var err error
		if routes, err = readRoutes(*routesPath); err != nil {
			return err
		}
	}
	applySchedtrace(*schedtrace, "--schedtrace", slog.New(slog.NewTextHandler(stderr, nil)), restart)
	var res pattern.Result
	var err error
	mode := "one process"
	if *processes {
		mode = "separate processes"
		self, xerr := os.Executable()
		if xerr != nil {
			return fmt.Errorf("bench pattern: finding this program to start the party processes: %w", xerr)
		}
		command := []string{self, "bench", "pattern-party"}
		if *wrapper != "" {
			command = append([]string{*wrapper}, command...)
		}
		res, err = pattern.RunProcesses(ctx, cfg, pattern.ProcessOptions{Command: command, Procs: *procs, OwnerProcs: *ownerProcs, Stderr: stderr,
			Listen: *listen, Routes: routes})
	} else {
		res, err = pattern.RunInProcess(ctx, cfg)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		out := struct {
			pattern.Result
			Mode string `json:"mode"`
		}{res, mode}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	fmt.Fprintf(stdout, "bare SAMBA message pattern, %s, %s: K = %d, %d steps in %.2f s: %.3f ms per step (%d frames a step)\n",
		mode, res.Transport, res.K, res.Steps, res.Seconds, res.MsPerStep, res.FramesPerStep)
	if len(res.StepsCPUSeconds) > 0 {
		total := 0.0
		for _, s := range res.StepsCPUSeconds {
			total += s
		}
		fmt.Fprintf(stdout, "CPU time during the steps, all processes: %.3f ms per step (controller %.3f, comp %.3f, data owners %.3f)\n",
			1000*total/float64(res.Steps), 1000*res.StepsCPUSeconds[pattern.RoleController]/float64(res.Steps),
			1000*res.StepsCPUSeconds[pattern.RoleComp]/float64(res.Steps), 1000*res.StepsCPUSeconds[pattern.RoleOwner]/float64(res.Steps))
	}
	return nil
}

// readRoutes reads a --routes file: "FROM TO MULTIADDR" a line, blank lines
// and lines starting with # skipped.
func readRoutes(path string) (map[pattern.Route]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench pattern: reading the routes: %w", err)
	}
	routes := map[pattern.Route]string{}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		var from, to int
		var ferr, terr error
		if len(f) == 3 {
			from, ferr = strconv.Atoi(f[0])
			to, terr = strconv.Atoi(f[1])
		}
		if len(f) != 3 || ferr != nil || terr != nil {
			return nil, fmt.Errorf("bench pattern: %s:%d: want \"FROM TO MULTIADDR\" (party numbers and an address), got %q", path, n+1, line)
		}
		if _, err := multiaddr.NewMultiaddr(f[2]); err != nil {
			return nil, fmt.Errorf("bench pattern: %s:%d: address %q: %w", path, n+1, f[2], err)
		}
		routes[pattern.Route{From: from, To: to}] = f[2]
	}
	return routes, nil
}
