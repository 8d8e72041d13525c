// Package node is the daemon: it wires the libp2p host (package p2p) to the
// protocol families (package protocol and its sub-packages), runs sessions with
// their roles, serves the local control API and keeps results durably.
//
// Only cmd/bandit-node imports this package; it is the composition root.
package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// ControlProtocol is the protocol ID of session-control streams
// (sessions.ControlProtocol).
const ControlProtocol = sessions.ControlProtocol

// Option configures a Node.
type Option func(*Node) error

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option {
	return func(n *Node) error {
		if l == nil {
			return errors.New("WithLogger: nil logger")
		}
		n.log = l
		return nil
	}
}

// WithVersion sets the version reported by the API.
func WithVersion(v string) Option {
	return func(n *Node) error { n.version = v; return nil }
}

// Node is one organization's daemon: it owns the host, the store, the
// control API and the metrics listener, and hands the sessions to its
// runtime (package sessions).
type Node struct {
	// rt runs the sessions and holds the config in force (Reload hands it
	// each new one).
	rt       *sessions.Runtime
	reloadMu sync.Mutex // serializes reloads
	// editMu serializes the edits of the config file (AddPeer); taken
	// before reloadMu.
	editMu  sync.Mutex
	reloads *metrics.Reloads
	// events is the stream of what happens to the node (GET /v0/events).
	events  *events.Hub
	reg     *protocol.Registry
	log     *slog.Logger
	version string
	// started is when New built the node: GET /v0/node's uptime.
	started time.Time
	agent   string // the libp2p agent string (WithBuild); empty: p2p's default
	token   string
	// readToken is the read-only token (api.read_token_file), "" if none.
	readToken string

	host    *p2p.Host
	store   *store.Store
	metrics *metrics.Metrics
	// slogs keeps each session's log lines (sessionlog.go); n.log writes
	// to it.
	slogs *store.SessionLogs

	// standing schedules the standing sessions (standing.go).
	standing *standing.Scheduler
	// retentionKick asks runRetention for a pass (retention.go).
	retentionKick chan struct{}

	mu      sync.Mutex // guards apiLn, metricsSrv and metricsLn
	api     *http.Server
	apiTLS  *tls.Config // nil for plain HTTP
	apiLn   net.Listener
	hostCtx context.Context
	stop    context.CancelFunc

	// metricsSrv and metricsLn are the metrics listener's (metrics.listen),
	// nil when it is off; guarded by mu.
	metricsSrv *http.Server
	metricsLn  net.Listener
}

// ID returns the node's peer ID.
func (n *Node) ID() peer.ID { return n.host.ID() }

// Addrs returns the node's listen multiaddrs.
func (n *Node) Addrs() []multiaddr.Multiaddr { return n.host.Addrs() }

// config returns the config in force.
func (n *Node) config() *config.Config { return n.rt.Config() }

// eventsKept is how many events the node keeps for the readers of its
// event stream that reconnect (GET /v0/events, Last-Event-ID).
const eventsKept = 1024

// StartSession validates a spec written by this node's operator, resolves
// its address-book names and proposes it (sessions.Runtime.StartSession).
// It returns the new session's ID.
func (n *Node) StartSession(specText []byte) (string, error) { return n.rt.StartSession(specText) }

// CancelSession aborts the active session id on every participant
// (sessions.Runtime.CancelSession).
func (n *Node) CancelSession(id string) error { return n.rt.CancelSession(id) }

// ready reports whether the node is ready to take part in sessions — its
// libp2p host is listening, its data directory takes what it writes and
// at least metrics.min_peers address-book peers are connected — and, when
// it is not, why.
func (n *Node) ready() (reason string, ok bool) {
	if n.rt.Closing() {
		return n.config().Node.Name + " is shutting down", false
	}
	if len(n.host.Addrs()) == 0 {
		return "the libp2p host is not listening (node.listen)", false
	}
	if reason := n.storageProblem(); reason != "" {
		return reason, false
	}
	peers := n.host.Peers()
	connected := 0
	for _, p := range peers {
		if p.Connected {
			connected++
		}
	}
	if min := n.config().Metrics.MinPeers; connected < min {
		return fmt.Sprintf("%d of the %d address-book peers connected, fewer than metrics.min_peers = %d", connected, len(peers), min), false
	}
	return "", true
}

// storageProblem says what keeps this node's data directory from storing
// what it must — session records, session logs — "" if nothing: a reason
// /readyz gives.
func (n *Node) storageProblem() string {
	if p := n.store.Problem(); p != "" {
		return "storage: " + p
	}
	if p := n.slogs.Problem(); p != "" {
		return "storage: " + p
	}
	return ""
}
