package node

import (
	"fmt"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/libp2p/go-libp2p/core/peer"
)

// CreateIdentity creates a node's Ed25519 identity key in a new file at path
// (mode 0600; it refuses to overwrite an existing one) and returns the peer ID
// it gives the node, as other nodes' address books name it.
func CreateIdentity(path string) (string, error) {
	_, id, err := p2p.GenerateIdentity(path)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// IdentityPeerID reads the identity key at path, with the checks a starting
// node makes, and returns the peer ID it gives the node.
func IdentityPeerID(path string) (string, error) {
	key, err := p2p.LoadIdentity(path)
	if err != nil {
		return "", err
	}
	id, err := peer.IDFromPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("deriving the peer ID of identity key file %s: %w", path, err)
	}
	return id.String(), nil
}
