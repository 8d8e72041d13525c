package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/peer"
)

func runID(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("id", "id --config FILE [--json]", "bandit-node id --config /var/lib/bandit/acme/config.toml --json", stderr)
	cfgPath := fs.String("config", "", "the node's config.toml (required)")
	asJSON := fs.Bool("json", false, "print JSON")
	if _, err := parseArgs(fs, args, 0, 0); err != nil {
		return err
	}
	c, cfg, err := apiClient(fs, *cfgPath)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	info, err := c.Node(ctx)
	if err != nil {
		// The daemon is not running: answer from the files.
		key, kerr := p2p.LoadIdentity(cfg.Node.Identity)
		if kerr != nil {
			return fmt.Errorf("%w (and the daemon is not reachable: %v)", kerr, err)
		}
		id, kerr := peer.IDFromPrivateKey(key)
		if kerr != nil {
			return kerr
		}
		info = apitype.NodeInfo{Name: cfg.Node.Name, PeerID: id.String(), Addrs: cfg.Node.Listen, Version: Version}
		fmt.Fprintln(stderr, "note: the daemon is not running; addresses are the configured ones")
	}
	if *asJSON {
		return printJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "name:    %s\npeer ID: %s\naddrs:   %s\n", info.Name, info.PeerID, strings.Join(info.Addrs, "\n         "))
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
