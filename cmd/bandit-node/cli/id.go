package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	manet "github.com/multiformats/go-multiaddr/net"
)

func runID(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("id", "id --config FILE [--json | --peer-card]", "bandit-node id --config /var/lib/bandit/acme/config.toml --json\n"+
		"bandit-node id --config /var/lib/bandit/acme/config.toml --peer-card >acme.card", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	card := fs.Bool("peer-card", false, "print this node's [[peers]] block for the peers' configs (bandit-node peers add)")
	_, c, cfg, err := fs.dial(args, 0, 0)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	info, err := c.Node(ctx)
	if err != nil {
		// The daemon is not running: answer from the files.
		id, kerr := node.IdentityPeerID(cfg.Node.Identity)
		if kerr != nil {
			return fmt.Errorf("%w (and the daemon is not reachable: %v)", kerr, err)
		}
		info = apitype.NodeInfo{Name: cfg.Node.Name, PeerID: id, Addrs: cfg.Node.Listen, Version: Version, Warnings: cfg.Warnings()}
		fmt.Fprintln(stderr, "note: the daemon is not running; addresses are the configured ones")
	}
	if *card {
		ifaces, err := manet.InterfaceMultiaddrs()
		if err != nil {
			fmt.Fprintf(stderr, "note: listing this machine's interfaces: %v\n", err)
		}
		text, err := config.PeerCard(info.Name, info.PeerID, info.Addrs, ifaces)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, text)
		return err
	}
	if *asJSON {
		return printJSON(stdout, info)
	}
	fmt.Fprintf(stdout, "name:    %s\npeer ID: %s\naddrs:   %s\n", info.Name, info.PeerID, strings.Join(info.Addrs, "\n         "))
	printNodeStatus(stdout, info)
	return nil
}

// printNodeStatus prints what the config in force leaves the node unable
// to do and how its last config reload went: a refused reload leaves the
// old config running, which the operator must see.
func printNodeStatus(w io.Writer, info apitype.NodeInfo) {
	for _, warn := range info.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	if r := info.LastReload; r != nil {
		switch r.Result {
		case "refused":
			// The reason says that the running config stays in force.
			fmt.Fprintf(w, "last reload: refused at %s: %s\n", r.At.Format(time.RFC3339), r.Reason)
		default:
			fmt.Fprintf(w, "last reload: %s at %s (%s)\n", r.Result, r.At.Format(time.RFC3339), r.Change)
		}
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
