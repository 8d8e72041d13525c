package node

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/libp2p/go-libp2p/core/peer"
)

// What a peer sends a session waits in the session's queues (inbox, ctrl)
// until the session's goroutine takes it: while the session is proposed
// and not started, while its roles start, while its goroutine is busy, and
// always for a family whose messages are not stepped in place. A peer of
// the session could fill those queues with well-formed frames faster than
// they drain — frames for a session that has not started, or for rounds far
// ahead. So every frame queued is counted, in bytes, against two caps:
//
//   - session.max_buffered_bytes, the bytes queued in one session, from
//     all its peers;
//   - session.max_peer_buffered_bytes, the bytes queued from one peer, in
//     all its sessions on this node.
//
// A frame that would take either over is dropped, and the session it was for
// aborts (everywhere) with a reason that names the peer and the cap. The
// frames stepped in place (protocol.Info.SmallMessages) are never queued and
// never counted. The daemon's memory for queued frames is thus at most
// min(peers × max_peer_buffered_bytes, max_active × max_buffered_bytes),
// besides the frame each inbound stream is reading (p2p bounds those: one
// frame of at most max_frame_size per stream, and streams per peer).

// peerBuffer counts the bytes queued on this node from one peer, over all
// its sessions; peak is the most it has held.
type peerBuffer struct {
	bytes atomic.Int64
	peak  atomic.Int64
}

// reserve adds n bytes unless that takes the count over limit, and keeps
// peak.
func (b *peerBuffer) reserve(n, limit int64) bool {
	v := b.bytes.Add(n)
	if v > limit {
		b.bytes.Add(-n)
		return false
	}
	for {
		p := b.peak.Load()
		if v <= p || b.peak.CompareAndSwap(p, v) {
			return true
		}
	}
}

// sessionBuffer counts the bytes queued in one session, in total and by
// the peer that sent them. A session's goroutine closes it when the session
// ends, which gives back to each peer what it had queued there; nothing is
// counted after that.
type sessionBuffer struct {
	mu     sync.Mutex
	closed bool
	bytes  int64
	peak   int64
	from   map[peer.ID]int64
	// overflowed is set once the session was told to abort for an
	// overflow: later frames are dropped without another request.
	overflowed bool
}

// reserve counts size bytes from peer from, queued in s, against the
// caps. When the frame is not to be queued, ok is false, and over says
// that a cap refused it; reason, the first time, is what the session aborts
// for. A session that has ended queues nothing (ok and over false).
func (s *session) reserve(from peer.ID, size int) (ok, over bool, reason string) {
	cfg := s.cfg
	b := &s.buf
	sz := int64(size) + config.QueuedOverhead
	b.mu.Lock()
	defer b.mu.Unlock()
	pb := s.live.peerBuf[from]
	if b.closed || pb == nil {
		// pb is nil for a peer outside the address book, which the
		// messenger refuses already.
		return false, false, ""
	}
	if limit := int64(cfg.Session.MaxBufferedBytes); b.bytes+sz > limit {
		return false, true, b.overflow(fmt.Sprintf("%s sent more than session.max_buffered_bytes = %d bytes that %s had not yet processed in this session",
			s.nameOf(from), limit, cfg.Node.Name))
	}
	if limit := int64(cfg.Session.MaxPeerBufferedBytes); !pb.reserve(sz, limit) {
		return false, true, b.overflow(fmt.Sprintf("%s sent more than session.max_peer_buffered_bytes = %d bytes that %s had not yet processed, over all its sessions",
			s.nameOf(from), limit, cfg.Node.Name))
	}
	b.bytes += sz
	b.peak = max(b.peak, b.bytes)
	if b.from == nil {
		b.from = map[peer.ID]int64{}
	}
	b.from[from] += sz
	return true, false, ""
}

// overflow returns reason the first time, and "" after: the session is
// asked to abort once. b.mu is held.
func (b *sessionBuffer) overflow(reason string) string {
	if b.overflowed {
		return ""
	}
	b.overflowed = true
	return reason
}

// release gives back what reserve(from, size) counted, once the frame has
// left the queue.
func (s *session) release(from peer.ID, size int) {
	b := &s.buf
	sz := int64(size) + config.QueuedOverhead
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.bytes -= sz
	b.from[from] -= sz
	s.live.peerBuf[from].bytes.Add(-sz)
}

// closeBuffer ends the counting when the session ends: each peer gets back
// what it still had queued here.
func (s *session) closeBuffer() {
	b := &s.buf
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for p, sz := range b.from {
		s.live.peerBuf[p].bytes.Add(-sz)
	}
	b.from, b.bytes = nil, 0
}

// queuedBytes is the bytes queued from all peers (bandit_queued_bytes).
func (n *Node) queuedBytes() float64 {
	var sum int64
	for _, b := range n.live.Load().peerBuf {
		sum += b.bytes.Load()
	}
	return float64(sum)
}

// dropOverflow drops a frame of peer from that reserve refused, counting
// it, and, with the reason reserve gave (the first time), logs the overflow
// and has the session abort.
func (s *session) dropOverflow(from peer.ID, reason string) {
	s.n.metrics.Fail("overflow")
	if reason == "" {
		return
	}
	s.n.log.Warn("dropped a frame over a buffer cap; aborting the session", "session", s.id, "peer", s.nameOf(from), "reason", reason)
	go s.requestAbort(reason)
}
