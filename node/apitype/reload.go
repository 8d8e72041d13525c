package apitype

import (
	"fmt"
	"strings"
)

// ConfigChange answers POST /v0/config/reload: what the re-read config file
// changed in the running daemon. Names are address-book names; keys are
// config keys (policy.samba, local.samba.data_owner, session.peer_timeout).
type ConfigChange struct {
	// PeersAdded are the address-book peers that joined, now allowed and
	// dialed; PeersRemoved those that left, disconnected and refused
	// from now on; PeersReaddressed those whose addrs changed.
	PeersAdded       []string `json:"peers_added,omitempty"`
	PeersRemoved     []string `json:"peers_removed,omitempty"`
	PeersReaddressed []string `json:"peers_readdressed,omitempty"`
	// Policy are the [policy.<family>] tables added, removed or changed.
	Policy []string `json:"policy,omitempty"`
	// Local are the [local.<family>.<role>] tables added, removed or
	// changed (their data, their environment).
	Local []string `json:"local,omitempty"`
	// Settings are the keys changed live ([session] keys, which new
	// sessions take, and metrics.min_peers).
	Settings []string `json:"settings,omitempty"`
	// Standing are the standing sessions ([[sessions]]) added, removed or
	// changed, as sessions.NAME; a run in progress goes on.
	Standing []string `json:"standing,omitempty"`
	// Aborted are the sessions that ran with a removed peer, aborted.
	Aborted []string `json:"aborted_sessions,omitempty"`
}

// Empty reports whether the reload changed nothing.
func (c ConfigChange) Empty() bool {
	return len(c.PeersAdded)+len(c.PeersRemoved)+len(c.PeersReaddressed)+len(c.Policy)+len(c.Local)+len(c.Settings)+len(c.Standing)+len(c.Aborted) == 0
}

// String is the change in one line: "peers added: node4; policy changed:
// samba", or "nothing changed".
func (c ConfigChange) String() string {
	var parts []string
	add := func(what string, v []string) {
		if len(v) > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", what, strings.Join(v, ", ")))
		}
	}
	add("peers added", c.PeersAdded)
	add("peers removed", c.PeersRemoved)
	add("peers with new addresses", c.PeersReaddressed)
	add("policy changed", c.Policy)
	add("local data changed", c.Local)
	add("settings changed", c.Settings)
	add("standing sessions changed", c.Standing)
	add("sessions aborted (they ran with a removed peer)", c.Aborted)
	if len(parts) == 0 {
		return "nothing changed"
	}
	return strings.Join(parts, "; ")
}
