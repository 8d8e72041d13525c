package node

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// TestRoleStreamRemembersHeads: a stream's frames with the head of the last
// delivered one are delivered from the remembered head, the same messages
// as decoding gives; a frame with another head is decoded and checked
// again; and once the node forgets the session, a frame with its head is
// refused like any frame of an unknown session.
func TestRoleStreamRemembersHeads(t *testing.T) {
	const id = "0123456789abcdef"
	self, owner, other := peer.ID("self"), peer.ID("owner"), peer.ID("other")
	s := &session{id: id, family: "samba", self: self,
		roleNames: []string{"controller", "data_owner"},
		orgs:      [][]peer.ID{{self}, {owner, other}},
		inbox:     make(chan protocol.Message, 16)}
	n := &Node{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New(), sessions: map[string]*session{id: s}}
	n.live.Store(&liveConfig{cfg: config.DefaultConfig(), peerBuf: map[peer.ID]*peerBuffer{owner: {}, other: {}}})
	s.n, s.live, s.cfg = n, n.live.Load(), n.config()
	handle := n.newRoleStream("samba", owner)
	frame := func(fromIndex uint32, body string) []byte {
		return appendRoleFrame(nil, &nodepb.RoleFrame{SessionId: id, FromRole: "data_owner", FromIndex: fromIndex, ToRole: "controller", Body: []byte(body)})
	}
	want := func(body string) protocol.Message {
		return protocol.Message{From: protocol.Party{Role: "data_owner"}, To: protocol.Party{Role: "controller"}, Body: []byte(body)}
	}
	refused := func() float64 {
		return counterValue(t, n.metrics.Errors.WithLabelValues("rejected")) + counterValue(t, n.metrics.Errors.WithLabelValues("unknown_session"))
	}

	for i, tc := range []struct {
		name    string
		frame   []byte
		deliver string // the body delivered, or "" if the frame is refused
	}{
		{"first frame, decoded", frame(0, "one"), "one"},
		{"same head", frame(0, "two"), "two"},
		{"same head, longer body", frame(0, string(make([]byte, 200))), string(make([]byte, 200))},
		{"same head, a field after the body", append(frame(0, "three"), 0x18, 0x01), ""}, // claims data_owner[1], played by other
		{"another head, refused", frame(1, "four"), ""},
		{"the remembered head again", frame(0, "five"), "five"},
	} {
		before := refused()
		handle(tc.frame)
		if tc.deliver == "" {
			if refused() != before+1 {
				t.Fatalf("%d %s: not refused", i, tc.name)
			}
			if len(s.inbox) != 0 {
				t.Fatalf("%d %s: delivered %+v", i, tc.name, <-s.inbox)
			}
			continue
		}
		if len(s.inbox) != 1 {
			t.Fatalf("%d %s: %d messages delivered", i, tc.name, len(s.inbox))
		}
		got := <-s.inbox
		s.queued.Add(-1)
		if w := want(tc.deliver); got.From != w.From || got.To != w.To || !bytes.Equal(got.Body, w.Body) {
			t.Fatalf("%d %s: delivered %+v, want %+v", i, tc.name, got, w)
		}
	}

	n.forget(id)
	before := refused()
	handle(frame(0, "after the end"))
	if len(s.inbox) != 0 || refused() != before+1 {
		t.Fatalf("a frame of a forgotten session: %d delivered, refused %v times", len(s.inbox), refused()-before)
	}
}

// A panic in the node's own handling of a frame (here: a session whose
// parties lack a role it names, which a real session never has)
// aborts the frame's session with the reason and goes on to the messenger,
// which resets the stream; without the abort the session would wait for
// frames that the reset lost until its stall timeout.
func TestRoleStreamPanicAbortsTheSession(t *testing.T) {
	const id = "0123456789abcdef"
	self, owner := peer.ID("self"), peer.ID("owner")
	s := &session{id: id, family: "samba", self: self,
		roleNames: []string{"controller", "data_owner"},
		orgs:      [][]peer.ID{{self}},
		inbox:     make(chan protocol.Message, 16),
		ctrl:      make(chan ctrlEvent, 1),
		done:      make(chan struct{})}
	n := &Node{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New(), sessions: map[string]*session{id: s}}
	cfg := config.DefaultConfig()
	cfg.Node.Name = "node"
	n.live.Store(&liveConfig{cfg: cfg, peerBuf: map[peer.ID]*peerBuffer{owner: {}}})
	s.n, s.live, s.cfg = n, n.live.Load(), n.config()
	handle := n.newRoleStream("samba", owner)
	frame := appendRoleFrame(nil, &nodepb.RoleFrame{SessionId: id, FromRole: "data_owner", ToRole: "controller", Body: []byte("x")})
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not go on to the messenger")
			}
		}()
		handle(frame)
	}()
	select {
	case ev := <-s.ctrl:
		if !strings.HasPrefix(ev.abort, "internal error in node handling a frame from ") || strings.Contains(ev.abort, "index out of range") ||
			!strings.Contains(ev.detail, "index out of range") {
			t.Fatalf("abort request %q (detail %q): want the panic in the detail only", ev.abort, ev.detail)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the session was not asked to abort")
	}
}
