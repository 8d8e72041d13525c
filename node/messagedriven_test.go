package node

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// tickCount is a test family of two participants that pass a message back
// and forth for tickCountFor on their clocks, then finish; every Tick a
// daemon gives any of its roles is counted in ticks. messageDriven is what
// the family's Info.MessageDriven says.
type tickCount struct {
	pairFamily
	messageDriven bool
	ticks         *atomic.Int64
}

const tickCountFor = 5 * protocol.TickInterval

func (tickCount) Name() string { return "tickcount" }

func (f tickCount) Info() protocol.Info {
	info := f.pairFamily.Info()
	info.MessageDriven = f.messageDriven
	return info
}

func (f tickCount) NewRole(cfg protocol.RoleConfig) (protocol.Role, error) {
	return &tickCountRole{cfg: cfg, ticks: f.ticks, peer: otherParticipant(cfg.Self)}, nil
}

type tickCountRole struct {
	cfg   protocol.RoleConfig
	ticks *atomic.Int64
	peer  protocol.Party
	start time.Time
	out   protocol.Ready
}

func (r *tickCountRole) Start() error {
	r.start = r.cfg.Clock.Now()
	if r.cfg.Self.Index == 0 {
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{0}})
	}
	return nil
}

// Step answers a message with one, with body 1 once its time is up; the
// answer to a 1, or a 1, ends the role.
func (r *tickCountRole) Step(m protocol.Message) error {
	if len(m.Body) != 1 {
		return fmt.Errorf("a message of %d bytes", len(m.Body))
	}
	switch {
	case m.Body[0] == 1:
		r.out.Result = &protocol.Result{Report: []byte{1}}
	case r.cfg.Clock.Now().Sub(r.start) >= tickCountFor:
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{1}})
		r.out.Result = &protocol.Result{Report: []byte{1}}
	default:
		// Not too fast: the exchange must not flood the test's logs.
		time.Sleep(time.Millisecond)
		r.out.Messages = append(r.out.Messages, protocol.Message{To: r.peer, Body: []byte{0}})
	}
	return nil
}

func (r *tickCountRole) Tick() error {
	r.ticks.Add(1)
	return nil
}

func (r *tickCountRole) Ready() protocol.Ready {
	out := r.out
	r.out = protocol.Ready{}
	return out
}

// TestMessageDrivenFamilyIsNotTicked runs a session of half a second on two
// daemons: the roles of a family that declares itself MessageDriven must
// never be ticked, and those of one that does not must be, as often as
// TickInterval says.
func TestMessageDrivenFamilyIsNotTicked(t *testing.T) {
	for _, messageDriven := range []bool{true, false} {
		t.Run(fmt.Sprintf("messageDriven=%v", messageDriven), func(t *testing.T) {
			var ticks atomic.Int64
			runPairSession(t, tickCount{messageDriven: messageDriven, ticks: &ticks}, 30*time.Second)
			// Each of the two roles ran for at least tickCountFor, so a
			// ticked pair gets about 2 × 5 ticks; one is a margin for a
			// slow machine, where a ticker drops ticks.
			switch n := ticks.Load(); {
			case messageDriven && n != 0:
				t.Errorf("a message-driven family's roles were ticked %d times", n)
			case !messageDriven && n < 2:
				t.Errorf("a family that is not message-driven's roles were ticked %d times in %v", n, tickCountFor)
			}
		})
	}
}
