package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node"
	"github.com/bandit-node/bandit-node/node/client"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/libp2p/go-libp2p/core/peer"
)

// maxCardSize bounds a peer card read from a file or stdin.
const maxCardSize = 64 << 10

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
	card, err := parsePeerCard(text)
	if err != nil {
		return fmt.Errorf("peer card %s: %w", pos[0], err)
	}
	if err := checkNewPeer(cfg, card); err != nil {
		return fmt.Errorf("peer card %s: %w", pos[0], err)
	}
	old, err := os.ReadFile(cfg.Path)
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	next := appendCard(old, text)
	// The new file must load as the daemon will load it.
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	if _, err := config.ParseConfig(cfg.Path, next, reg); err != nil {
		return fmt.Errorf("the config with this card would not load, so it is left as it was: %w", err)
	}
	if err := writeFileAtomic(cfg.Path, next); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s (%s) to %s\n", card.Name, card.PeerID, cfg.Path)

	c, err := client.FromFiles(cfg.API.Listen, cfg.API.TokenFile, cfg.API.TrustFile())
	if err != nil {
		return err
	}
	ctx, cancel := withTimeout(ctx)
	defer cancel()
	ch, err := c.Reload(ctx)
	var refused *client.Error
	switch {
	case errors.As(err, &refused):
		return fmt.Errorf("the card is saved, but the running daemon refused the new config: %w", err)
	case err != nil:
		fmt.Fprintf(stdout, "the daemon is not running (%v);\nthe card is saved and takes effect when it starts\n", err)
		return nil
	}
	fmt.Fprintf(stdout, "the daemon reloaded its config: %s\n", ch)
	return nil
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
	text, err := io.ReadAll(io.LimitReader(r, maxCardSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the peer card %s: %w", path, err)
	}
	if len(text) > maxCardSize {
		return nil, fmt.Errorf("peer card %s: larger than %d bytes; a card is one [[peers]] block", path, maxCardSize)
	}
	return text, nil
}

// checkNewPeer refuses a card whose name or peer ID the address book, or
// this node itself, already has.
func checkNewPeer(cfg *config.Config, card config.PeerConfig) error {
	id, _ := peer.Decode(card.PeerID) // parsePeerCard checked it
	if card.Name == cfg.Node.Name {
		return fmt.Errorf("%q is this node's own name (node.name)", card.Name)
	}
	if self, err := node.IdentityPeerID(cfg.Node.Identity); err == nil && self == id.String() {
		return fmt.Errorf("%s is this node's own peer ID: this is its own card", id)
	}
	for i, p := range cfg.Peers {
		other, _ := peer.Decode(p.PeerID)
		switch {
		case p.Name == card.Name:
			return fmt.Errorf("the address book already has a peer named %q (peers[%d], %s)", p.Name, i, p.PeerID)
		case other == id:
			return fmt.Errorf("the address book already has peer ID %s, named %q (peers[%d])", id, p.Name, i)
		}
	}
	return nil
}

// appendCard returns the config text old with the card appended after a
// blank line: the existing text, comments included, is kept as it is.
func appendCard(old, card []byte) []byte {
	out := append([]byte{}, old...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, '\n')
	out = append(out, card...)
	if len(card) > 0 && card[len(card)-1] != '\n' {
		out = append(out, '\n')
	}
	return out
}

// writeFileAtomic replaces path with data: it writes a temporary file in the
// same directory with path's mode, syncs it and renames it over path, so a
// reader (the daemon reloading) sees the old file or the new one, whole.
func writeFileAtomic(path string, data []byte) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the config: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing the config: %w", err)
	}
	done = true
	return nil
}
