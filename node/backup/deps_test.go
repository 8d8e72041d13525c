package backup

import (
	"testing"

	"github.com/bandit-node/bandit-node/internal/deptest"
)

// TestDependencies: an archive is files; the package knows nothing of how
// the daemon runs, of the network or of the control API. The peer ID of an
// identity key is computed by its caller (Options.PeerID).
func TestDependencies(t *testing.T) {
	deptest.Forbid(t, ".", map[string]string{
		"github.com/bandit-node/bandit-node/node$":         "the CLI uses backup with the daemon's files, not the daemon",
		"github.com/bandit-node/bandit-node/node/sessions": "a backup copies files; it runs no session",
		"github.com/bandit-node/bandit-node/node/api":      "a backup reads files, not the control API",
		"github.com/bandit-node/bandit-node/p2p":           "the peer ID is computed by the caller",
		"github.com/libp2p/go-libp2p$":                     "the peer ID is computed by the caller",
	})
}
