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
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
	"github.com/multiformats/go-multiaddr"
)

// ControlProtocol is the protocol ID of session-control streams. 1.1.0:
// the lifecycle of node/lifecycle, whose participants repeat their Accept
// and Done until answered and whose ended sessions answer from their
// records — a 1.0.0 initiator would abort on a repeated Done, so the two
// do not talk ("protocols not supported" at the proposal) rather than fail
// now and then. 2.0.0: every stream of the daemon, control and role,
// carries a link (p2p link.go: a header, numbered frames, acknowledgements
// and resends across reconnections), which a 1.x daemon cannot read; its
// role streams keep their IDs, since a session never reaches them without
// a proposal on this one.
const ControlProtocol = libp2pprotocol.ID("/bandit/session/" + controlWireVersion)

// RoleProtocol is the protocol ID of the role streams of a family:
// /bandit/<name>/<protocol.WireVersion>.
func RoleProtocol(f protocol.Family) libp2pprotocol.ID {
	return libp2pprotocol.ID("/bandit/" + f.Name() + "/" + protocol.WireVersion(f))
}

// shutdownGrace bounds how long a stopping daemon spends telling its peers
// that its sessions are aborted.
const shutdownGrace = 5 * time.Second

// shutdownLinger is how long a stopping daemon that aborted sessions keeps
// its connections open after the aborts went out.
const shutdownLinger = 500 * time.Millisecond

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

// Node is one organization's daemon.
type Node struct {
	// live is the config in force and the address book built from it,
	// swapped whole by a reload (reload.go); a session keeps the one it
	// started under. Read it with config() or live.Load().
	live     atomic.Pointer[liveConfig]
	reloadMu sync.Mutex // serializes reloads
	reloads  *reloadStatus
	// events is the stream of what happens to the node (GET /v0/events).
	events  *events.Hub
	reg     *protocol.Registry
	log     *slog.Logger
	version string
	agent   string // the libp2p agent string (WithBuild); empty: p2p's default
	token   string
	// readToken is the read-only token (api.read_token_file), "" if none.
	readToken string

	host    *p2p.Host
	gossip  *p2p.Gossip
	control *p2p.Messenger
	roles   map[libp2pprotocol.ID]*p2p.Messenger // by role protocol: a family's, per wire version it speaks
	store   *store.Store
	metrics *metrics.Metrics
	// slogs keeps each session's log lines (sessionlog.go); n.log writes
	// to it.
	slogs *store.SessionLogs
	// proposals bounds the proposals examined at once; examining tracks
	// the goroutines that examine them, which shutdown waits for.
	proposals chan struct{}
	examining sync.WaitGroup
	// traceOut, when set (by tests), sees every protocol message this node
	// sends to another organization, direct or on a topic.
	traceOut func(session string, m protocol.Message)
	// roleRand, when set (by tests only), replaces crypto/rand as the roles'
	// randomness, so a networked session can be replayed against a reference.
	roleRand func(p protocol.Party) io.Reader
	// envRand, when set (by tests only), replaces crypto/rand as the
	// randomness of the roles' simulated environments.
	envRand func(p protocol.Party) io.Reader
	// specParses counts the spec texts this node has parsed (parseSpec),
	// so a test can hold it to one parse per session.
	specParses atomic.Int64
	// progressSave is how often, at most, a running session's progress is
	// stored (progressSaveEvery; tests shorten it).
	progressSave time.Duration

	mu       sync.Mutex // guards sessions and closing, and writes to recent
	sessions map[string]*session
	recent   atomic.Pointer[session] // the session lookupBytes found last, while active; read without mu
	closing  bool
	wg       sync.WaitGroup // session goroutines

	// standing schedules the standing sessions (standing.go).
	standing *standing.Scheduler
	// retentionKick asks runRetention for a pass (retention.go).
	retentionKick chan struct{}

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

// nameOf returns the address-book name of id in the book in force, or its
// string form.
func (n *Node) nameOf(id peer.ID) string { return n.live.Load().nameOf(id) }

// config returns the config in force.
func (n *Node) config() *config.Config { return n.live.Load().cfg }

// controlWireVersion is the version of the session-control protocol this
// build speaks (ControlProtocol). When it changes in a way an earlier
// daemon cannot follow, the previous version joins controlWireVersions
// for as long as this build still speaks it.
const controlWireVersion = "2.0.0"

// lookup returns the active session id, or nil.
func (n *Node) lookup(id string) *session {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sessions[id]
}

// eventsKept is how many events the node keeps for the readers of its
// event stream that reconnect (GET /v0/events, Last-Event-ID).
const eventsKept = 1024

// publishPeer publishes that address-book peer id connected or lost its
// last connection (events.KindPeer).
func (n *Node) publishPeer(id peer.ID, connected bool) {
	n.events.Publish(events.KindPeer, peerEvent{Name: n.nameOf(id), PeerID: id.String(), Connected: connected})
}

// peerEvent is the data of an events.KindPeer event.
type peerEvent struct {
	Name      string `json:"name"`
	PeerID    string `json:"peer_id"`
	Connected bool   `json:"connected"`
}
