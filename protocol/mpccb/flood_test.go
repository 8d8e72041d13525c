package mpccb

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// memSession runs a session's roles in memory, delivering messages in the
// order they are sent and answering the roles' queries from the family's
// simulated environments.
type memSession struct {
	t       testing.TB
	parties []protocol.Party
	roles   map[protocol.Party]protocol.Role
	envs    map[protocol.Party]protocol.Environment
	queue   []protocol.Message
	// progress is each party's latest progress, as a driver records it.
	progress map[protocol.Party]protocol.Progress
}

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Unix(0, 0) }

// newMemSession starts the roles of a session with P feature parties on
// toy data.
func newMemSession(t testing.TB, p Params, P int) *memSession {
	t.Helper()
	xs, rs := toyData(int(p.Steps), p.Arms, p.Dimensions, 5)
	return newMemSessionData(t, p, P, xs, rs)
}

// newMemSessionData starts the roles of a session with P feature parties
// on the contexts xs (split among them) and reward rows rs.
func newMemSessionData(t testing.TB, p Params, P int, xs, rs [][]float64) *memSession {
	t.Helper()
	a := protocol.Assignment{Roles: map[string][]string{RolePuller: {"pull"}, RoleReceiver: {"recv"}, RoleDealer: {"deal"}}}
	for i := range P {
		a.Roles[RoleFeature] = append(a.Roles[RoleFeature], string(rune('a'+i)))
	}
	parties := []protocol.Party{{Role: RoleDealer}, {Role: RoleReceiver}, {Role: RolePuller}}
	for i := range P {
		parties = append(parties, protocol.Party{Role: RoleFeature, Index: i})
	}
	s := &memSession{t: t, parties: parties, roles: map[protocol.Party]protocol.Role{}, envs: map[protocol.Party]protocol.Environment{},
		progress: map[protocol.Party]protocol.Progress{}}
	split := dataset.Split(p.Dimensions, P)
	for k, pt := range parties {
		cfg := protocol.RoleConfig{SessionID: "flood", Self: pt, Assignment: a, Params: p,
			Rand: rand.NewChaCha8([32]byte{byte(k), 1}), Clock: fixedClock{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		switch pt.Role {
		case RoleFeature:
			cfg.Local = &FeatureLocal{Rows: dataset.Columns(xs, split[pt.Index][0], split[pt.Index][1])}
		case RoleReceiver:
			cfg.Local = &RewardLocal{Rows: rs}
		}
		r, err := Family{}.NewRole(cfg)
		if err != nil {
			t.Fatalf("%s: %v", pt, err)
		}
		s.roles[pt] = r
		if s.envs[pt], err = (Family{}).SimulatedEnvironment(cfg); err != nil {
			t.Fatalf("%s's environment: %v", pt, err)
		}
	}
	for _, pt := range parties {
		if err := s.roles[pt].Start(); err != nil {
			t.Fatalf("%s: %v", pt, err)
		}
		s.collect(pt)
	}
	return s
}

// deliver steps the next message of the session; it returns the message
// and the role's error.
func (s *memSession) deliver() (protocol.Message, error) {
	m := s.queue[0]
	s.queue = s.queue[1:]
	err := s.roles[m.To].Step(m)
	s.collect(m.To)
	return m, err
}

func (s *memSession) collect(from protocol.Party) {
	if err := s.ready(from); err != nil {
		s.t.Fatal(err)
	}
}

// ready queues what party from's role has sent, answering its queries
// first from its environment as a driver does: what the answers make the
// role send comes after what it sent before.
func (s *memSession) ready(from protocol.Party) error {
	for {
		rd := s.roles[from].Ready()
		if rd.Progress != nil {
			s.progress[from] = *rd.Progress
		}
		for _, m := range rd.Messages {
			m.From = from
			s.queue = append(s.queue, m)
		}
		if len(rd.Queries) == 0 {
			return nil
		}
		for _, q := range rd.Queries {
			o, err := s.envs[from].Answer(context.Background(), q)
			if err != nil {
				return fmt.Errorf("%s's environment: %w", from, err)
			}
			if err := s.roles[from].(protocol.Asker).Answer(o); err != nil {
				return fmt.Errorf("%s rejected the answer to its %s query of step %d: %w", from, q.Kind, q.Step, err)
			}
		}
	}
}

// runUntil delivers messages until stop holds after a delivery.
func (s *memSession) runUntil(stop func() bool) {
	s.t.Helper()
	for len(s.queue) > 0 && !stop() {
		m := s.queue[0]
		s.queue = s.queue[1:]
		if err := s.roles[m.To].Step(m); err != nil {
			s.t.Fatalf("%s: %v", m.To, err)
		}
		s.collect(m.To)
	}
	if !stop() {
		s.t.Fatal("the session ended before the point the test waits for")
	}
}

// roundFrame is a well-formed payload of round rd of step st.
func roundFrame(from, to protocol.Party, st uint64, rd uint32, words int) protocol.Message {
	m := encode(to, &mpccbpb.Message{Kind: &mpccbpb.Message_Round{Round: &mpccbpb.Round{
		Step: st, Round: rd, Arith: make([]uint64, words)}}})
	m.From = from
	return m
}

// TestRoundFlood has a feature party send another, in the middle of a
// session, a flood of well-formed round payloads beyond the rounds it can
// have reached: the victim's Step must refuse the first one out of range
// with the reason, and its buffer must never hold more than maxRoundsAhead
// payloads per party. Before the bound, every round number of the current
// and the next step was buffered.
func TestRoundFlood(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 3, 4, 4, 2
	const P = 3
	attacker, victim := protocol.Party{Role: RoleFeature, Index: 0}, protocol.Party{Role: RoleFeature, Index: 2}
	cases := []struct {
		name   string
		frames func(st uint64, rd uint32) [][2]uint64 // (step, round) of each frame, from the victim's position
		failAt int                                    // index of the frame Step must refuse
	}{
		{"rounds of this step", func(st uint64, rd uint32) [][2]uint64 {
			var f [][2]uint64
			for k := rd + 1; k < rd+1000; k++ {
				f = append(f, [2]uint64{st, uint64(k)})
			}
			return f
		}, 1},
		{"rounds of the next step", func(st uint64, _ uint32) [][2]uint64 {
			var f [][2]uint64
			for k := range 1000 {
				f = append(f, [2]uint64{st + 1, uint64(k)})
			}
			return f
		}, 1},
		{"later steps", func(st uint64, _ uint32) [][2]uint64 {
			var f [][2]uint64
			for k := range 1000 {
				f = append(f, [2]uint64{st + 2 + uint64(k), 0})
			}
			return f
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSession(t, p, P)
			v := s.roles[victim].(*featureParty)
			s.runUntil(func() bool { return v.step == 2 && v.prog != nil && v.round == 5 })
			st, rd := v.position()
			for i, fr := range c.frames(st, rd) {
				err := v.Step(roundFrame(attacker, victim, fr[0], uint32(fr[1]), v.shape.maxRound))
				if n := len(v.rounds); n > maxRoundsAhead*(P-1) {
					t.Fatalf("after frame %d the victim buffers %d payloads, more than %d", i, n, maxRoundsAhead*(P-1))
				}
				if i < c.failAt {
					if err != nil {
						t.Fatalf("frame %d (step %d, round %d) refused: %v", i, fr[0], fr[1], err)
					}
					continue
				}
				if err == nil {
					t.Fatalf("frame %d (step %d, round %d) at the victim's step %d, round %d accepted", i, fr[0], fr[1], st, rd)
				}
				if !strings.Contains(err.Error(), "at most one round ahead") || !strings.Contains(err.Error(), attacker.String()) {
					t.Errorf("the refusal %q does not give the reason and the sender", err)
				}
				break
			}
		})
	}
}

// TestRoundBeyondStepEnd: a payload for a round the step does not have is
// refused when the step ends, so it cannot stay buffered.
func TestRoundBeyondStepEnd(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 3, 4, 4, 2
	s := newMemSession(t, p, 2)
	attacker, victim := protocol.Party{Role: RoleFeature, Index: 0}, protocol.Party{Role: RoleFeature, Index: 1}
	v := s.roles[victim].(*featureParty)
	last := uint32(0)
	s.runUntil(func() bool {
		if v.step == 2 {
			return true
		}
		if v.step == 1 { // not step 0, the check
			last = max(last, v.round)
		}
		return false
	})
	// One step has last+1 rounds; at its last round a payload of round
	// last+1 is one ahead and accepted, and must be refused when the step ends.
	s = newMemSession(t, p, 2)
	v = s.roles[victim].(*featureParty)
	s.runUntil(func() bool { return v.step == 1 && v.prog != nil && v.round == last })
	if err := v.Step(roundFrame(attacker, victim, 1, last+1, 8)); err != nil {
		t.Fatalf("a payload one round ahead refused: %v", err)
	}
	var err error
	for len(s.queue) > 0 && err == nil && v.step == 1 {
		m := s.queue[0]
		s.queue = s.queue[1:]
		err = s.roles[m.To].Step(m)
		s.collect(m.To)
	}
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("the step ended with a payload of a round it does not have: %v", err)
	}
}

// TestInputsOfABegunStep: a step takes its reward row and corrections when
// it begins; a row or corrections for it that come later are refused, not
// kept forever (one a step, by a reward receiver or dealer that sends them
// twice, would grow without bound over a long session).
func TestInputsOfABegunStep(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 3, 4, 4, 2
	cases := []struct {
		name string
		from protocol.Party
		msg  *mpccbpb.Message
	}{
		{"reward row", protocol.Party{Role: RoleReceiver}, &mpccbpb.Message{Kind: &mpccbpb.Message_RewardRow{RewardRow: &mpccbpb.Words{Step: 2, Words: make([]uint64, 3)}}}},
		{"corrections", protocol.Party{Role: RoleDealer}, &mpccbpb.Message{Kind: &mpccbpb.Message_Corrections{Corrections: &mpccbpb.Words{Step: 2, Words: make([]uint64, 8)}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSession(t, p, 2)
			v := s.roles[protocol.Party{Role: RoleFeature}].(*featureParty)
			s.runUntil(func() bool { return v.step == 2 && v.prog != nil })
			m := encode(protocol.Party{Role: RoleFeature}, c.msg)
			m.From = c.from
			if err := v.Step(m); err == nil || !strings.Contains(err.Error(), "unexpected") {
				t.Errorf("input for the step under way: %v, want it refused", err)
			}
			if len(v.rewardRows[2]) != 0 || len(v.corrections[2]) != 0 {
				t.Errorf("the victim keeps %d reward and %d correction words for the step under way", len(v.rewardRows[2]), len(v.corrections[2]))
			}
		})
	}
}
