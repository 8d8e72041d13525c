package ping

import (
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping/pingpb"
	"google.golang.org/protobuf/proto"
)

func mustMarshal(m proto.Message) []byte {
	b, err := proto.Marshal(m)
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzStep feeds a participant arbitrary messages from arbitrary senders,
// each three times (so that a valid ping or pong also meets the state it
// leaves behind): it must never panic, and it never holds more than count
// samples or answers per peer.
func FuzzStep(f *testing.F) {
	for _, m := range []*pingpb.Message{pingMsg(0), pingMsg(1), pongMsg(0), pongMsg(7), {}} {
		f.Add(mustMarshal(m), 1, false)
	}
	f.Add([]byte{0xff, 0xff}, 2, false)
	f.Add(mustMarshal(pingMsg(0)), 0, true)
	f.Fuzz(func(t *testing.T, body []byte, from int, topic bool) {
		const count = 2
		r, clock := newTestParticipant(t, 0, 3, count)
		if err := r.Start(); err != nil {
			t.Fatal(err)
		}
		r.Ready()
		for range 3 {
			_ = r.Step(protocol.Message{From: protocol.Party{Role: RoleParticipant, Index: from}, Topic: topic, Body: body})
			r.Ready()
			_ = r.Tick()
			clock.t = clock.t.Add(1000)
		}
		for j := range r.n {
			if len(r.samples[j]) > count || r.answered[j] > count {
				t.Fatalf("peer %d: %d samples and %d answers, count %d", j, len(r.samples[j]), r.answered[j], count)
			}
		}
	})
}

// FuzzCombine feeds the initiator's Combine arbitrary reports from three
// participants.
func FuzzCombine(f *testing.F) {
	row := func(peer uint32) *pingpb.Row {
		return &pingpb.Row{Peer: peer, Samples: 2, MinNs: 1, MedianNs: 2, P99Ns: 3, MaxNs: 3}
	}
	f.Add(mustMarshal(&pingpb.Report{Rows: []*pingpb.Row{row(1), row(2)}}),
		mustMarshal(&pingpb.Report{Rows: []*pingpb.Row{row(0), row(2)}}),
		mustMarshal(&pingpb.Report{Rows: []*pingpb.Row{row(0), row(1)}}))
	f.Add([]byte{0xff}, []byte{}, mustMarshal(&pingpb.Report{Rows: []*pingpb.Row{row(9), row(9)}}))
	f.Fuzz(func(t *testing.T, r0, r1, r2 []byte) {
		a := protocol.Assignment{Roles: map[string][]string{RoleParticipant: {"a", "b", "c"}}}
		reports := map[protocol.Party][]byte{}
		for i, r := range [][]byte{r0, r1, r2} {
			if r != nil {
				reports[protocol.Party{Role: RoleParticipant, Index: i}] = r
			}
		}
		res, err := Family{}.Combine(a, Params{Count: 2}, reports)
		if err != nil {
			return
		}
		if m := res.(Matrix); len(m.MedianMicros) != 3 {
			t.Fatalf("a %d-row matrix for 3 participants", len(m.MedianMicros))
		}
	})
}

// TestFloodStaysBounded: a participant keeps, per peer, at most count
// samples and answers. A flood of well-formed pings past count, and of
// pongs that answer no outstanding ping, is refused, each with the reason,
// and adds nothing.
func TestFloodStaysBounded(t *testing.T) {
	const count = 3
	r, _ := newTestParticipant(t, 0, 3, count)
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	from1 := protocol.Party{Role: RoleParticipant, Index: 1}
	for seq := range uint32(count) {
		if err := r.Step(protocol.Message{From: from1, Body: mustMarshal(pingMsg(seq))}); err != nil {
			t.Fatal(err)
		}
	}
	for seq := uint32(count); seq < 5000; seq++ {
		err := r.Step(protocol.Message{From: from1, Body: mustMarshal(pingMsg(seq))})
		if err == nil || r.answered[1] != count {
			t.Fatalf("ping %d past count: err %v, %d answered", seq, err, r.answered[1])
		}
		if err := r.Step(protocol.Message{From: from1, Body: mustMarshal(pongMsg(seq))}); err == nil || len(r.samples[1]) != 0 {
			t.Fatalf("pong %d: err %v, %d samples", seq, err, len(r.samples[1]))
		}
	}
}
