package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/config"
)

// runPeersAdd appends a peer card to the config file and has the running
// daemon reload it.
func runPeersAdd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("peers add", "peers add --config FILE CARD   (CARD: a file, or - for stdin)",
		"bandit-node id --config /var/lib/bandit/globex/config.toml --peer-card >globex.card   # at globex\n"+
			"bandit-node peers add --config /var/lib/bandit/acme/config.toml globex.card          # at acme", stderr)
	pos, cfg, err := fs.load(args, 1, 1)
	if err != nil {
		return err
	}
	text, err := readCard(pos[0])
	if err != nil {
		return err
	}
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	self, _ := node.IdentityPeerID(cfg.Node.Identity) // "" if unreadable: the name is still checked
	card, _, err := config.AddPeerCard(cfg.Path, text, reg, self)
	if err != nil {
		return fmt.Errorf("peer card %s: %w", pos[0], err)
	}
	fmt.Fprintf(stdout, "added %s (%s) to %s\n", card.Name, card.PeerID, cfg.Path)

	return reloadAndReport(ctx, cfg.API, stdout, reloadReport{
		refused: "the card is saved, but the running daemon refused the new config",
		notRunning: func(err error) string {
			return fmt.Sprintf("the daemon is not running (%v);\nthe card is saved and takes effect when it starts", err)
		},
	})
}

// readCard reads the card at path, or stdin for "-".
func readCard(path string) ([]byte, error) {
	r := io.Reader(os.Stdin)
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("peer card: %w", err)
		}
		defer f.Close()
		r = f
	}
	text, err := io.ReadAll(io.LimitReader(r, config.MaxPeerCardSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the peer card %s: %w", path, err)
	}
	if len(text) > config.MaxPeerCardSize {
		return nil, fmt.Errorf("peer card %s: larger than %d bytes; a card is one [[peers]] block", path, config.MaxPeerCardSize)
	}
	return text, nil
}
