// Package sessions is the session runtime of a daemon: it admits the
// proposals of peers and the operator's specs, runs every session's
// lifecycle (package lifecycle) and roles (package protocol/drive) over the
// libp2p host's control and role streams and gossip topics, and keeps each
// session's record in the store.
//
// The daemon (package node) builds a Runtime, attaches it to its host, and
// hands it each config that comes into force; it reaches the sessions only
// through the Runtime's methods. Nothing here imports package node.
package sessions

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
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

// controlWireVersion is the version of the session-control protocol this
// build speaks (ControlProtocol). When it changes in a way an earlier
// daemon cannot follow, the previous version joins controlWireVersions
// for as long as this build still speaks it.
const controlWireVersion = "2.0.0"

// RoleProtocol is the protocol ID of the role streams of a family:
// /bandit/<name>/<protocol.WireVersion>.
func RoleProtocol(f protocol.Family) libp2pprotocol.ID {
	return libp2pprotocol.ID("/bandit/" + f.Name() + "/" + protocol.WireVersion(f))
}

// ShutdownGrace bounds how long a stopping daemon spends telling its peers
// that its sessions are aborted.
const ShutdownGrace = 5 * time.Second

// shutdownLinger is how long a stopping daemon that aborted sessions keeps
// its connections open after the aborts went out.
const shutdownLinger = 500 * time.Millisecond

// Config is what a Runtime is built from: the daemon's parts it shares.
type Config struct {
	// Config is the daemon's config in force at the start; the address
	// book joins it at Attach.
	Config   *config.Config
	Registry *protocol.Registry
	Logger   *slog.Logger
	// Version is this build's, told to peers in proposals.
	Version string
	Metrics *metrics.Metrics
	Store   *store.Store
	Logs    *store.SessionLogs
	Events  *events.Hub
	// OnEnded, if set, is called after each session ended and its record
	// was written (the daemon's retention runs then).
	OnEnded func()
}

// Hooks are for tests and benchmarks only, set before the runtime is
// attached: they see or replace what a real daemon leaves to the network
// and crypto/rand.
type Hooks struct {
	// TraceOut sees every protocol message this node sends to another
	// organization, direct or on a topic.
	TraceOut func(session string, m protocol.Message)
	// RoleRand replaces crypto/rand as the roles' randomness, so a
	// networked session can be replayed against a reference.
	RoleRand func(p protocol.Party) io.Reader
	// EnvRand replaces crypto/rand as the randomness of the roles'
	// simulated environments.
	EnvRand func(p protocol.Party) io.Reader
	// ProgressSave, if set, replaces how often, at most, a running
	// session's progress is stored (0: every report).
	ProgressSave *time.Duration
}

// Runtime runs this node's sessions. Its methods are safe for concurrent
// use.
type Runtime struct {
	// live is the config in force and the address book built from it,
	// swapped whole by Reconfigure; a session keeps the one it started
	// under.
	live    atomic.Pointer[liveConfig]
	events  *events.Hub
	reg     *protocol.Registry
	log     *slog.Logger
	version string
	onEnded func()

	host    *p2p.Host
	gossip  *p2p.Gossip
	control *p2p.Messenger
	roles   map[libp2pprotocol.ID]*p2p.Messenger // by role protocol: a family's, per wire version it speaks
	store   *store.Store
	metrics *metrics.Metrics
	slogs   *store.SessionLogs
	hostCtx context.Context
	// proposals bounds the proposals examined at once; examining tracks
	// the goroutines that examine them, which Close waits for.
	proposals chan struct{}
	examining sync.WaitGroup
	// inExam holds the proposals being examined, by session and
	// initiator (guarded by mu): a copy its initiator resends meanwhile
	// is not examined a second time (examine).
	inExam map[examKey]struct{}

	traceOut func(session string, m protocol.Message)
	roleRand func(p protocol.Party) io.Reader
	envRand  func(p protocol.Party) io.Reader
	// specParses counts the spec texts this node has parsed (parseSpec),
	// so a test can hold it to one parse per session.
	specParses atomic.Int64
	// progressSave is how often, at most, a running session's progress is
	// stored (progressSaveEvery; tests shorten it).
	progressSave time.Duration

	mu       sync.Mutex // guards sessions, closing and inExam, and writes to recent
	sessions map[string]*session
	recent   atomic.Pointer[session] // the session lookupBytes found last, while active; read without mu
	closing  bool
	wg       sync.WaitGroup // session goroutines
}

// New returns the runtime of c, with no session and no host yet (Attach).
func New(c Config) *Runtime {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	n := &Runtime{events: c.Events, reg: c.Registry, log: log, version: c.Version, onEnded: c.OnEnded,
		roles: map[libp2pprotocol.ID]*p2p.Messenger{}, store: c.Store, metrics: c.Metrics, slogs: c.Logs,
		proposals: make(chan struct{}, 8), inExam: map[examKey]struct{}{}, progressSave: progressSaveEvery, sessions: map[string]*session{}}
	n.live.Store(newLiveConfig(c.Config, "", nil, nil))
	return n
}

// SetHooks sets the hooks of h that are set, keeping the others; call it
// before the sessions it is for start.
func (n *Runtime) SetHooks(h Hooks) {
	if h.TraceOut != nil {
		n.traceOut = h.TraceOut
	}
	if h.RoleRand != nil {
		n.roleRand = h.RoleRand
	}
	if h.EnvRand != nil {
		n.envRand = h.EnvRand
	}
	if h.ProgressSave != nil {
		n.progressSave = *h.ProgressSave
	}
}

// Attach connects the runtime to host, whose address book is book: it
// joins gossip, serves the session-control and role streams and follows
// the address-book peers' connections. The host must not listen yet, so
// that nothing reaches the node before its handlers exist. ctx bounds
// gossip and the redials; it ends when the daemon stops.
func (n *Runtime) Attach(ctx context.Context, host *p2p.Host, book []p2p.Peer) error {
	cfg := n.config()
	mopts := p2p.MessengerOptions{MaxFrameSize: cfg.Session.MaxFrameSize, WriteTimeout: sendTimeout, Logger: n.log, OnGiveUp: n.framesDropped}
	if err := mopts.Validate(); err != nil {
		return fmt.Errorf("session.max_frame_size: %w", err)
	}
	n.host, n.hostCtx = host, ctx
	n.live.Store(newLiveConfig(cfg, host.ID(), book, nil))
	var err error
	if n.gossip, err = p2p.NewGossip(ctx, host); err != nil {
		return fmt.Errorf("starting gossipsub: %w", err)
	}
	n.control = p2p.NewMessenger(host, ControlProtocol, n.handleControl, mopts)
	n.metrics.Traffic.Carry(metrics.KindControl, metrics.ControlProtocol, n.control)
	// Role frames are lent to their stream's roleStream, which copies what
	// it queues: one allocation a message fewer on the busiest path.
	ropts := mopts
	ropts.BorrowedFrames = true
	for _, fam := range n.reg.Names() {
		ropts.NewStreamHandler = func(from peer.ID) p2p.StreamHandler { return n.newRoleStream(fam, from) }
		f, err := n.reg.Lookup(fam)
		if err != nil {
			return err
		}
		// A role stream per version of the family's messages this
		// build speaks (protocol.Info.WireVersions).
		for _, v := range protocol.WireVersions(f) {
			fv, ok := protocol.AtWireVersion(f, v)
			if !ok {
				return fmt.Errorf("family %s lists wire version %s but does not speak it", fam, v)
			}
			id := RoleProtocol(fv)
			n.roles[id] = p2p.NewMessenger(host, id, nil, ropts)
			n.metrics.Traffic.Carry(metrics.KindRole, fam, n.roles[id])
		}
	}
	host.Notify(n.peerConnected, n.peerDisconnected)
	return nil
}

// Config returns the config in force.
func (n *Runtime) Config() *config.Config { return n.config() }

// config returns the config in force.
func (n *Runtime) config() *config.Config { return n.live.Load().cfg }

// NameOf returns the address-book name of id in the book in force, or its
// string form.
func (n *Runtime) NameOf(id peer.ID) string { return n.nameOf(id) }

// nameOf returns the address-book name of id in the book in force, or its
// string form.
func (n *Runtime) nameOf(id peer.ID) string { return n.live.Load().nameOf(id) }

// lookup returns the active session id, or nil.
func (n *Runtime) lookup(id string) *session {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sessions[id]
}

// Active reports whether session id runs on this node now.
func (n *Runtime) Active(id string) bool { return n.lookup(id) != nil }

// Snapshot returns the live record of the active session id, or false if
// no session of that ID is active.
func (n *Runtime) Snapshot(id string) (store.Record, bool) {
	s := n.lookup(id)
	if s == nil {
		return store.Record{}, false
	}
	return s.snapshot(), true
}

// Done returns a channel closed when the active session id ends, or nil
// if no session of that ID is active.
func (n *Runtime) Done(id string) <-chan struct{} {
	if s := n.lookup(id); s != nil {
		return s.done
	}
	return nil
}

// active returns the sessions the node holds now.
func (n *Runtime) active() []*session {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*session, 0, len(n.sessions))
	for _, s := range n.sessions {
		out = append(out, s)
	}
	return out
}

// States returns the state of each session the node holds, for
// bandit_sessions_by_state.
func (n *Runtime) States() []string {
	active := n.active()
	states := make([]string, 0, len(active))
	for _, s := range active {
		s.state.Lock()
		states = append(states, s.state.rec.Session.State)
		s.state.Unlock()
	}
	return states
}

// QueuedBytes is the bytes queued from all peers (bandit_queued_bytes).
func (n *Runtime) QueuedBytes() float64 {
	var sum int64
	for _, b := range n.live.Load().peerBuf {
		sum += b.bytes.Load()
	}
	return float64(sum)
}

// Closing reports whether the runtime is stopping (Stop).
func (n *Runtime) Closing() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closing
}

// AddressBook converts next's [[peers]] to the host's address book. A
// peer that stays keeps the book's copy of its ID, which the running
// sessions hold: comparing the two stays a pointer compare.
func (n *Runtime) AddressBook(next *config.Config) ([]p2p.Peer, error) {
	book, err := addressBook(next)
	if err != nil {
		return nil, err
	}
	prev := n.live.Load()
	for i, p := range book {
		if old, ok := prev.ids[p.Name]; ok && old == p.ID {
			book[i].ID = old
		}
	}
	return book, nil
}

// Reconfigure puts next, with its address book book (AddressBook), in
// force for new proposals and sessions; a running session keeps the
// config and address book it was created under to its end. A session
// that runs with a peer that left the book cannot go on — the peer is
// disconnected and refused — so it aborts now, saying why, rather than at
// its heartbeat timeout: Reconfigure returns the IDs of those sessions.
func (n *Runtime) Reconfigure(next *config.Config, book []p2p.Peer) (aborted []string) {
	prev := n.live.Load()
	live := newLiveConfig(next, n.host.ID(), book, prev)
	n.live.Store(live)
	removed := map[peer.ID]string{}
	for id, name := range prev.names {
		if _, ok := live.names[id]; !ok {
			removed[id] = name
		}
	}
	if len(removed) == 0 {
		return nil
	}
	for _, s := range n.active() {
		var gone []string
		for id, name := range removed {
			if _, ok := s.orgIndex[id]; ok {
				gone = append(gone, name)
			}
		}
		if len(gone) == 0 {
			continue
		}
		aborted = append(aborted, s.id)
		go s.requestAbort(fmt.Sprintf("%v removed from the address book of %s by a config reload", gone, next.Node.Name))
	}
	return aborted
}

// PeerID returns the peer ID of the organization name in the address book
// in force (this node's own included), or false if the book has none.
func (n *Runtime) PeerID(name string) (peer.ID, bool) {
	id, ok := n.live.Load().ids[name]
	return id, ok
}

// Stop aborts every session, saying that the node shuts down, and takes no
// new one; it returns once they ended or after a grace. The connections
// stay open (Close).
func (n *Runtime) Stop() {
	n.mu.Lock()
	n.closing = true
	n.mu.Unlock()
	active := n.active()
	for _, s := range active {
		s.requestAbort(fmt.Sprintf("%s is shutting down", n.config().Node.Name))
	}
	waited := make(chan struct{})
	go func() { n.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(ShutdownGrace + time.Second):
		n.log.Warn("some sessions did not stop in time; they were recorded as aborted when they started running")
	}
	if len(active) > 0 {
		// The aborts just sent are this daemon's last words: the peers
		// get a moment to read them before the connections close. A
		// connection closed while the peer's frames to it are unread is
		// reset, and the reset can discard what was written just before
		// it: the peer then records the failed send or the silence, not
		// the shutdown (TestShutdownAndRestart, 1 run in 40 under load).
		time.Sleep(shutdownLinger)
	}
}

// Close closes the control and role streams and waits for the proposals
// being examined, which decline since the runtime stopped (Stop first).
func (n *Runtime) Close() {
	if n.control != nil {
		n.control.Close()
	}
	for _, m := range n.roles {
		m.Close()
	}
	n.examining.Wait()
}

// publishPeer publishes that address-book peer id connected or lost its
// last connection (events.KindPeer).
func (n *Runtime) publishPeer(id peer.ID, connected bool) {
	n.events.Publish(events.KindPeer, peerEvent{Name: n.nameOf(id), PeerID: id.String(), Connected: connected})
}

// peerEvent is the data of an events.KindPeer event.
type peerEvent struct {
	Name      string `json:"name"`
	PeerID    string `json:"peer_id"`
	Connected bool   `json:"connected"`
}

// sessionEnded runs what the daemon does when a session ended.
func (n *Runtime) sessionEnded() {
	if n.onEnded != nil {
		n.onEnded()
	}
}
