package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/node/config"
)

// runPeersRemove takes an organization out of the address book: it removes
// its [[peers]] table from the config file, atomically, and has the running
// daemon reload, which disconnects the peer, refuses its connections and
// aborts the sessions that run with it — as editing the file by hand and
// reloading does.
func runPeersRemove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newConfigFlags("peers remove", "peers remove --config FILE NAME",
		"bandit-node peers remove --config /var/lib/bandit/acme/config.toml globex", stderr)
	pos, cfg, err := fs.load(args, 1, 1)
	if err != nil {
		return err
	}
	name := pos[0]
	var names []string
	for _, p := range cfg.Peers {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, name) {
		if len(names) == 0 {
			return fmt.Errorf("%s has no peer named %q: its address book is empty", cfg.Path, name)
		}
		return fmt.Errorf("%s has no peer named %q (its peers: %v)", cfg.Path, name, names)
	}
	old, err := os.ReadFile(cfg.Path)
	if err != nil {
		return fmt.Errorf("reading the config: %w", err)
	}
	next, err := removePeerTable(old, name)
	if err != nil {
		return fmt.Errorf("%s: %w", cfg.Path, err)
	}
	// The new file must load as the daemon will load it, with the same
	// peers but name, in the same order.
	reg, err := families.Registry()
	if err != nil {
		return err
	}
	after, err := config.ParseConfig(cfg.Path, next, reg)
	if err != nil {
		return fmt.Errorf("the config without %s would not load, so it is left as it was: %w", name, err)
	}
	want := slices.DeleteFunc(slices.Clone(cfg.Peers), func(p config.PeerConfig) bool { return p.Name == name })
	if !slices.EqualFunc(after.Peers, want, func(a, b config.PeerConfig) bool {
		return a.Name == b.Name && a.PeerID == b.PeerID && slices.Equal(a.Addrs, b.Addrs) && a.Relay == b.Relay
	}) {
		return fmt.Errorf("removing %s's [[peers]] table would change other peers too, so the config is left as it was: edit it by hand", name)
	}
	if err := config.WriteFileAtomic(cfg.Path, next); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s from %s\n", name, cfg.Path)

	return reloadAndReport(ctx, cfg.API, stdout, reloadReport{
		refused: "the config is saved without " + name + ", but the running daemon refused it",
		notRunning: func(err error) string {
			return fmt.Sprintf("the daemon is not running (%v);\nthe change takes effect when it starts", err)
		},
	})
}

// tableHeader matches a TOML table or array-of-tables header line.
var tableHeader = regexp.MustCompile(`^\s*\[`)

// peerName matches the name key of a [[peers]] table, with its value.
var peerName = regexp.MustCompile(`^\s*name\s*=\s*(?:"([^"\\]*)"|'([^']*)')\s*(?:#.*)?$`)

// removePeerTable returns the config text old without the [[peers]] table
// whose name is name: the lines from its header to the next table's
// header, and the comment lines right above its header that belong to it
// (a peer card's "# Peer card of …" lines). Every other line is kept as it
// is. A peer written any other way (an inline table, a dotted key) is an
// error: the file is then to be edited by hand.
func removePeerTable(old []byte, name string) ([]byte, error) {
	lines := bytes.SplitAfter(old, []byte("\n"))
	start, end := -1, -1
	for i := 0; i < len(lines); i++ {
		if !bytes.Equal(bytes.TrimSpace(stripComment(lines[i])), []byte("[[peers]]")) {
			continue
		}
		j := i + 1
		for j < len(lines) && !tableHeader.Match(lines[j]) {
			j++
		}
		for _, l := range lines[i+1 : j] {
			if m := peerName.FindSubmatch(bytes.TrimRight(l, "\r\n")); m != nil && (string(m[1]) == name || string(m[2]) == name) {
				if start >= 0 {
					return nil, fmt.Errorf("two [[peers]] tables are named %q", name)
				}
				start, end = i, j
			}
		}
		i = j - 1
	}
	if start < 0 {
		return nil, fmt.Errorf("no [[peers]] table with name = %q (a peer written another way must be removed by hand)", name)
	}
	// Comments right above the header are the peer's (a card's heading).
	for start > 0 && bytes.HasPrefix(bytes.TrimSpace(lines[start-1]), []byte("#")) {
		start--
	}
	// The table's trailing blank lines go with it, and so does one blank
	// line above it when nothing but blank lines follow.
	out := slices.Concat(lines[:start]...)
	rest := slices.Concat(lines[end:]...)
	if len(bytes.TrimSpace(rest)) == 0 {
		out = append(bytes.TrimRight(out, "\n"), '\n')
		if len(bytes.TrimSpace(out)) == 0 {
			out = nil
		}
		return out, nil
	}
	return append(out, rest...), nil
}

// stripComment returns line without a trailing # comment (outside quotes
// is not checked: a header line holds no string).
func stripComment(line []byte) []byte {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		return line[:i]
	}
	return line
}
