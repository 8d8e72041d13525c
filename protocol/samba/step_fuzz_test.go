package samba

import (
	"log/slog"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// fuzzSession is a SAMBA session of two data owners whose data customer,
// and so its Paillier key, is made once for the whole fuzzing run.
type fuzzSession struct {
	params   any
	assign   protocol.Assignment
	locals   map[protocol.Party]any
	customer protocol.Role
	pkMsgs   []protocol.Message // the data customer's Start
}

func newFuzzSession(t testing.TB) *fuzzSession { return newFuzzSessionBatch(t, 1) }

// newFuzzSessionBatch is newFuzzSession with params.batch = batch.
func newFuzzSessionBatch(t testing.TB, batch int64) *fuzzSession {
	f := Family{}
	params, err := f.ParseParams(map[string]any{"algorithm": "pursuit", "budget": int64(20), "paillier_bits": int64(512), "batch": batch})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := f.PrepareSimulation(map[string]any{"arms": []any{0.5, 0.4}}, protocol.Assignment{}, params)
	if err != nil {
		t.Fatal(err)
	}
	a, locals := prep.Assignment, prep.Local
	s := &fuzzSession{params: params, assign: a, locals: locals}
	if s.customer, err = f.NewRole(s.config(customerParty)); err != nil {
		t.Fatal(err)
	}
	if err := s.customer.Start(); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.customer.Ready().Messages {
		m.From = customerParty
		s.pkMsgs = append(s.pkMsgs, m)
	}
	return s
}

func (s *fuzzSession) config(p protocol.Party) protocol.RoleConfig {
	return protocol.RoleConfig{SessionID: "fuzz", Self: p, Assignment: s.assign, Params: s.params, Local: s.locals[p],
		Rand: protocol.SeededRand(1, p), Clock: fixedClock{}, Logger: slog.New(slog.DiscardHandler), Simulated: true}
}

// FuzzStep runs a session — sequential, or batched (params.batch = 3,
// batches of 3 steps and a last one of 2 after the 2 initial pulls) — for
// a number of messages, then hands one arbitrary message from an
// arbitrary party to an arbitrary role (twice): no role may panic,
// whatever the message and whenever it comes.
func FuzzStep(f *testing.F) {
	sessions := [2]*fuzzSession{newFuzzSession(f), newFuzzSessionBatch(f, 3)}
	score := appendSealedMessage(nil, fieldScore, 3, 1, make([]byte, scoreBoxSize))
	bit := appendSealedMessage(nil, fieldBit, 3, 1, make([]byte, bitBoxSize))
	batch := appendBatchHead(nil, fieldScores, stepHeadSize(3, 1)+2*boxFieldSize(scoreBoxSize), 3, 1)
	for range 2 {
		batch = append(appendBoxHead(batch, scoreBoxSize), make([]byte, scoreBoxSize)...)
	}
	// A data owner's scores and bits of a batch of 3 at step 3.
	ownerScores := appendBatchHead(nil, fieldOwnerScores, stepHeadSize(3, 1)+3*boxFieldSize(scoreBoxSize), 3, 1)
	ownerBits := appendBatchHead(nil, fieldOwnerBits, stepHeadSize(3, 1)+3*boxFieldSize(bitBoxSize), 3, 1)
	for range 3 {
		ownerScores = append(appendBoxHead(ownerScores, scoreBoxSize), make([]byte, scoreBoxSize)...)
		ownerBits = append(appendBoxHead(ownerBits, bitBoxSize), make([]byte, bitBoxSize)...)
	}
	for _, batched := range []bool{false, true} {
		f.Add(score, uint8(3), uint8(1), uint8(10), false, batched)
		f.Add(bit, uint8(1), uint8(3), uint8(12), false, batched)
		f.Add(batch, uint8(1), uint8(2), uint8(9), false, batched)
		f.Add(batch, uint8(2), uint8(1), uint8(11), false, batched)
		f.Add(ownerScores, uint8(3), uint8(1), uint8(10), false, batched)
		f.Add(ownerBits, uint8(1), uint8(3), uint8(14), false, batched)
		f.Add(sessions[0].pkMsgs[0].Body, uint8(0), uint8(1), uint8(0), false, batched)
		f.Add([]byte{0x0a, 0x02, 0x0a, 0x00}, uint8(0), uint8(4), uint8(30), true, batched)
	}
	f.Fuzz(func(t *testing.T, body []byte, from, to, after uint8, topic, batched bool) {
		s := sessions[0]
		if batched {
			s = sessions[1]
		}
		parties := s.assign.Parties()
		roles := map[protocol.Party]protocol.Role{customerParty: s.customer}
		queue := append([]protocol.Message(nil), s.pkMsgs...)
		for _, p := range parties {
			if p == customerParty {
				continue
			}
			r, err := Family{}.NewRole(s.config(p))
			if err != nil {
				t.Fatal(err)
			}
			roles[p] = r
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
		}
		var flush func(p protocol.Party)
		flush = func(p protocol.Party) {
			rd := roles[p].Ready()
			for _, m := range rd.Messages {
				m.From = p
				queue = append(queue, m)
			}
			// A data owner's pulls, answered (reward 1), so that the
			// session gets past its initial pulls into its steps.
			for _, q := range rd.Queries {
				if err := roles[p].(protocol.Asker).Answer(protocol.Outcome{ID: q.ID, Rewards: []float64{1}}); err != nil {
					t.Fatalf("%s: answering %v: %v", p, q, err)
				}
			}
			if len(rd.Queries) > 0 {
				flush(p)
			}
		}
		for _, p := range parties {
			if p != customerParty {
				flush(p)
			}
		}
		// The session's own messages, up to after of them.
		for i := 0; i < int(after) && len(queue) > 0; i++ {
			m := queue[0]
			queue = queue[1:]
			if m.To == customerParty {
				continue // the shared data customer stays as it is
			}
			if err := roles[m.To].Step(m); err != nil {
				t.Fatalf("%s → %s: %v", m.From, m.To, err)
			}
			flush(m.To)
		}
		m := protocol.Message{From: parties[int(from)%len(parties)], To: parties[int(to)%len(parties)], Topic: topic, Body: body}
		for range 2 {
			_ = roles[m.To].Step(m)
			roles[m.To].Ready()
		}
	})
}
