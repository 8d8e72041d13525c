package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
)

// configFlags is the preamble every daemon-facing command shares: its flag
// set (see newFlags), holding the --config flag they all take; the command
// adds its own flags, then calls load or dial.
type configFlags struct {
	*flag.FlagSet
	path *string
}

// newConfigFlags returns newFlags's flag set with the --config flag.
func newConfigFlags(name, synopsis, example string, out io.Writer) configFlags {
	fs := newFlags(name, synopsis, example, out)
	return configFlags{fs, fs.String("config", "", "the node's config.toml `FILE` (default: $"+configEnv+", else "+defaultConfig+" in the working directory if it exists)")}
}

// configEnv names the environment variable that stands for --config when
// the flag is not given; defaultConfig is the file looked for in the
// working directory when neither is.
const (
	configEnv     = "BANDIT_NODE_CONFIG"
	defaultConfig = "config.toml"
)

// configPath chooses the config file: the --config flag's value wins over
// $BANDIT_NODE_CONFIG, which wins over ./config.toml when that file exists.
// getenv and stat are os.Getenv and os.Stat outside tests. With none of the
// three it returns an error naming all three ways.
func configPath(flagValue string, getenv func(string) string, stat func(string) (fs.FileInfo, error)) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if v := getenv(configEnv); v != "" {
		return v, nil
	}
	_, err := stat(defaultConfig)
	if err == nil {
		return defaultConfig, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("looking for ./%s: %w", defaultConfig, err)
	}
	return "", errNoConfig
}

// errNoConfig says how to name the node's config file.
var errNoConfig = errors.New("no config file: pass --config FILE, set " + configEnv + "=FILE, or run in the directory holding " + defaultConfig)

// load parses args as parseArgs does, then loads the --config file.
func (f configFlags) load(args []string, minPos, maxPos int) ([]string, *config.Config, error) {
	pos, err := clikit.ParseArgs(f.FlagSet, args, minPos, maxPos)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := loadConfig(f.FlagSet, *f.path)
	if err != nil {
		return nil, nil, err
	}
	return pos, cfg, nil
}

// dial parses args as parseArgs does, loads the --config file and returns a
// client of the daemon it describes.
func (f configFlags) dial(args []string, minPos, maxPos int) ([]string, *client.Client, *config.Config, error) {
	pos, cfg, err := f.load(args, minPos, maxPos)
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.FromFiles(cfg.API.Listen, cfg.API.TokenFile, cfg.API.TrustFile())
	if err != nil {
		return nil, nil, nil, err
	}
	return pos, c, cfg, nil
}

// loadConfig loads the node's config file (configPath chooses it), which
// every daemon-facing command needs.
func loadConfig(fs *flag.FlagSet, flagValue string) (*config.Config, error) {
	path, err := configPath(flagValue, os.Getenv, os.Stat)
	if errors.Is(err, errNoConfig) {
		fs.Usage()
		return nil, clikit.UsageError{Msg: fs.Name() + ": " + err.Error()}
	}
	if err != nil {
		return nil, err
	}
	reg, err := families.Registry()
	if err != nil {
		return nil, err
	}
	return config.LoadConfig(path, reg)
}

// requestTimeout bounds one control-API call from the CLI.
const requestTimeout = 30 * time.Second

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}
