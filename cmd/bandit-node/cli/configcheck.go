package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol"
)

// runConfigCheck checks a config file, or a session spec, with the code
// the daemon uses, without changing anything: a config as the daemon loads
// it (config.LoadConfig, then the files and programs [local] names), and —
// when the daemon it belongs to runs — as a reload would take it (its dry
// run, POST /v0/config/check), printing what a reload would change; a spec
// as session start would (protocol.ParseSpec, Registry.CheckSpec).
func runConfigCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("config check", "config check [--config FILE] [--spec] [PATH]",
		"bandit-node config check --config /var/lib/bandit/acme/config.toml            # before a SIGHUP\n"+
			"bandit-node config check --config /var/lib/bandit/acme/config.toml new.toml   # a candidate, against the running daemon\n"+
			"bandit-node config check samba.toml                                           # a session spec", stderr)
	asSpec := fs.Bool("spec", false, "PATH is a session spec (the default: a file with a top-level protocol key is one)")
	pos, err := clikit.ParseArgs(fs.FlagSet, args, 0, 1)
	if err != nil {
		return err
	}
	if len(pos) == 1 {
		text, err := os.ReadFile(pos[0])
		if err != nil {
			return err
		}
		if *asSpec || isSpec(text) {
			return checkSpec(pos[0], text, stdout)
		}
	} else if *asSpec {
		return clikit.UsageError{Msg: "config check --spec: name the spec file"}
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	// The daemon's own config: --config, $BANDIT_NODE_CONFIG or ./config.toml;
	// without PATH it is the file checked.
	daemonPath, daemonErr := configPath(*fs.path, os.Getenv, os.Stat)
	path := daemonPath
	if len(pos) == 1 {
		path = pos[0]
	} else if daemonErr != nil {
		fs.Usage()
		return clikit.UsageError{Msg: "config check: " + daemonErr.Error()}
	}
	cfg, err := config.LoadConfig(path, reg)
	if err != nil {
		return err
	}
	if err := cfg.CheckLocalData(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	fmt.Fprintf(stdout, "%s: the config is valid\n", path)
	for _, w := range cfg.Warnings() {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	if daemonErr != nil {
		fmt.Fprintf(stdout, "no running daemon to compare with (%v)\n", daemonErr)
		return nil
	}
	daemon, err := config.LoadConfig(daemonPath, reg)
	if err != nil {
		fmt.Fprintf(stdout, "no running daemon to compare with: its config %s does not load (%v)\n", daemonPath, err)
		return nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return reloadAndReport(ctx, daemon.API, stdout, reloadReport{
		dryRun:  true,
		text:    text,
		refused: "the running daemon would refuse it at a reload",
		notRunning: func(err error) string {
			return fmt.Sprintf("the daemon of %s is not running (%v): nothing to compare with", daemonPath, err)
		},
	})
}

// isSpec reports whether text is a session spec rather than a config: a
// top-level protocol key, which no config has.
func isSpec(text []byte) bool {
	var top map[string]any
	if _, err := toml.Decode(string(text), &top); err != nil {
		return false
	}
	_, ok := top["protocol"]
	return ok
}

// checkSpec checks a session spec as session start does, offline.
func checkSpec(path string, text []byte, stdout io.Writer) error {
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	spec, err := protocol.ParseSpec(path, text)
	if err != nil {
		return err
	}
	if _, err := reg.CheckSpec(spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var roles []string
	for _, role := range slices.Sorted(maps.Keys(spec.Roles.Roles)) {
		roles = append(roles, fmt.Sprintf("%s: %s", role, strings.Join(spec.Roles.Roles[role], ", ")))
	}
	fmt.Fprintf(stdout, "%s: a valid %s session spec", path, spec.Protocol)
	if len(roles) > 0 {
		fmt.Fprintf(stdout, " (%s)", strings.Join(roles, "; "))
	}
	fmt.Fprintln(stdout, "; the organizations are checked against an address book by session start")
	return nil
}
