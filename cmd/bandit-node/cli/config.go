package cli

import (
	"context"
	"flag"
	"time"

	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/client"
)

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

// apiClient returns a client of the daemon the config describes.
func apiClient(fs *flag.FlagSet, path string) (*client.Client, *node.Config, error) {
	cfg, err := loadConfig(fs, path)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.FromFiles(cfg.API.Listen, cfg.API.TokenFile, cfg.API.TrustFile())
	if err != nil {
		return nil, nil, err
	}
	return c, cfg, nil
}

// requestTimeout bounds one control-API call from the CLI.
const requestTimeout = 30 * time.Second

func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, requestTimeout)
}
