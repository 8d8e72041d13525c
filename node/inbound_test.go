package node

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"google.golang.org/protobuf/proto"
)

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
				frame, err := proto.Marshal(&nodepb.RoleFrame{SessionId: id, FromRole: "participant", FromIndex: 0,
					ToRole: "participant", ToIndex: 1, Body: make([]byte, floodFrame)})
				if err != nil {
					t.Fatal(err)
				}
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
			if q := queuedMetric(t, victim); q <= 0 || q > floodPeerCap {
				t.Errorf("node2's bandit_queued_bytes during the flood = %v, want some and at most %d", q, floodPeerCap)
			}
			peerPeak, sessionPeaks := victim.rt.QueuePeaks(attacker.ID(), ids...)
			if peerPeak > floodPeerCap {
				t.Errorf("node2 queued up to %d bytes from node1, over the per-peer cap %d", peerPeak, floodPeerCap)
			}
			for id, peak := range sessionPeaks {
				if peak > floodSessionCap {
					t.Errorf("session %s: node2 queued up to %d bytes, over the session cap %d", id, peak, floodSessionCap)
				}
			}
			// Loose: the caps hold 1 MiB, the flood is up to 20 MiB.
			if grown > 8<<20 {
				t.Errorf("node2's heap grew by %d MiB during a flood of %d MiB", grown>>20, sent*floodFrame>>20)
			}
			t.Logf("flood of %d frames (%d MiB): node1's bytes queued on node2 peaked at %d, heap grew by %d KiB",
				sent, sent*floodFrame>>20, peerPeak, grown>>10)

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
			testutil.WaitFor(t, 10*time.Second, "node2 to hold nothing of node1's", func() bool { return queuedMetric(t, victim) == 0 })
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
