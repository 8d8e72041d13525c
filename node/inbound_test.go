package node

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
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

// stall is a test family of two participants whose participant[1] does not
// start until release is closed, so that whatever reaches it meanwhile is
// queued; it declares its messages not small, so they are queued after that
// too. Once started, participant[1] sends participant[0] a 1-byte message,
// which participant[0] answers, and both finish — unless participant[1]
// received stallFloodLimit or more other messages (a flood) first: then it
// never finishes, and only an abort ends its session.
type stall struct {
	pairFamily
	release chan struct{}
}

const stallFloodLimit = 4

func (stall) Name() string { return "stall" }

func (f stall) Info() protocol.Info {
	info := f.pairFamily.Info()
	info.SmallMessages = false
	return info
}

func (f stall) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	return &stallRole{self: cfg.Self, peer: otherParticipant(cfg.Self), release: f.release}, nil
}

type stallRole struct {
	readyBox
	self, peer protocol.Party
	release    chan struct{}
	flood      int
}

func (r *stallRole) Start() error {
	if r.self.Index == 1 {
		<-r.release
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{1}})
	}
	return nil
}

func (r *stallRole) Step(m protocol.Message) error {
	switch {
	case len(m.Body) != 1:
		r.flood++
	case r.self.Index == 0:
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{1}})
		r.out.Result = &protocol.Result{Report: []byte{1}}
	case r.flood < stallFloodLimit:
		r.out.Result = &protocol.Result{Report: []byte{1}}
	}
	return nil
}

// The caps of TestFloodIsBounded: the flood's frames are floodFrame bytes.
const (
	floodFrame      = 200 << 10
	floodSessionCap = 1 << 20
	floodPeerCap    = 1 << 20
)

// queuedMetric reads the node's bandit_queued_bytes.
func queuedMetric(t testing.TB, tn *testNode) float64 {
	t.Helper()
	families, err := tn.metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "bandit_queued_bytes" {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("bandit_queued_bytes is not exported")
	return 0
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestFloodIsBounded: node1, an allowed peer and the initiator of a stall
// session with node2, floods node2 with well-formed role frames for that
// session while node2 has not started its role, so that node2 must queue
// them. node2 must queue no more than session.max_buffered_bytes of them
// (by its own accounting, and its heap), drop the rest, and abort the
// session on both nodes with a reason that names node1 and the cap; a ping
// session of node2 with node3 meanwhile completes, and once the session has
// ended node2 holds nothing of node1's. With two sessions flooded, the
// per-peer cap (max_peer_buffered_bytes) stops the second. Without the caps
// node2 queues the whole flood (its inbox holds 4,096 frames).
func TestFloodIsBounded(t *testing.T) {
	tests := []struct {
		name string
		// frames sent to each of the sessions, in order
		frames []int
		// the reason each session aborts for ("" for completed)
		want []string
	}{
		{"session cap", []int{100}, []string{
			"node1 sent more than session.max_buffered_bytes = 1048576 bytes that node2 had not yet processed in this session"}},
		// 3 frames in the first session, then the second session's third
		// frame takes node1's queued bytes over the per-peer cap before
		// the second session's own.
		{"peer cap", []int{3, 50}, []string{"",
			"node1 sent more than session.max_peer_buffered_bytes = 1048576 bytes that node2 had not yet processed, over all its sessions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fam := stall{release: make(chan struct{})}
			released := false
			release := func() {
				if !released {
					released = true
					close(fam.release)
				}
			}
			t.Cleanup(release)
			nodes := startNetworkWith(t, 3, func(i int, cfg *config.Config) {
				openPolicy("stall")(i, cfg)
				cfg.Session.MaxFrameSize = 256 << 10
				cfg.Session.MaxBufferedBytes = floodSessionCap
				cfg.Session.MaxPeerBufferedBytes = floodPeerCap
				cfg.Session.PeerTimeout = config.Duration{Duration: 20 * time.Second}
			}, func(int) []protocol.Family { return []protocol.Family{ping.Family{}, fam} })
			attacker, victim := nodes[0], nodes[1]

			var ids []string
			for range tt.frames {
				id, err := attacker.StartSession([]byte("protocol = \"stall\"\n[roles]\nparticipant = [\"node1\", \"node2\"]\n"))
				if err != nil {
					t.Fatal(err)
				}
				testutil.WaitFor(t, 10*time.Second, "node2 to start the session", func() bool {
					rec, err := victim.sessionRecord(id)
					return err == nil && rec.Session.State == stateRunning
				})
				ids = append(ids, id)
			}
			pingID, err := nodes[2].StartSession(pingSpec(30, "node3", "node2"))
			if err != nil {
				t.Fatal(err)
			}

			flood, read := attacker.roleMessenger(t, "stall"), victim.roleMessenger(t, "stall")
			before := heapInUse()
			sent := 0
			for i, id := range ids {
				frame := appendRoleFrame(nil, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 0,
					ToRole: "participant", ToIndex: 1, Body: make([]byte, floodFrame)})
				for range tt.frames[i] {
					if err := flood.Send(context.Background(), victim.ID(), frame); err != nil {
						t.Fatal(err)
					}
					sent++
				}
			}
			testutil.WaitFor(t, 30*time.Second, "node2 to read the flood", func() bool {
				return read.Stats().FramesReceived >= uint64(sent)
			})
			// node1's own copies of the frames, kept until node2
			// acknowledges them (p2p's send window), are not node2's.
			testutil.WaitFor(t, 10*time.Second, "node2 to acknowledge the flood", func() bool {
				return flood.Stats().Unacknowledged == 0
			})
			grown := int64(heapInUse()) - int64(before)
			pb := victim.live.Load().peerBuf[attacker.ID()]
			if q := queuedMetric(t, victim); q <= 0 || q > floodPeerCap {
				t.Errorf("node2's bandit_queued_bytes during the flood = %v, want some and at most %d", q, floodPeerCap)
			}
			if peak := pb.peak.Load(); peak > floodPeerCap {
				t.Errorf("node2 queued up to %d bytes from node1, over the per-peer cap %d", peak, floodPeerCap)
			}
			for _, id := range ids {
				if s := victim.lookup(id); s != nil {
					s.buf.mu.Lock()
					peak := s.buf.peak
					s.buf.mu.Unlock()
					if peak > floodSessionCap {
						t.Errorf("session %s: node2 queued up to %d bytes, over the session cap %d", id, peak, floodSessionCap)
					}
				}
			}
			// Loose: the caps hold 1 MiB, the flood is up to 20 MiB.
			if grown > 8<<20 {
				t.Errorf("node2's heap grew by %d MiB during a flood of %d MiB", grown>>20, sent*floodFrame>>20)
			}
			t.Logf("flood of %d frames (%d MiB): node1's bytes queued on node2 peaked at %d, heap grew by %d KiB",
				sent, sent*floodFrame>>20, pb.peak.Load(), grown>>10)

			release()
			for i, id := range ids {
				for _, tn := range nodes[:2] {
					got := waitEnded(t, tn, id, 30*time.Second)
					switch {
					case tt.want[i] == "" && got.State != stateCompleted:
						t.Errorf("%s: session %d: %s: %s, want completed", tn.cfg.Node.Name, i, got.State, got.Reason)
					case tt.want[i] != "" && (got.State != stateAborted || got.Reason != tt.want[i]):
						t.Errorf("%s: session %d: %s: %q, want aborted: %q", tn.cfg.Node.Name, i, got.State, got.Reason, tt.want[i])
					}
				}
			}
			for _, tn := range nodes[1:] {
				if got := waitEnded(t, tn, pingID, 30*time.Second); got.State != stateCompleted {
					t.Errorf("%s: the ping session beside the flood: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
				}
			}
			testutil.WaitFor(t, 10*time.Second, "node2 to hold nothing of node1's", func() bool { return pb.bytes.Load() == 0 })
			if q := queuedMetric(t, victim); q != 0 {
				t.Errorf("node2's bandit_queued_bytes after the sessions = %v, want 0", q)
			}
			// node1 can still reach node2.
			after, err := attacker.StartSession(pingSpec(5, "node1", "node2"))
			if err != nil {
				t.Fatal(err)
			}
			if got := waitEnded(t, victim, after, 30*time.Second); got.State != stateCompleted {
				t.Errorf("node2: a ping session with node1 after the flood: %s: %s", got.State, got.Reason)
			}
		})
	}
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
