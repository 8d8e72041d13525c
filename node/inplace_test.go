package node

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
)

// bigSwap is a test family of two participants that, round after round, each
// send the other a message far larger than the transport's flow-control
// window (yamux: 256 KiB), each sending round r+1 as soon as it has the
// other's round r — the pattern of an MPC exchange. Were messages stepped
// by the reader goroutine that received them, both readers would block in
// their sends while nobody drained the other direction.
type bigSwap struct{ pairFamily }

func (bigSwap) Name() string { return "bigswap" }

// Info overrides ping's: bigswap's messages are large.
func (f bigSwap) Info() protocol.Info {
	info := f.pairFamily.Info()
	info.SmallMessages = false
	return info
}

func (bigSwap) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	return &bigSwapRole{peer: otherParticipant(cfg.Self)}, nil
}

// pairFamily is what the test families of two participants share: ping's
// family, but with exactly two participants, no params and a fixed result.
// Each names itself and builds its own roles.
type pairFamily struct{ ping.Family }

func (f pairFamily) Info() protocol.Info {
	info := f.Family.Info()
	info.Roles = []protocol.RoleSpec{{Name: "participant", Min: 2, Max: 2, Doc: "one of the two parties of a test family"}}
	return info
}

func (pairFamily) ParseParams(raw map[string]any) (any, error) {
	if len(raw) != 0 {
		return nil, fmt.Errorf("this test family takes no params")
	}
	return nil, nil
}

// CheckAssignment: every assignment of two can run (ping's would refuse
// params that are no ping.Params).
func (pairFamily) CheckAssignment(protocol.Assignment, any, bool) error { return nil }

func (pairFamily) Combine(protocol.Assignment, any, map[protocol.Party][]byte) (any, error) {
	return map[string]bool{"done": true}, nil
}

// runPairSession runs a session of fam, a pairFamily, on two daemons that
// know it (and ping), and fails t unless it completes on both within limit.
func runPairSession(t *testing.T, fam protocol.Family, limit time.Duration) []*testNode {
	t.Helper()
	nodes := startNetworkWith(t, 2, openPolicy(fam.Name()), func(int) []protocol.Family {
		return []protocol.Family{ping.Family{}, fam}
	})
	id, err := nodes[0].StartSession([]byte(fmt.Sprintf("protocol = %q\n[roles]\nparticipant = [\"node1\", \"node2\"]\n", fam.Name())))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, limit); got.State != stateCompleted {
			t.Fatalf("%s: %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
	return nodes
}

// otherParticipant is the other party of a pairFamily's session.
func otherParticipant(self protocol.Party) protocol.Party {
	return protocol.Party{Role: "participant", Index: 1 - self.Index}
}

const (
	bigSwapRounds = 4
	bigSwapBytes  = 1 << 20
)

type bigSwapRole struct {
	readyBox
	peer     protocol.Party
	sent     int
	received int
}

// readyBox is what the test roles share: the batch Ready hands over, and no
// use for ticks.
type readyBox struct{ out protocol.Ready }

func (*readyBox) Tick() error { return nil }

func (o *readyBox) Ready() protocol.Ready {
	rd := o.out
	o.out = protocol.Ready{}
	return rd
}

func (r *bigSwapRole) send() {
	r.sent++
	r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: make([]byte, bigSwapBytes)})
}

func (r *bigSwapRole) Start() error { r.send(); return nil }

func (r *bigSwapRole) Step(m protocol.Message) error {
	if len(m.Body) != bigSwapBytes {
		return fmt.Errorf("a message of %d bytes", len(m.Body))
	}
	r.received++
	if r.sent < bigSwapRounds {
		r.send()
	}
	if r.received == bigSwapRounds {
		r.out.Result = &protocol.Result{Report: []byte{1}}
	}
	return nil
}

// TestLargeSymmetricExchangeCompletes runs bigSwap on two daemons: it must
// complete, which it does only if messages of a family that does not declare
// its messages small are handed to the session goroutine rather than
// stepped by the reader that received them.
func TestLargeSymmetricExchangeCompletes(t *testing.T) {
	for _, tn := range runPairSession(t, bigSwap{}, 60*time.Second) {
		// A write that blocked until its deadline is retried on a new
		// stream, so a deadlock shows as a failed write, not as an abort.
		if st := tn.roleMessenger(t, "bigswap").Stats(); st.Errors != 0 {
			t.Errorf("%s: %d failed writes or streams on the bigswap stream (%d frames sent)", tn.cfg.Node.Name, st.Errors, st.FramesSent)
		}
	}
}

// keepSmall is a test family of two participants that each send the other
// a burst of small messages and keep every body they receive, uncopied, to
// check them all at the end. It does not declare its messages small, so the
// daemon queues them for the session goroutine — and must copy each body
// out of the stream reader's buffer, which the next frames overwrite, before
// it does.
type keepSmall struct{ pairFamily }

func (keepSmall) Name() string { return "keepsmall" }

// Info overrides ping's: keepsmall's roles keep message bodies.
func (f keepSmall) Info() protocol.Info {
	info := f.pairFamily.Info()
	info.SmallMessages = false
	return info
}

func (keepSmall) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	return &keepSmallRole{self: cfg.Self, peer: otherParticipant(cfg.Self)}, nil
}

const keepSmallMessages = 300

func keepSmallBody(from protocol.Party, i int) []byte {
	return fmt.Appendf(nil, "message %d of %d from %s", i, keepSmallMessages, from)
}

type keepSmallRole struct {
	readyBox
	self, peer protocol.Party
	kept       [][]byte
}

func (r *keepSmallRole) Start() error {
	for i := range keepSmallMessages {
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: keepSmallBody(r.self, i)})
	}
	return nil
}

func (r *keepSmallRole) Step(m protocol.Message) error {
	r.kept = append(r.kept, m.Body)
	if len(r.kept) < keepSmallMessages {
		return nil
	}
	for i, b := range r.kept {
		if want := keepSmallBody(r.peer, i); !bytes.Equal(b, want) {
			return fmt.Errorf("kept body %d changed: %q, want %q", i, b, want)
		}
	}
	r.out.Result = &protocol.Result{Report: []byte{1}}
	return nil
}

// TestQueuedMessagesOwnTheirBodies runs keepSmall on two daemons: role
// frames are lent by the messenger (BorrowedFrames), so a message queued
// rather than stepped in place must get a copy of its body, or the bodies
// the roles keep change under them.
func TestQueuedMessagesOwnTheirBodies(t *testing.T) {
	runPairSession(t, keepSmall{}, 60*time.Second)
}
