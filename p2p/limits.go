package p2p

import (
	"github.com/libp2p/go-libp2p/core/protocol"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	circuitproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
	relayv2 "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/relay"
)

// Resource limits. A bandit-node network is a private network of a few dozen
// known organizations (the limits are sized for 128: SAMBA with 100 data
// owners takes 103): every connection comes from an address-book peer, each
// peer holds one or two connections (both sides may dial at once) and a few
// long-lived streams per protocol (one Messenger stream per direction, one
// gossipsub stream per direction, short identify and ping streams). The limits
// below leave generous headroom over that and still stop a misbehaving peer
// from exhausting the daemon.
const (
	// limitBookPeers is the address-book size the limits are sized for.
	limitBookPeers = 128

	// limitConnsPerPeer: one connection each way, plus TCP and QUIC at once
	// while a dial race settles.
	limitConnsPerPeer = 4
	// limitStreamsPerPeerProtocol: a few streams per peer and protocol (the
	// long-lived one, its replacement while the old one is being reset, and
	// short request streams).
	limitStreamsPerPeerProtocol = 8
	// limitStreamsPerPeer: all protocols of one peer together.
	limitStreamsPerPeer = 128
	// limitStreamsPerProtocol: one protocol, all peers together.
	limitStreamsPerProtocol = limitBookPeers * limitStreamsPerPeerProtocol

	// limitSystemConns and limitSystemStreams bound the whole daemon.
	limitSystemConns   = limitBookPeers * limitConnsPerPeer
	limitSystemStreams = limitBookPeers * limitStreamsPerPeer
	// limitSystemFD: file descriptors for TCP connections and listeners.
	limitSystemFD = limitSystemConns + 64

	// limitTransientConns and limitTransientStreams bound connections and
	// streams not yet attributed to a peer or protocol (handshakes and
	// multistream negotiation); refused peers never get past this scope.
	limitTransientConns   = 64
	limitTransientStreams = 256

	// Memory, mostly yamux receive windows: a stream's window may grow to
	// limitStreamMemory so that 4 MiB frames flow without stalls.
	limitStreamMemory    = 16 << 20
	limitConnMemory      = 64 << 20
	limitPeerMemory      = 128 << 20
	limitProtocolMemory  = 512 << 20
	limitSystemMemory    = 1 << 30
	limitTransientMemory = 64 << 20
)

// limitConfig is the resource manager configuration of every Host, written
// out scope by scope.
func limitConfig() rcmgr.PartialLimitConfig {
	val := func(n int) rcmgr.LimitVal { return rcmgr.LimitVal(n) }
	mem := func(n int64) rcmgr.LimitVal64 { return rcmgr.LimitVal64(n) }
	system := rcmgr.ResourceLimits{
		Conns: val(limitSystemConns), ConnsInbound: val(limitSystemConns), ConnsOutbound: val(limitSystemConns),
		Streams: val(limitSystemStreams), StreamsInbound: val(limitSystemStreams), StreamsOutbound: val(limitSystemStreams),
		FD:     val(limitSystemFD),
		Memory: mem(limitSystemMemory),
	}
	transient := rcmgr.ResourceLimits{
		Conns: val(limitTransientConns), ConnsInbound: val(limitTransientConns), ConnsOutbound: val(limitTransientConns),
		Streams: val(limitTransientStreams), StreamsInbound: val(limitTransientStreams), StreamsOutbound: val(limitTransientStreams),
		FD:     val(limitTransientConns),
		Memory: mem(limitTransientMemory),
	}
	// Services (identify, ping, ...) and protocols share these limits.
	service := rcmgr.ResourceLimits{
		Streams: val(limitStreamsPerProtocol), StreamsInbound: val(limitStreamsPerProtocol), StreamsOutbound: val(limitStreamsPerProtocol),
		Memory: mem(limitProtocolMemory),
	}
	servicePeer := rcmgr.ResourceLimits{
		Streams: val(limitStreamsPerPeerProtocol), StreamsInbound: val(limitStreamsPerPeerProtocol), StreamsOutbound: val(limitStreamsPerPeerProtocol),
		Memory: mem(limitPeerMemory),
	}
	peer := rcmgr.ResourceLimits{
		Conns: val(limitConnsPerPeer), ConnsInbound: val(limitConnsPerPeer), ConnsOutbound: val(limitConnsPerPeer),
		Streams: val(limitStreamsPerPeer), StreamsInbound: val(limitStreamsPerPeer), StreamsOutbound: val(limitStreamsPerPeer),
		FD:     val(limitConnsPerPeer),
		Memory: mem(limitPeerMemory),
	}
	conn := rcmgr.ResourceLimits{
		Conns: val(1), ConnsInbound: val(1), ConnsOutbound: val(1),
		FD:     val(1),
		Memory: mem(limitConnMemory),
	}
	stream := rcmgr.ResourceLimits{
		Streams: val(1), StreamsInbound: val(1), StreamsOutbound: val(1),
		Memory: mem(limitStreamMemory),
	}
	return rcmgr.PartialLimitConfig{
		System:    system,
		Transient: transient,
		// No allowlist is configured; these mirror the normal scopes.
		AllowlistedSystem:    system,
		AllowlistedTransient: transient,
		ServiceDefault:       service,
		ServicePeerDefault:   servicePeer,
		ProtocolDefault:      service,
		ProtocolPeerDefault:  servicePeer,
		PeerDefault:          peer,
		Conn:                 conn,
		Stream:               stream,
	}
}

// newLimiter builds the fixed limiter from limitConfig. Per-service and
// per-protocol entries that libp2p itself defines (for its own services) keep
// their defaults; every scope above is taken from limitConfig.
func newLimiter() rcmgr.Limiter {
	scaling := rcmgr.DefaultLimits
	addRelayLimits(&scaling)
	return rcmgr.NewFixedLimiter(limitConfig().Build(scaling.AutoScale()))
}

// addRelayLimits sets the circuit relay's scopes in cfg. A relayed
// connection holds a hop stream from its source and a stop stream to its
// destination at the relay, and the stop stream at the destination, for
// its whole life: a node behind a NAT that every other address-book peer
// reaches through one relay needs one of each per peer, which the
// per-peer default of a service (limitStreamsPerPeerProtocol) would cap
// at 8.
func addRelayLimits(cfg *rcmgr.ScalingLimitConfig) {
	perPeer := rcmgr.BaseLimit{Streams: limitBookPeers, StreamsInbound: limitBookPeers, StreamsOutbound: limitBookPeers, Memory: limitPeerMemory}
	all := rcmgr.BaseLimit{Streams: 2 * limitBookPeers, StreamsInbound: 2 * limitBookPeers, StreamsOutbound: 2 * limitBookPeers, Memory: limitProtocolMemory}
	cfg.AddServiceLimit(relayv2.ServiceName, all, rcmgr.BaseLimitIncrease{})
	cfg.AddServicePeerLimit(relayv2.ServiceName, perPeer, rcmgr.BaseLimitIncrease{})
	for _, p := range []protocol.ID{circuitproto.ProtoIDv2Hop, circuitproto.ProtoIDv2Stop} {
		cfg.AddProtocolLimit(p, all, rcmgr.BaseLimitIncrease{})
		cfg.AddProtocolPeerLimit(p, perPeer, rcmgr.BaseLimitIncrease{})
	}
}
