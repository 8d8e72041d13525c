package p2p

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/libp2p/go-libp2p"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/event"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	"github.com/libp2p/go-libp2p/p2p/security/noise"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	quic "github.com/libp2p/go-libp2p/p2p/transport/quic"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	"github.com/multiformats/go-multiaddr"
)

// Defaults for the zero values of Config.
const (
	// DefaultDialBackoffMin is the first wait after a failed address-book dial.
	DefaultDialBackoffMin = time.Second
	// DefaultDialBackoffMax caps the wait between address-book dials.
	DefaultDialBackoffMax = time.Minute
	// DefaultPingInterval is how often connected address-book peers are pinged
	// to measure latency (each wait drawn from [7/8, 9/8] of it, so the pings
	// of peers that connected together spread out). Every ping opens a
	// stream at both ends; at 30 s, a daemon of a 103-organization network
	// handled 7 a second while idle. Dead connections are found sooner by
	// yamux's own keep-alive (30 s), not by these pings.
	DefaultPingInterval = 5 * time.Minute
)

// Connection manager watermarks. Address-book peers are protected and never
// trimmed; the watermarks only matter if stray connections pile up.
const (
	connMgrLow   = limitBookPeers
	connMgrHigh  = 2 * limitBookPeers
	connMgrGrace = time.Minute
	// protectTag marks address-book peers in the connection manager.
	protectTag = "bandit-address-book"
	// DefaultUserAgent is announced by identify when Config.UserAgent is empty.
	DefaultUserAgent = "bandit-node"
)

// Peer is an address-book entry: an organization's daemon that may connect to
// this one.
type Peer struct {
	// Name is the operator-facing name of the peer, unique in the book.
	Name string
	// ID is the peer's libp2p identity.
	ID peer.ID
	// Addrs are the addresses to dial the peer at. They may be empty for a
	// peer that only dials in, or that is found by mDNS. A trailing /p2p/ID
	// component must name ID and is stripped.
	Addrs []multiaddr.Multiaddr
	// Relay, if set, is the address-book peer through whose circuit-relay
	// service this peer is reachable (it is behind a NAT): the book adds
	// the address /p2p/RELAY/p2p-circuit, and relayed connections to the
	// peer are upgraded to direct ones by hole punching when possible.
	Relay peer.ID
}

// Config configures a Host.
type Config struct {
	// Key is the host's identity. Required.
	Key crypto.PrivKey
	// ListenAddrs are TCP (/ip4/A/tcp/N) and/or QUIC (/ip4/A/udp/N/quic-v1)
	// addresses to listen on; port 0 picks a free port. At least one is required.
	ListenAddrs []multiaddr.Multiaddr
	// DeferListen, when set, makes NewHost return a host that accepts no
	// connection until Listen is called, so that its owner can register
	// gossipsub and its stream handlers first: a peer that connects earlier
	// and finds no gossipsub handler gives up on this host for the life of
	// the connection.
	DeferListen bool
	// Peers is the address book: only these peers may connect, and the host
	// keeps a connection to each of them once started.
	Peers []Peer
	// MDNS enables mDNS discovery on the local network. Discovered addresses
	// are used only for address-book peers.
	MDNS bool
	// Logger receives the host's log output. Nil discards it.
	Logger *slog.Logger
	// DialBackoffMin and DialBackoffMax bound the exponential backoff between
	// failed dials of an address-book peer; zero means DefaultDialBackoffMin and
	// DefaultDialBackoffMax.
	DialBackoffMin, DialBackoffMax time.Duration
	// PingInterval is how often connected address-book peers are pinged to
	// measure latency; zero means DefaultPingInterval.
	PingInterval time.Duration
	// UserAgent is the agent string identify announces to peers, such as
	// "bandit-node/0.2.0 (3f69a06)"; empty means DefaultUserAgent. Peers
	// read it as PeerStatus.Agent.
	UserAgent string
	// RelayService runs a circuit-relay v2 service that serves the
	// address-book peers only: reservations from them and relayed
	// connections between two of them, with no duration limit and within
	// RelayLimits.
	RelayService bool
	// RelayLimits bound what the relay service gives each peer; a zero
	// field takes its default.
	RelayLimits RelayLimits
	// RelayVia, if set, is the address-book peer whose relay service this
	// host keeps a reservation at, so that peers can reach it through that
	// relay although it accepts no inbound connection (it is behind a NAT).
	RelayVia peer.ID
}

// PeerStatus describes one address-book peer.
type PeerStatus struct {
	// Name is the address-book name.
	Name string
	// ID is the peer's identity.
	ID peer.ID
	// Addrs are the addresses known for the peer: the address book's, plus
	// those learned from identify or mDNS.
	Addrs []multiaddr.Multiaddr
	// Connected reports whether there is at least one open connection.
	Connected bool
	// Latency is the peerstore's moving average of ping round trips; 0 if unknown.
	Latency time.Duration
	// LastError is the last failed attempt's error, empty while connected.
	LastError string
	// Reason says in words why the peer is not connected, such as
	// "closes our connections at once: it may not have our peer card
	// yet", "refuses connections (…)" or "unreachable (…)"; empty while
	// connected or before the first attempt failed.
	Reason string
	// Agent is the agent string the peer announced through identify (its
	// Config.UserAgent), empty until identify has run on a connection.
	Agent string
	// Conn is ConnDirect or ConnRelayed while the peer is connected (direct
	// if any connection is), empty otherwise.
	Conn string
}

// Host is bandit-node's libp2p host, restricted to an address book.
type Host struct {
	h      host.Host
	gater  *Gater
	logger *slog.Logger
	// book is the address book, replaced whole by SetBook; a reader
	// loads it once and uses that one view.
	book     atomic.Pointer[addressBook]
	bookMu   sync.Mutex // serializes SetBook
	mdns     bool
	boMin    time.Duration
	boMax    time.Duration
	pingEach time.Duration
	dupGrace time.Duration // how long a duplicate connection lives: dupGrace, shorter in tests
	// warnAfter is how long an address-book peer stays unreachable before
	// the dialer warns (unreachablePeerWarning; shorter in tests).
	warnAfter time.Duration
	// stableAfter is how long a connection must live to count
	// (connStableAfter; shorter in tests).
	stableAfter time.Duration

	// notifyMu serializes connect/disconnect bookkeeping and callbacks so
	// that callbacks for one peer are delivered in order.
	notifyMu     sync.Mutex
	onConnect    func(peer.ID) // guarded by notifyMu
	onDisconnect func(peer.ID) // guarded by notifyMu

	mu      sync.Mutex // guards started, closed, cancel, mdnsSvc, runCtx, dialers
	started bool
	closed  bool
	cancel  context.CancelFunc
	runCtx  context.Context                // the context Start runs the dialers in
	dialers map[peer.ID]context.CancelFunc // stops one address-book peer's dialer
	mdnsSvc interface{ Close() error }
	wg      sync.WaitGroup // background goroutines started by Start

	// dialMu is held for reading by every dial this package starts and for
	// writing by Close: libp2p's swarm panics when a dial reaches it while
	// it is closing (go-libp2p issue 1545), so Close waits for the dials in
	// flight and no dial starts after it.
	listen []multiaddr.Multiaddr // the configured listen addresses

	dialMu     sync.RWMutex
	dialClosed bool // guarded by dialMu
	dialCtx    context.Context
	dialStop   context.CancelFunc

	idSub  event.Subscription // identify's completions: watchIdentify
	idDone chan struct{}      // closed when watchIdentify returns

	relaySvc interface{ Close() error } // the relay service, if RelayService
	relayVia peer.ID                    // Config.RelayVia
	relayUp  chan struct{}              // buffered(1): the host connected to relayVia
}

// errHostClosed is returned by dials attempted after Close.
var errHostClosed = errors.New("the p2p host is closed")

// connect dials id within ctx unless the host is closing; Close cancels the
// dials in flight and waits for them.
func (h *Host) connect(ctx context.Context, id peer.ID) error {
	h.dialMu.RLock()
	defer h.dialMu.RUnlock()
	if h.dialClosed {
		return errHostClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(h.dialCtx, cancel)
	defer stop()
	return h.h.Connect(ctx, peer.AddrInfo{ID: id})
}

// peerState is the mutable state of one address-book peer.
type peerState struct {
	wake    chan struct{} // buffered(1): nudges the peer's dialer (new addresses)
	dropped chan struct{} // buffered(1): the peer's last connection closed

	mu        sync.Mutex // guards the fields below
	connected bool       // as last reported to the callbacks
	// connSince is when the peer got its first connection, while
	// connected; ends counts the times it lost its last one, and
	// lastLived is how long it had been connected the last time.
	connSince time.Time
	ends      uint64
	lastLived time.Duration
	// identified is set when identify completes with the peer, and
	// cleared when it loses its last connection; lastAtOnce records
	// whether that connection closed within stableAfter without
	// identify completing: the peer's gater refused us.
	identified bool
	lastAtOnce bool
	// lastErr is the last failed attempt's error and reason the same in
	// words for the operator; closing is set while the dialer classes the
	// peer as closing our connections at once (failClosesAtOnce).
	lastErr string
	reason  string
	closing bool

	// tcpFailures counts the address-book dialer's failed attempts in a
	// row to reach the peer (over TCP unless the peer has no TCP address),
	// and tcpFailingSince is when the first of them ended; see
	// dialAddrAllowed.
	tcpFailures     int
	tcpFailingSince time.Time

	dupCheck *time.Timer // pending look at duplicate connections
}

func newPeerState() *peerState {
	return &peerState{wake: make(chan struct{}, 1), dropped: make(chan struct{}, 1)}
}

func (st *peerState) nudge() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// dialFailed records a failed attempt of the address-book dialer at now,
// which failed with err, of class kind. A peer whose connection closed
// soon was reached, over TCP or whatever transport: that is not a failure
// of TCP.
func (st *peerState) dialFailed(now time.Time, kind failKind, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.lastErr, st.reason, st.closing = err.Error(), reasonOf(err), kind == failClosesAtOnce
	if kind == failClosesAtOnce || kind == failDropped {
		st.tcpFailures, st.tcpFailingSince = 0, time.Time{}
		return
	}
	st.tcpFailures++
	if st.tcpFailures == 1 {
		st.tcpFailingSince = now
	}
}

// dialSucceeded clears the record of failed attempts.
func (st *peerState) dialSucceeded() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.tcpFailures, st.tcpFailingSince = 0, time.Time{}
}

// connStable records that the peer's connection has lived long enough to
// count: whatever failed before is forgotten.
func (st *peerState) connStable() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.tcpFailures, st.tcpFailingSince = 0, time.Time{}
	st.lastErr, st.reason, st.closing = "", "", false
}

// connAge returns how long the peer has been connected at now, 0 if the
// connection is not recorded yet (its notification has not run).
func (st *peerState) connAge(now time.Time) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.connected {
		return 0
	}
	return now.Sub(st.connSince)
}

// lastEnd returns how many times the peer lost its last connection, how
// long that connection had lived the last time, and whether it closed
// before identify completed on it.
func (st *peerState) lastEnd() (ends uint64, lived time.Duration, atOnce bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.ends, st.lastLived, st.lastAtOnce
}

// identifiedNow records that identify completed with the peer.
func (st *peerState) identifiedNow() {
	st.mu.Lock()
	st.identified = true
	st.mu.Unlock()
}

// reasonNow returns the reason recorded by the last failed attempt.
func (st *peerState) reasonNow() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.reason
}

// isClosing reports whether the dialer classes the peer as closing our
// connections at once.
func (st *peerState) isClosing() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.closing
}

// tcpBlocked reports whether TCP has failed long and often enough at now
// that the peer's other addresses are worth a try: quicAfterFailures
// attempts in a row over at least quicAfterFailing (on the monotonic
// clock: a step of the wall clock changes nothing).
func (st *peerState) tcpBlocked(now time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.tcpFailures >= quicAfterFailures && now.Sub(st.tcpFailingSince) >= quicAfterFailing
}

// NewHost validates cfg and creates a listening host. The address-book dialer
// and mDNS do not run until Start.
func NewHost(cfg Config) (*Host, error) {
	if cfg.Key == nil {
		return nil, errors.New("p2p host config: no identity key")
	}
	self, err := peer.IDFromPrivateKey(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("p2p host config: deriving the peer ID of the identity key: %w", err)
	}
	if len(cfg.ListenAddrs) == 0 {
		return nil, errors.New("p2p host config: no listen addresses")
	}
	boMin, boMax := cfg.DialBackoffMin, cfg.DialBackoffMax
	if boMin == 0 {
		boMin = DefaultDialBackoffMin
	}
	if boMax == 0 {
		boMax = max(DefaultDialBackoffMax, boMin)
	}
	if boMin < 0 || boMax < 0 || boMin > boMax {
		return nil, fmt.Errorf("p2p host config: dial backoff must satisfy 0 < min <= max, got min %v, max %v", boMin, boMax)
	}
	pingEach := cfg.PingInterval
	if pingEach == 0 {
		pingEach = DefaultPingInterval
	}
	if pingEach < 0 {
		return nil, fmt.Errorf("p2p host config: negative ping interval %v", pingEach)
	}
	book, err := validateBook(self, cfg.Peers)
	if err != nil {
		return nil, err
	}
	relayLimits, err := cfg.RelayLimits.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("p2p host config: %w", err)
	}
	if cfg.RelayVia != "" {
		if cfg.RelayVia == self {
			return nil, errors.New("p2p host config: this node cannot reserve at its own relay")
		}
		if !slices.ContainsFunc(book, func(p Peer) bool { return p.ID == cfg.RelayVia }) {
			return nil, fmt.Errorf("p2p host config: the relay %s this node reserves at is not in the address book", cfg.RelayVia)
		}
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	userAgent := cfg.UserAgent
	if userAgent == "" {
		userAgent = DefaultUserAgent
	}

	allowed := make([]peer.ID, len(book))
	for i, p := range book {
		allowed[i] = p.ID
	}
	gater := NewGater(allowed, logger)
	var h *Host // the gater's dial policy needs the host built below
	gater.dialAddr = func(id peer.ID, a multiaddr.Multiaddr) bool { return h.dialAddrAllowed(id, a) }
	rm, err := rcmgr.NewResourceManager(newLimiter(), rcmgr.WithMetricsDisabled())
	if err != nil {
		return nil, fmt.Errorf("creating the libp2p resource manager: %w", err)
	}
	cm, err := connmgr.NewConnManager(connMgrLow, connMgrHigh, connmgr.WithGracePeriod(connMgrGrace))
	if err != nil {
		rm.Close()
		return nil, fmt.Errorf("creating the libp2p connection manager: %w", err)
	}
	listenOpt := libp2p.ListenAddrs(cfg.ListenAddrs...)
	if cfg.DeferListen {
		listenOpt = libp2p.NoListenAddrs
	}
	opts := []libp2p.Option{
		libp2p.Identity(cfg.Key),
		listenOpt,
		// Without reuseport, two hosts dialing each other at the same moment
		// get two TCP connections instead of one simultaneous-open
		// connection on which both sides act as handshake initiator and
		// fail. Reuseport only helps TCP hole punching; hole punching (on
		// when a relay is configured: relayOptions) succeeds over QUIC.
		libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
		libp2p.Transport(quic.NewTransport),
		libp2p.Security(noise.ID, noise.New),
		libp2p.Security(libp2ptls.ID, libp2ptls.New),
		libp2p.Muxer(yamux.ID, NewYamuxTransport()),
		libp2p.SwarmOpts(swarm.WithDialRanker(tcpFirstRanker)),
		libp2p.ResourceManager(rm),
		libp2p.ConnectionManager(cm),
		libp2p.ConnectionGater(gater),
		libp2p.Ping(true),
		libp2p.DisableMetrics(),
		libp2p.UserAgent(userAgent),
	}
	opts = append(opts, relayOptions(cfg, book)...)
	lh, err := libp2p.New(opts...)
	if err != nil {
		cm.Close()
		rm.Close()
		return nil, fmt.Errorf("starting the libp2p host on %v: %w", cfg.ListenAddrs, err)
	}

	h = &Host{
		h:           lh,
		gater:       gater,
		logger:      logger,
		mdns:        cfg.MDNS,
		boMin:       boMin,
		boMax:       boMax,
		pingEach:    pingEach,
		dupGrace:    dupGrace,
		warnAfter:   unreachablePeerWarning,
		stableAfter: connStableAfter,
		relayVia:    cfg.RelayVia,
		relayUp:     make(chan struct{}, 1),
	}
	if cfg.RelayService {
		if err := h.startRelayService(relayLimits); err != nil {
			lh.Close()
			return nil, err
		}
	}
	h.dialCtx, h.dialStop = context.WithCancel(context.Background())
	h.book.Store(newAddressBook(book, nil))
	if h.idSub, err = lh.EventBus().Subscribe(new(event.EvtPeerIdentificationCompleted)); err != nil {
		lh.Close()
		return nil, fmt.Errorf("subscribing to identify's events: %w", err)
	}
	h.idDone = make(chan struct{})
	go func() {
		defer close(h.idDone)
		h.watchIdentify()
	}()
	for _, p := range book {
		lh.Peerstore().AddAddrs(p.ID, p.Addrs, peerstore.PermanentAddrTTL)
		lh.ConnManager().Protect(p.ID, protectTag)
	}
	lh.Network().Notify(&network.NotifyBundle{
		ConnectedF: func(_ network.Network, c network.Conn) {
			// A connection that passed the gater just before SetBook
			// removed its peer, and that SetBook's ClosePeer missed.
			if !gater.Allowed(c.RemotePeer()) {
				c.Close()
				return
			}
			h.connChanged(c.RemotePeer())
			h.watchDuplicates(c.RemotePeer())
			h.relayConnected(c.RemotePeer())
		},
		DisconnectedF: func(_ network.Network, c network.Conn) { h.connChanged(c.RemotePeer()) },
	})
	// A peer that connected before Notify was registered.
	for _, p := range book {
		h.connChanged(p.ID)
	}
	h.listen = cfg.ListenAddrs
	if cfg.DeferListen {
		return h, nil
	}
	logger.Info("p2p host listening", "peer", self.String(), "addrs", fmt.Sprint(h.Addrs()), "address_book", len(book))
	return h, nil
}

// Listen starts accepting connections on the configured addresses of a
// host built with DeferListen. It succeeds if at least one address listens.
func (h *Host) Listen() error {
	if err := h.h.Network().Listen(h.listen...); err != nil {
		return fmt.Errorf("starting the libp2p host on %v: %w", h.listen, err)
	}
	h.logger.Info("p2p host listening", "peer", h.h.ID().String(), "addrs", fmt.Sprint(h.Addrs()), "address_book", len(h.book.Load().peers))
	return nil
}

// validateBook checks the address book and returns a copy with /p2p/
// components stripped from the addresses.
func validateBook(self peer.ID, peers []Peer) ([]Peer, error) {
	book := make([]Peer, 0, len(peers))
	names := make(map[string]int, len(peers))
	ids := make(map[peer.ID]int, len(peers))
	inBook := make(map[peer.ID]bool, len(peers))
	for _, p := range peers {
		inBook[p.ID] = true
	}
	for i, p := range peers {
		if p.Name == "" {
			return nil, fmt.Errorf("address book entry %d (%s): empty name", i+1, p.ID)
		}
		if err := p.ID.Validate(); err != nil {
			return nil, fmt.Errorf("address book peer %s: invalid peer ID: %w", p.Name, err)
		}
		if p.ID == self {
			return nil, fmt.Errorf("address book peer %s has this node's own peer ID %s; remove it from the address book", p.Name, p.ID)
		}
		if j, dup := names[p.Name]; dup {
			return nil, fmt.Errorf("address book entries %d and %d are both named %q", j+1, i+1, p.Name)
		}
		if j, dup := ids[p.ID]; dup {
			return nil, fmt.Errorf("address book peers %s and %s have the same peer ID %s", peers[j].Name, p.Name, p.ID)
		}
		names[p.Name] = i
		ids[p.ID] = i
		addrs := make([]multiaddr.Multiaddr, 0, len(p.Addrs))
		for _, a := range p.Addrs {
			if len(a) == 0 {
				return nil, fmt.Errorf("address book peer %s: empty address", p.Name)
			}
			transport, id := peer.SplitAddr(a)
			if id != "" && id != p.ID {
				return nil, fmt.Errorf("address book peer %s: address %s names peer %s, not %s", p.Name, a, id, p.ID)
			}
			if len(transport) == 0 {
				return nil, fmt.Errorf("address book peer %s: address %s has no transport part", p.Name, a)
			}
			addrs = append(addrs, transport)
		}
		if p.Relay != "" {
			switch {
			case p.Relay == p.ID:
				return nil, fmt.Errorf("address book peer %s names itself as its relay", p.Name)
			case p.Relay == self:
				// This node is the relay: it reaches the peer over the
				// peer's own connection to it, not through a circuit.
			case !inBook[p.Relay]:
				return nil, fmt.Errorf("address book peer %s: its relay %s is not in the address book", p.Name, p.Relay)
			default:
				addrs = append(addrs, circuitAddr(p.Relay))
			}
		}
		book = append(book, Peer{Name: p.Name, ID: p.ID, Addrs: addrs, Relay: p.Relay})
	}
	return book, nil
}

// connChanged tracks whether an address-book peer is connected and fires the
// callbacks when it gets its first connection and loses its last one. It reads
// the swarm's state rather than counting notifications, so a notification
// missed or duplicated around NewHost cannot skew it.
func (h *Host) connChanged(id peer.ID) {
	st, ok := h.book.Load().states[id]
	if !ok {
		return
	}
	h.notifyMu.Lock()
	defer h.notifyMu.Unlock()
	now := h.Connected(id)
	at := time.Now()
	st.mu.Lock()
	was := st.connected
	st.connected = now
	var lived time.Duration
	switch {
	case !was && now:
		st.connSince = at
	case was && !now:
		lived = at.Sub(st.connSince)
		st.ends++
		st.lastLived = lived
		st.lastAtOnce = lived < h.stableAfter && !st.identified
		st.identified = false
	}
	// A peer that closes our connections at once would log two lines an
	// attempt: its dialer logs the state instead, once.
	level := slog.LevelInfo
	if st.closing {
		level = slog.LevelDebug
	}
	st.mu.Unlock()
	switch {
	case !was && now:
		h.logger.Log(context.Background(), level, "address-book peer connected", "peer", h.describe(id), "conn", h.ConnKind(id))
		if h.onConnect != nil {
			h.onConnect(id)
		}
	case was && !now:
		h.logger.Log(context.Background(), level, "address-book peer disconnected", "peer", h.describe(id), "connected_for", lived.Round(time.Millisecond))
		select {
		case st.dropped <- struct{}{}:
		default:
		}
		if h.onDisconnect != nil {
			h.onDisconnect(id)
		}
	}
}

// watchIdentify records, until the subscription closes, which address-book
// peers completed identify: a connection that closes before identify
// completed was refused by the peer's gater.
func (h *Host) watchIdentify() {
	for e := range h.idSub.Out() {
		ev, ok := e.(event.EvtPeerIdentificationCompleted)
		if !ok {
			continue
		}
		if st := h.book.Load().states[ev.Peer]; st != nil {
			st.identifiedNow()
		}
	}
}

// Redial dials address-book peer id at once, within ctx, whatever the
// address-book dialer's backoff, and returns why no connection could be
// made (explained as the dialer explains it: the real cause, without the
// transports the dial policy held back), or nil once there is one. A node
// calls it when it lost its last connection to a peer, to tell a peer that
// is gone from one that is reconnecting. A peer that closes our
// connections at once is not dialed: the error says so.
func (h *Host) Redial(ctx context.Context, id peer.ID) error {
	if !h.Known(id) {
		return fmt.Errorf("%s is not in the address book", id)
	}
	if h.Connected(id) {
		return nil
	}
	return h.redialNow(ctx, id)
}

// ID returns the host's peer ID.
func (h *Host) ID() peer.ID { return h.h.ID() }

// Addrs returns the addresses the host listens on, with port 0 resolved.
func (h *Host) Addrs() []multiaddr.Multiaddr {
	return h.h.Network().ListenAddresses()
}

// LibP2P returns the underlying libp2p host, for tests and benchmarks.
func (h *Host) LibP2P() host.Host { return h.h }

// Gater returns the host's connection gater.
func (h *Host) Gater() *Gater { return h.gater }

// Known reports whether id is in the address book.
func (h *Host) Known(id peer.ID) bool {
	_, ok := h.book.Load().byID[id]
	return ok
}

// bookID returns the address book's own copy of id (the string the Peer
// passed to NewHost holds), and whether id is in the book. A caller that
// hands that copy on lets its users compare it with theirs by pointer.
func (h *Host) bookID(id peer.ID) (peer.ID, bool) {
	b := h.book.Load()
	i, ok := b.byID[id]
	if !ok {
		return id, false
	}
	return b.peers[i].ID, true
}

// Book returns a copy of the address book, in configuration order.
func (h *Host) Book() []Peer {
	b := h.book.Load()
	out := make([]Peer, len(b.peers))
	for i, p := range b.peers {
		out[i] = Peer{Name: p.Name, ID: p.ID, Addrs: slices.Clone(p.Addrs)}
	}
	return out
}

// Peers returns the status of every address-book peer, in address-book order.
func (h *Host) Peers() []PeerStatus {
	ps := h.h.Peerstore()
	b := h.book.Load()
	out := make([]PeerStatus, len(b.peers))
	for i, p := range b.peers {
		st := b.states[p.ID]
		st.mu.Lock()
		lastErr, reason := st.lastErr, st.reason
		st.mu.Unlock()
		connected := h.Connected(p.ID)
		if connected {
			// The swarm may report a new connection before the notification
			// that clears the last dial error has run.
			lastErr, reason = "", ""
		}
		out[i] = PeerStatus{
			Name:      p.Name,
			ID:        p.ID,
			Addrs:     ps.Addrs(p.ID),
			Connected: connected,
			Latency:   ps.LatencyEWMA(p.ID),
			LastError: lastErr,
			Reason:    reason,
			Agent:     agentOf(ps, p.ID),
			Conn:      h.ConnKind(p.ID),
		}
	}
	return out
}

// agentOf returns the agent string id announced through identify, or "".
func agentOf(ps peerstore.Peerstore, id peer.ID) string {
	v, err := ps.Get(id, "AgentVersion")
	if err != nil {
		return ""
	}
	s, _ := v.(string)
	return s
}

// Connected reports whether the host has an open connection to id.
func (h *Host) Connected(id peer.ID) bool {
	return h.h.Network().Connectedness(id) == network.Connected
}

// Notify sets callbacks run when an address-book peer gets its first
// connection and loses its last one. They are called from libp2p goroutines,
// one at a time and in order, and must not block for long. Either may be nil.
func (h *Host) Notify(onConnect, onDisconnect func(peer.ID)) {
	h.notifyMu.Lock()
	h.onConnect, h.onDisconnect = onConnect, onDisconnect
	h.notifyMu.Unlock()
}

// PeerName returns the address-book name of id, or a short form of the ID for
// a peer that is not in the book.
func (h *Host) PeerName(id peer.ID) string {
	if b := h.book.Load(); b != nil {
		if i, ok := b.byID[id]; ok {
			return b.peers[i].Name
		}
	}
	return shortID(id)
}

// describe names a peer for log lines and errors: "node3 (12D3Ko…x7YtQa)".
func (h *Host) describe(id peer.ID) string {
	if b := h.book.Load(); b != nil {
		if i, ok := b.byID[id]; ok {
			return fmt.Sprintf("%s (%s)", b.peers[i].Name, shortID(id))
		}
	}
	return fmt.Sprintf("unknown peer %s", id)
}

// shortID abbreviates a peer ID to its first and last six characters.
func shortID(id peer.ID) string {
	s := id.String()
	if len(s) <= 16 {
		return s
	}
	return s[:6] + "…" + s[len(s)-6:]
}

// Close stops the dialer and mDNS and closes the libp2p host. It is safe to
// call more than once.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	if h.cancel != nil {
		h.cancel()
	}
	svc := h.mdnsSvc
	h.mu.Unlock()
	h.dialStop()
	h.dialMu.Lock()
	h.dialClosed = true
	h.dialMu.Unlock()
	var errs []error
	if svc != nil {
		if err := svc.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping mDNS: %w", err))
		}
	}
	h.wg.Wait()
	h.idSub.Close()
	<-h.idDone
	if h.relaySvc != nil {
		if err := h.relaySvc.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stopping the relay service: %w", err))
		}
	}
	if err := h.h.Close(); err != nil {
		errs = append(errs, fmt.Errorf("closing the libp2p host: %w", err))
	}
	return errors.Join(errs...)
}
