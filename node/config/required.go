package config

import (
	"errors"

	"github.com/BurntSushi/toml"
)

// requireNode checks, on a decoded config file's metadata, that the file
// states what no default may stand in for: [node] name and listen. An
// empty file, or one cut short before them, would otherwise start a daemon
// under a made-up name on every interface of its machine.
func requireNode(md toml.MetaData) error {
	if len(md.Keys()) == 0 {
		return errors.New("the config is empty (nothing but blanks and comments): a node needs at least [node] name and listen; " +
			"`bandit-node init --dir DIR --name NAME --listen MULTIADDR` writes a complete config to start from")
	}
	if !md.IsDefined("node") {
		return errors.New("[node]: missing: give the [node] table with name and listen " +
			"(was the file cut short, or is it not this daemon's config?)")
	}
	if !md.IsDefined("node", "name") {
		return errors.New("node.name: missing: give this organization's name, as its peers list it in their address books, such as name = \"acme\"")
	}
	if !md.IsDefined("node", "listen") {
		return errors.New("node.listen: missing, and there is no default: state the addresses to listen on, " +
			"such as listen = [\"/ip4/192.0.2.10/tcp/4001\"] for one interface, " +
			"or listen = [\"/ip4/0.0.0.0/tcp/4001\", \"/ip4/0.0.0.0/udp/4001/quic-v1\"] for every interface")
	}
	return nil
}

// Warnings says what a config that loads leaves this node unable to do,
// one sentence each: an empty address book, no protocol enabled. The
// daemon logs them at WARN when it starts and when a reload puts the
// config in force; `bandit-node id` and GET /v0/node show them.
func (c *Config) Warnings() []string {
	var w []string
	if len(c.Peers) == 0 {
		w = append(w, "no [[peers]]: this node can connect to no organization until peers are added (bandit-node peers add)")
	}
	if len(c.Policy) == 0 {
		// admit (policy.go) checks the initiator's own policy too: with
		// no [policy.*] this node cannot start a session either.
		w = append(w, "no [policy.*]: this node declines every proposal, and cannot initiate a session either, "+
			"since every protocol is disabled here; enable one with a [policy.<protocol>] table")
	}
	return w
}
