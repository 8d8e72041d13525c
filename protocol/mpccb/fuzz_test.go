package mpccb

import (
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
	"google.golang.org/protobuf/proto"
)

// fuzzParams are a tiny session: two feature parties, two arms, two
// dimensions, two steps (and step 0, the joint range check), so that one
// whole session is a few hundred messages.
func fuzzParams() Params {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 2, 2, 2, 1
	p.PrecisionBits, p.ReciprocalIterations = 16, 1
	return p
}

// newFuzzSession starts a tiny session's five roles in memory, every
// role's randomness seeded, so that every run sends the same messages.
func newFuzzSession(t testing.TB) *memSession {
	t.Helper()
	return newMemSession(t, fuzzParams(), 2)
}

// FuzzStep runs a tiny session for after (mod 160) messages, then either hands one
// arbitrary message from an arbitrary party of the session to an arbitrary
// role (twice), or, with replace, puts body in the place of the session's
// next message (same sender and receiver: a well-formed frame of the right
// size but garbage words, when body is a mutated real one) — and then plays
// the session on until a role refuses something or it ends. No role may
// panic, whatever the message and whenever it comes: every feature party
// at any point of the joint range check (step 0) or a step, the dealer, p′
// and p″. The sender is always a party of the session, as the daemon
// guarantees (a role frame comes only from the organization that plays the
// party it claims).
func FuzzStep(f *testing.F) {
	// The seeds: the body of the first message of each kind the session
	// sends, and of a few rounds of the check and of step 1, at the point
	// where the session sends it.
	s := newFuzzSession(f)
	seen := map[string]int{}
	for i := 0; len(s.queue) > 0; i++ {
		m, err := s.deliver()
		if err != nil {
			f.Fatalf("the session itself fails at message %d: %v", i, err)
		}
		var msg mpccbpb.Message
		if err := proto.Unmarshal(m.Body, &msg); err != nil {
			f.Fatal(err)
		}
		kind := string(msg.ProtoReflect().WhichOneof(msg.ProtoReflect().Descriptor().Oneofs().Get(0)).Name())
		if r := msg.GetRound(); r != nil && r.Round%7 == 3 {
			kind += string(rune('0' + r.Step))
		}
		if seen[kind] >= 2 {
			continue
		}
		seen[kind]++
		from, to := uint8(0), uint8(0)
		for j, pt := range s.parties {
			if pt == m.From {
				from = uint8(j)
			}
			if pt == m.To {
				to = uint8(j)
			}
		}
		after := uint8(min(i, 255))
		f.Add(m.Body, from, to, after, false, true)  // in the place of the real one
		f.Add(m.Body, from, to, after, false, false) // a replay
		f.Add(m.Body, to, from, after+1, false, false)
	}
	if len(seen) < 8 {
		f.Fatalf("the seeds cover %d kinds of message: %v", len(seen), seen)
	}
	f.Add([]byte{0x0a, 0x02, 0x0a, 0x00}, uint8(0), uint8(4), uint8(30), true, false)
	f.Add([]byte{0xff}, uint8(1), uint8(3), uint8(0), false, false)

	f.Fuzz(func(t *testing.T, body []byte, from, to, after uint8, topic, replace bool) {
		s := newFuzzSession(t)
		// A whole session is 131 messages: some runs meet its end.
		for i := 0; i < int(after)%160 && len(s.queue) > 0; i++ {
			if m, err := s.deliver(); err != nil {
				t.Fatalf("%s → %s: %v", m.From, m.To, err)
			}
		}
		if replace && len(s.queue) > 0 {
			s.queue[0].Body = body
			if _, err := s.deliver(); err != nil {
				return
			}
		} else {
			m := protocol.Message{From: s.parties[int(from)%len(s.parties)], To: s.parties[int(to)%len(s.parties)], Topic: topic, Body: body}
			var err error
			for range 2 {
				err = s.roles[m.To].Step(m)
				s.collect(m.To)
				_ = s.roles[m.To].Tick()
				s.collect(m.To)
			}
			if err != nil {
				return
			}
		}
		// Play on: what the message changed meets the rest of the session.
		for len(s.queue) > 0 {
			if _, err := s.deliver(); err != nil {
				return
			}
		}
	})
}

// combineFixture is a valid set of reports of a tiny session.
func combineFixture() (protocol.Assignment, Params, map[protocol.Party][]byte) {
	a := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"f0", "f1"}, RolePuller: {"pull"},
		RoleReceiver: {"recv"}, RoleDealer: {"deal"}}}
	p := fuzzParams()
	fp := encodeReport(report{Steps: p.Steps, Rounds: 40, Words: 300, ElapsedNs: 1e6})
	return a, p, map[protocol.Party][]byte{
		{Role: RoleFeature, Index: 0}: fp,
		{Role: RoleFeature, Index: 1}: fp,
		{Role: RoleReceiver}:          encodeReport(report{Steps: p.Steps, RewardTotal: 1, RewardCurve: []float64{0, 0.5}, CheckpointEvery: 1}),
		{Role: RoleDealer}:            encodeReport(report{Steps: p.Steps, CorrectionWords: 500}),
		{Role: RolePuller}:            encodeReport(report{Steps: p.Steps}),
	}
}

// FuzzCombine feeds the initiator's Combine (decodeReport and partyReport)
// an arbitrary report from every party: it returns a result or an error,
// and a result describes the session it was given.
func FuzzCombine(f *testing.F) {
	a, p, r := combineFixture()
	if _, err := (Family{}).Combine(a, p, r); err != nil {
		f.Fatalf("the fixture's reports: %v", err)
	}
	fp, recv, dl, pull := r[protocol.Party{Role: RoleFeature}], r[protocol.Party{Role: RoleReceiver}], r[protocol.Party{Role: RoleDealer}], r[protocol.Party{Role: RolePuller}]
	f.Add(fp, fp, recv, dl, pull)
	f.Add(fp, encodeReport(report{Steps: p.Steps, Rounds: 41}), recv, dl, pull)
	f.Add(fp, fp, encodeReport(report{Steps: p.Steps, RewardCurve: make([]float64, 100_001)}), dl, pull)
	f.Add([]byte{0xff}, []byte{}, recv, []byte{0x08, 0x02}, []byte{})
	f.Fuzz(func(t *testing.T, f0, f1, recv, dl, pull []byte) {
		a, p, _ := combineFixture()
		reports := map[protocol.Party][]byte{{Role: RoleFeature, Index: 0}: f0, {Role: RoleFeature, Index: 1}: f1,
			{Role: RoleReceiver}: recv, {Role: RoleDealer}: dl, {Role: RolePuller}: pull}
		res, err := (Family{}).Combine(a, p, reports)
		if err != nil {
			return
		}
		if r := res.(*Result); r.Parties != 2 || r.Steps != p.Steps || r.Arms != p.Arms {
			t.Fatalf("a result of %d parties, %d steps, %d arms for a session of 2, %d, %d", r.Parties, r.Steps, r.Arms, p.Steps, p.Arms)
		}
	})
}
