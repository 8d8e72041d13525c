package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/protocol"
)

// restartKeys are the config keys a running daemon cannot take without a
// restart: what its identity, its listeners, its data directory, its logger,
// its host's discovery and its frame limits were built from. A reload that
// changes one of them is refused (DiffConfig). Add a key here when a new
// config key is read only at start.
var restartKeys = []struct {
	key string
	get func(*Config) any
}{
	{"node.name", func(c *Config) any { return c.Node.Name }},
	{"node.data_dir", func(c *Config) any { return c.Node.DataDir }},
	{"node.identity", func(c *Config) any { return c.Node.Identity }},
	{"node.listen", func(c *Config) any { return c.Node.Listen }},
	{"api.listen", func(c *Config) any { return c.API.Listen }},
	{"api.token_file", func(c *Config) any { return c.API.TokenFile }},
	{"api.read_token_file", func(c *Config) any { return c.API.ReadTokenFile }},
	{"api.allow_remote", func(c *Config) any { return c.API.AllowRemote }},
	{"api.cert_file", func(c *Config) any { return c.API.CertFile }},
	{"api.key_file", func(c *Config) any { return c.API.KeyFile }},
	{"api.ca_file", func(c *Config) any { return c.API.CAFile }},
	{"log.level", func(c *Config) any { return c.Log.Level }},
	{"log.format", func(c *Config) any { return c.Log.Format }},
	{"discovery.mdns", func(c *Config) any { return c.Discovery.MDNS }},
	{"discovery.dial_backoff_min", func(c *Config) any { return c.Discovery.DialBackoffMin }},
	{"discovery.dial_backoff_max", func(c *Config) any { return c.Discovery.DialBackoffMax }},
	{"runtime.schedtrace", func(c *Config) any { return c.Runtime.Schedtrace }},
	// The metrics listener is opened when the daemon starts.
	{"metrics.listen", func(c *Config) any { return c.Metrics.Listen }},
	// The relay transport, the relay service and the reservation are
	// set up when the host starts.
	{"relay.service", func(c *Config) any { return c.Relay.Service }},
	{"relay.via", func(c *Config) any { return c.Relay.Via }},
	{"relay.max_bytes_per_circuit", func(c *Config) any { return valueOr0(c.Relay.MaxBytesPerCircuit) }},
	{"relay.max_circuits_per_peer", func(c *Config) any { return valueOr0(c.Relay.MaxCircuitsPerPeer) }},
	{"relay.max_reservations", func(c *Config) any { return valueOr0(c.Relay.MaxReservations) }},
	{"peers.relay", func(c *Config) any { return peerRelays(c) }},
	// The role streams' frame limit is set when they are registered.
	{"session.max_frame_size", func(c *Config) any { return c.Session.MaxFrameSize }},
}

// liveKeys are the keys a reload changes live: a session takes the
// [session] keys when it is proposed or accepted, and keeps them to its
// end; metrics.min_peers is read at every /readyz.
var liveKeys = []struct {
	key string
	get func(*Config) any
}{
	{"session.propose_timeout", func(c *Config) any { return c.Session.ProposeTimeout }},
	{"session.peer_timeout", func(c *Config) any { return c.Session.PeerTimeout }},
	{"session.heartbeat_interval", func(c *Config) any { return c.Session.HeartbeatInterval }},
	{"session.stall_timeout", func(c *Config) any { return c.Session.StallTimeout }},
	{"session.max_active", func(c *Config) any { return c.Session.MaxActive }},
	{"session.max_buffered_bytes", func(c *Config) any { return c.Session.MaxBufferedBytes }},
	{"session.max_peer_buffered_bytes", func(c *Config) any { return c.Session.MaxPeerBufferedBytes }},
	// The record retention is read at every pass of the pruner.
	{"session.keep", func(c *Config) any { return c.Session.Keep }},
	{"session.keep_count", func(c *Config) any { return c.Session.KeepCount }},
	{"metrics.min_peers", func(c *Config) any { return c.Metrics.MinPeers }},
}

// liveTables are the config's tables that DiffConfig compares on their own
// and a reload applies live: the address book, the policies, the local data,
// the standing sessions.
var liveTables = []string{"peers", "policy", "local", "sessions"}

// RestartError is a reload refused because the new config changes keys that
// take effect only when the daemon starts.
type RestartError struct {
	// Keys are the changed keys, in config order.
	Keys []string
}

func (e *RestartError) Error() string {
	return fmt.Sprintf("%s changed: restart the daemon to apply it (the running config stays in force)", strings.Join(e.Keys, ", "))
}

// DiffConfig compares the config in force, old, with next, both valid. It
// returns what a reload to next changes, or a *RestartError naming the keys
// that only a restart can change. The peers are compared by name; a name
// whose peer ID changed is a peer removed and another added.
func DiffConfig(old, next *Config) (apitype.ConfigChange, error) {
	var ch apitype.ConfigChange
	var restart []string
	for _, k := range restartKeys {
		if !reflect.DeepEqual(k.get(old), k.get(next)) {
			restart = append(restart, k.key)
		}
	}
	if len(restart) > 0 {
		return ch, &RestartError{Keys: restart}
	}
	for _, k := range liveKeys {
		if !reflect.DeepEqual(k.get(old), k.get(next)) {
			ch.Settings = append(ch.Settings, k.key)
		}
	}
	oldPeers := map[string]PeerConfig{}
	for _, p := range old.Peers {
		oldPeers[p.Name] = p
	}
	nextPeers := map[string]PeerConfig{}
	for _, p := range next.Peers {
		nextPeers[p.Name] = p
		o, ok := oldPeers[p.Name]
		switch {
		case !ok || o.PeerID != p.PeerID:
			ch.PeersAdded = append(ch.PeersAdded, p.Name)
		case !slices.Equal(o.Addrs, p.Addrs):
			ch.PeersReaddressed = append(ch.PeersReaddressed, p.Name)
		}
	}
	for _, p := range old.Peers {
		if n, ok := nextPeers[p.Name]; !ok || n.PeerID != p.PeerID {
			ch.PeersRemoved = append(ch.PeersRemoved, p.Name)
		}
	}
	for _, fam := range sortedUnion(old.Policy, next.Policy) {
		o, inOld := old.Policy[fam]
		n, inNext := next.Policy[fam]
		if inOld != inNext || !reflect.DeepEqual(o, n) {
			ch.Policy = append(ch.Policy, "policy."+fam)
		}
	}
	for _, fam := range sortedUnion(old.LocalData, next.LocalData) {
		for _, role := range sortedUnion(old.LocalData[fam], next.LocalData[fam]) {
			o, inOld := old.LocalData[fam][role]
			n, inNext := next.LocalData[fam][role]
			if inOld != inNext || !reflect.DeepEqual(o, n) ||
				!reflect.DeepEqual(old.Environments[fam][role], next.Environments[fam][role]) {
				ch.Local = append(ch.Local, protocol.LocalKey(fam, role))
			}
		}
	}
	ch.Standing = diffStanding(old.Sessions, next.Sessions)
	return ch, nil
}

// diffStanding names the standing sessions added, removed or changed (in
// their schedule, retry, spec file or the spec's text), sorted.
func diffStanding(old, next []StandingConfig) []string {
	byName := func(ss []StandingConfig) map[string]StandingConfig {
		m := make(map[string]StandingConfig, len(ss))
		for _, s := range ss {
			m[s.Name] = s
		}
		return m
	}
	o, n := byName(old), byName(next)
	var changed []string
	for _, name := range sortedUnion(o, n) {
		a, inOld := o[name]
		b, inNext := n[name]
		// The checked spec follows from the text; its family need not
		// compare equal.
		a.Checked, b.Checked = nil, nil
		if inOld != inNext || !reflect.DeepEqual(a, b) {
			changed = append(changed, "sessions."+name)
		}
	}
	return changed
}

// sortedUnion returns the keys of a and b, sorted, each once.
func sortedUnion[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// ErrNoConfigFile is a reload of a daemon that was not started from a file.
var ErrNoConfigFile = errors.New("this daemon was not started from a config file: nothing to re-read")

// valueOr0 is *p, or 0 for a key left out: the relay limits' "the p2p
// default", so that writing the default out is no change.
func valueOr0[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
