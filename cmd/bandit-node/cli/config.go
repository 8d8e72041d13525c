package cli

import (
	"context"
	"flag"
	"io"
	"time"

	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/client"
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
	return configFlags{fs, fs.String("config", "", "the node's config.toml (required)")}
}

// load parses args as parseArgs does, then loads the --config file.
func (f configFlags) load(args []string, minPos, maxPos int) ([]string, *node.Config, error) {
	pos, err := parseArgs(f.FlagSet, args, minPos, maxPos)
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
func (f configFlags) dial(args []string, minPos, maxPos int) ([]string, *client.Client, *node.Config, error) {
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

// loadConfig loads the --config file, which every daemon-facing command needs.
func loadConfig(fs *flag.FlagSet, path string) (*node.Config, error) {
	if path == "" {
		fs.Usage()
		return nil, usageError{fs.Name() + ": --config is required"}
	}
	reg, err := Families()
	if err != nil {
		return nil, err
	}
	return node.LoadConfig(path, reg)
}

// requestTimeout bounds one control-API call from the CLI.
const requestTimeout = 30 * time.Second

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}
