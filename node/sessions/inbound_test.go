package sessions

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/lifecycle"
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
		partyOrgs: [][]lifecycle.Org{{0}, {1, 2}},
		heard:     make([]atomic.Bool, 3),
		inbox:     make(chan protocol.Message, 16)}
	n := &Runtime{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New(), sessions: map[string]*session{id: s}}
	n.live.Store(&liveConfig{cfg: config.DefaultConfig(), peerBuf: map[peer.ID]*peerBuffer{owner: {}, other: {}}})
	s.n, s.live, s.cfg = n, n.live.Load(), n.config()
	handle := n.newRoleStream("samba", owner).Frame
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
	n := &Runtime{log: slog.New(slog.NewTextHandler(io.Discard, nil)), metrics: metrics.New(), sessions: map[string]*session{id: s}}
	cfg := config.DefaultConfig()
	cfg.Node.Name = "node"
	n.live.Store(&liveConfig{cfg: cfg, peerBuf: map[peer.ID]*peerBuffer{owner: {}}})
	s.n, s.live, s.cfg = n, n.live.Load(), n.config()
	handle := n.newRoleStream("samba", owner).Frame
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

func TestDecodeRoleFrame(t *testing.T) {
	const id = "0123456789abcdef"
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"ok", marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", ToRole: "participant", Body: []byte{1}}), ""},
		{"garbage", []byte{0x12, 0x80}, "malformed"},
		{"no sender role", marshal(t, &nodepb.RoleFrame{SessionId: id}), "role name"},
		{"overlong role", marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: strings.Repeat("r", 65)}), "role name"},
		{"bad session", marshal(t, &nodepb.RoleFrame{SessionId: "zz", FromRole: "p"}), "session ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeRoleFrame(tt.frame)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeRoleFrame(f *testing.F) {
	f.Add(marshal(f, &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "participant", FromIndex: 2, ToRole: "participant", Body: []byte{8, 1}}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		decodeRoleFrame(frame)
	})
}

// The de-duplication window of a party's topic messages: each number is
// handed over once, in any order, within topicSeqWindow of the first
// number not received; a number beyond is refused, as over, and nothing is
// taken after it.
func TestSequenceWindow(t *testing.T) {
	const w = topicSeqWindow
	if w%64 != 0 {
		t.Fatalf("topicSeqWindow = %d is not a multiple of 64, the bitmap's words", w)
	}
	tests := []struct {
		name  string
		add   []uint64
		fresh []bool // add's answers
		over  int    // the index in add of the first over; -1 for none
		upto  uint64
		count int // numbers held above upto
	}{
		{name: "in order", add: []uint64{1, 2, 3}, fresh: []bool{true, true, true}, over: -1, upto: 3},
		{name: "repeats", add: []uint64{1, 1, 2, 1, 2}, fresh: []bool{true, false, true, false, false}, over: -1, upto: 2},
		{name: "a gap filled", add: []uint64{1, 3, 4, 3, 2, 4}, fresh: []bool{true, true, true, false, true, false}, over: -1, upto: 4},
		{name: "from above", add: []uint64{5, 4, 3, 2, 1}, fresh: []bool{true, true, true, true, true}, over: -1, upto: 5},
		{name: "a gap left", add: []uint64{2, 3}, fresh: []bool{true, true}, over: -1, upto: 0, count: 2},
		{name: "the window's last number", add: []uint64{w, w}, fresh: []bool{true, false}, over: -1, upto: 0, count: 1},
		{name: "one past the window", add: []uint64{w + 1}, fresh: []bool{false}, over: 0},
		{name: "past the window after a gap", add: []uint64{1, 3, w + 2}, fresh: []bool{true, true, false}, over: 2, upto: 1, count: 1},
		{name: "nothing taken after", add: []uint64{1, w + 5, 2, 3}, fresh: []bool{true, false, false, false}, over: 1, upto: 1},
		{name: "the window slides with the gap", add: []uint64{2, w, 1, w + 2}, fresh: []bool{true, true, true, true}, over: -1, upto: 2, count: 2},
		{name: "wraps the bitmap", add: []uint64{2, 3, 1, w + 3, w + 2, w + 1, w + 1}, fresh: []bool{true, true, true, true, true, true, false},
			over: -1, upto: 3, count: 3},
		{name: "a cleared bit is not a copy", add: []uint64{2, 4, 1, 3, w + 4}, fresh: []bool{true, true, true, true, true}, over: -1, upto: 4, count: 1},
		{name: "the highest number", add: []uint64{^uint64(0)}, fresh: []bool{false}, over: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s sequenceWindow
			firstOver := -1
			for i, v := range tc.add {
				fresh, over := s.add(v)
				if fresh != tc.fresh[i] {
					t.Fatalf("add(%d) #%d = %v, want %v", v, i, fresh, tc.fresh[i])
				}
				if over && firstOver < 0 {
					firstOver = i
				}
			}
			if firstOver != tc.over {
				t.Errorf("first over at #%d, want #%d", firstOver, tc.over)
			}
			if s.upto != tc.upto || s.count != tc.count || (s.count == 0) != (s.bits == nil) {
				t.Errorf("upto %d, %d held above (bitmap allocated: %v); want upto %d, %d held", s.upto, s.count, s.bits != nil, tc.upto, tc.count)
			}
		})
	}
}

// A peer numbering its messages to grow the set is stopped at the window:
// the set never holds more than topicSeqWindow numbers, and the first
// number beyond it is reported once, naming the party and the numbers.
func TestTopicWindowBoundsTheSet(t *testing.T) {
	var r topicWindows
	p := protocol.Party{Role: "agent", Index: 3}
	var errs []error
	for v := uint64(2); v < 3*topicSeqWindow; v += 2 {
		if _, err := r.fresh(p, v); err != nil {
			errs = append(errs, err)
		}
	}
	if w := r.seen[p]; w.count > topicSeqWindow || !w.exceeded {
		t.Errorf("%d numbers held, exceeded %v; want at most %d, exceeded", w.count, w.exceeded, topicSeqWindow)
	}
	if len(errs) != 1 {
		t.Fatalf("%d errors, want one: %v", len(errs), errs)
	}
	if want := "topic message 4098 of agent[3] is more than 4096 ahead of its message 1, never received"; errs[0].Error() != want {
		t.Errorf("error %q, want %q", errs[0], want)
	}
	if fresh, err := r.fresh(p, 1); fresh || err != nil {
		t.Errorf("after the window was exceeded, message 1: fresh %v, err %v; want neither", fresh, err)
	}
	other := protocol.Party{Role: "agent", Index: 4}
	if fresh, err := r.fresh(other, 1); !fresh || err != nil {
		t.Errorf("another party's message 1: fresh %v, err %v", fresh, err)
	}
}
