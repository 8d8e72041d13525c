package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
	"github.com/bandit-node/bandit-node/node/apitype"
)

// peersCommands are the subcommands of peers (which alone lists the peers).
func peersCommands() []clikit.Command {
	return []clikit.Command{
		{Name: "add", Summary: "add an organization's peer card to the address book", Run: runPeersAdd},
		{Name: "remove", Summary: "take an organization out of the address book: it is disconnected and refused", Run: runPeersRemove},
	}
}

func runPeers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		for _, c := range peersCommands() {
			if c.Name == args[0] {
				return c.Run(ctx, args[1:], stdout, stderr)
			}
		}
	}
	fs := newConfigFlags("peers", "peers --config FILE [--json]", "bandit-node peers --config /var/lib/bandit/acme/config.toml", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	_, c, _, err := fs.dial(args, 0, 0)
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	peers, err := c.Peers(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, peers)
	}
	return printPeers(stdout, peers)
}

// printPeers writes the peers table: one line a peer, with its state,
// its connection kind (direct or relayed), latency, version and, for a
// peer that is not connected, why in words (the error itself when the node
// gives no reason; --json has both).
func printPeers(stdout io.Writer, peers []apitype.Peer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tCONN\tLATENCY\tVERSION\tPEER ID\tLAST ERROR")
	for _, p := range peers {
		state, lat, conn := "disconnected", "-", "-"
		if p.Connected {
			state = "connected"
		}
		if p.Conn != "" {
			conn = p.Conn // direct, or relayed through a circuit relay
		}
		if p.LatencyMicros > 0 {
			lat = fmt.Sprintf("%.2f ms", p.LatencyMicros/1e3)
		}
		why := p.Reason
		if why == "" {
			why = p.LastError
		}
		// One line a peer: an error from an older daemon may span several.
		why = strings.Join(strings.Fields(why), " ")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, state, conn, lat, peerVersion(p.Agent), p.PeerID, why)
	}
	return tw.Flush()
}

// peerVersion is the VERSION column for a peer's agent string: the version
// and revision of a bandit-node ("0.2.0 (3f69a06)"), any other agent in
// full, "-" when unknown.
func peerVersion(agent string) string {
	if agent == "" {
		return "-"
	}
	if v, ok := strings.CutPrefix(agent, "bandit-node/"); ok {
		return v
	}
	return agent
}
