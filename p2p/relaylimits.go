package p2p

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	circuitproto "github.com/libp2p/go-libp2p/p2p/protocol/circuitv2/proto"
)

// Per-peer limits of the relay service: the bytes one relayed connection
// may carry, how many relayed connections a peer may have open through the
// relay at once, and how many peers may hold a reservation.

// Defaults and bounds of RelayLimits.
const (
	// DefaultRelayCircuitBytes is the default byte limit of one relayed
	// connection, both directions together: far more than a session's
	// messages (a SAMBA session of 100,000 steps sends some 100 MB), far
	// less than a peer moving bulk data through another organization's
	// network. A session whose relayed connection is reset loses nothing:
	// its links resend over the next connection.
	DefaultRelayCircuitBytes = 1 << 30
	// MinRelayCircuitBytes is the smallest byte limit allowed: below it
	// a relayed connection would not last through a session's setup.
	MinRelayCircuitBytes = 1 << 20
	// DefaultRelayCircuitsPerPeer and MaxRelayCircuitsPerPeer: a node
	// behind a NAT needs one relayed connection from each peer that
	// reaches it, so the default is the address-book size the limits are
	// sized for, which the resource manager's relay scopes allow.
	DefaultRelayCircuitsPerPeer = limitBookPeers
	MaxRelayCircuitsPerPeer     = limitBookPeers
	// DefaultRelayReservations and MaxRelayReservations: every peer
	// holds one reservation at most.
	DefaultRelayReservations = limitBookPeers
	MaxRelayReservations     = limitBookPeers
)

// RelayLimits bound what the relay service gives each address-book peer.
type RelayLimits struct {
	// CircuitBytes is how many bytes one relayed connection may carry,
	// both directions together; past it the relay resets the connection.
	// Zero means DefaultRelayCircuitBytes; at least MinRelayCircuitBytes.
	CircuitBytes int64
	// CircuitsPerPeer is how many relayed connections may be open through
	// the relay at once from one peer, and to one peer. Zero means
	// DefaultRelayCircuitsPerPeer; 1 to MaxRelayCircuitsPerPeer.
	CircuitsPerPeer int
	// Reservations is how many peers may hold a reservation at once (a
	// peer holds one at most). Zero means DefaultRelayReservations; 1 to
	// MaxRelayReservations.
	Reservations int
}

// withDefaults returns l with its zero fields set to their defaults, or an
// error if a field is out of range.
func (l RelayLimits) withDefaults() (RelayLimits, error) {
	if l.CircuitBytes == 0 {
		l.CircuitBytes = DefaultRelayCircuitBytes
	}
	if l.CircuitsPerPeer == 0 {
		l.CircuitsPerPeer = DefaultRelayCircuitsPerPeer
	}
	if l.Reservations == 0 {
		l.Reservations = DefaultRelayReservations
	}
	switch {
	case l.CircuitBytes < MinRelayCircuitBytes:
		return l, fmt.Errorf("relay limit: %d bytes a relayed connection is below the minimum %d", l.CircuitBytes, MinRelayCircuitBytes)
	case l.CircuitsPerPeer < 1 || l.CircuitsPerPeer > MaxRelayCircuitsPerPeer:
		return l, fmt.Errorf("relay limit: %d relayed connections a peer is out of range [1, %d]", l.CircuitsPerPeer, MaxRelayCircuitsPerPeer)
	case l.Reservations < 1 || l.Reservations > MaxRelayReservations:
		return l, fmt.Errorf("relay limit: %d reservations is out of range [1, %d]", l.Reservations, MaxRelayReservations)
	}
	return l, nil
}

// relayHost is the host the relay service is given: the streams of its hop
// protocol, each of which carries one relayed connection (or a
// reservation request) from its source peer, are metered.
type relayHost struct {
	host.Host
	limit int64
	// over is called when a relayed connection from src is reset for
	// going past limit, having carried used bytes.
	over func(src peer.ID, used int64)
}

// SetStreamHandler registers handler, metering the hop protocol's streams.
func (h relayHost) SetStreamHandler(pid protocol.ID, handler network.StreamHandler) {
	if pid == circuitproto.ProtoIDv2Hop {
		inner := handler
		handler = func(s network.Stream) {
			inner(&meteredStream{Stream: s, limit: h.limit, over: h.over})
		}
	}
	h.Host.SetStreamHandler(pid, handler)
}

// errRelayLimit ends a relayed connection that reached its byte limit.
var errRelayLimit = errors.New("the relayed connection reached the relay's byte limit")

// meteredStream is a relay hop stream that counts the bytes it reads (from
// the source to the destination) and writes (back to the source), and
// resets itself when they would pass limit: the relay then resets the
// other half of the circuit too.
type meteredStream struct {
	network.Stream
	limit int64
	used  atomic.Int64
	once  sync.Once
	over  func(src peer.ID, used int64)
}

func (s *meteredStream) Read(p []byte) (int, error) {
	n, err := s.Stream.Read(p)
	if n > 0 && s.used.Add(int64(n)) > s.limit {
		s.exceeded()
		return 0, errRelayLimit
	}
	return n, err
}

func (s *meteredStream) Write(p []byte) (int, error) {
	if s.used.Add(int64(len(p))) > s.limit {
		s.exceeded()
		return 0, errRelayLimit
	}
	return s.Stream.Write(p)
}

// exceeded resets the stream, once, and reports it.
func (s *meteredStream) exceeded() {
	s.once.Do(func() {
		s.Stream.Reset()
		if s.over != nil {
			s.over(s.Conn().RemotePeer(), s.used.Load())
		}
	})
}
