// Package p2p is bandit-node's networking layer on top of libp2p.
//
// It provides the daemon's libp2p host (TCP and QUIC, Noise and TLS, yamux,
// explicit resource limits), a connection gater that admits only the peers of
// the configured address book, an address-book dialer with exponential backoff,
// optional mDNS discovery, framed long-lived direct streams (Messenger) and
// gossipsub topics restricted to a set of participants (Gossip).
//
// The package imports nothing else from this module: node/ uses it to carry
// the protocols' role messages.
package p2p
