package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/internal/buildinfo"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/config"
)

func runDaemon(ctx context.Context, args []string, stdout, stderr io.Writer, restart Restarter) error {
	fs := newConfigFlags("run", "run --config FILE [--log-format text|json] [--log-level LEVEL]",
		"bandit-node run --config /var/lib/bandit/acme/config.toml\n"+
			"# With [runtime] schedtrace = true (the default) it restarts itself once with\n"+
			"# GODEBUG=schedtrace=2147483647, which saves the Go runtime a wake-up per message\n"+
			"# (docs/operations.md); it logs that it does.", stderr)
	logFormat := fs.String("log-format", "", "override log.format: text or json")
	logLevel := fs.String("log-level", "", "override log.level: debug, info, warn, error")
	_, cfg, err := fs.load(args, 0, 0)
	if err != nil {
		return err
	}
	// The flags override the logger's settings, not the config's: a reload
	// compares the file with the config, and log.* did not change there.
	logCfg := cfg.Log
	if *logFormat != "" {
		logCfg.Format = *logFormat
	}
	if *logLevel != "" {
		logCfg.Level = *logLevel
	}
	logger, err := newLogger(stderr, logCfg)
	if err != nil {
		return err
	}
	applySchedtrace(cfg.Runtime.Schedtrace, "[runtime] schedtrace", logger, restart)
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	n, err := node.New(cfg, reg, node.WithLogger(logger), node.WithBuild(buildinfo.Read(Version)))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	reloadOnSIGHUP(ctx, n, logger)
	ready, notified := notifyService(ctx, logger, cfg.Node.Name)
	defer notified()
	return n.Run(ctx, ready)
}

func newLogger(w io.Writer, c config.LogConfig) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", c.Level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch c.Format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: want text or json", c.Format)
}
