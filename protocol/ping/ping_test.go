package ping

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping/pingpb"
	"google.golang.org/protobuf/proto"
)

type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time { return c.t }

func newTestParticipant(t *testing.T, self, n, count int) (*participant, *fixedClock) {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = string(rune('a' + i))
	}
	clock := &fixedClock{t: time.Unix(100, 0)}
	r, err := Family{}.NewRole(protocol.RoleConfig{
		SessionID:  "s",
		Self:       protocol.Party{Role: RoleParticipant, Index: self},
		Assignment: protocol.Assignment{Roles: map[string][]string{RoleParticipant: names}},
		Params:     Params{Count: count},
		Clock:      clock,
		Logger:     slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.(*participant), clock
}

func body(t *testing.T, m *pingpb.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pingMsg(seq uint32) *pingpb.Message {
	return &pingpb.Message{Kind: &pingpb.Message_Ping{Ping: &pingpb.Ping{Seq: seq}}}
}

func pongMsg(seq uint32) *pingpb.Message {
	return &pingpb.Message{Kind: &pingpb.Message_Pong{Pong: &pingpb.Pong{Seq: seq}}}
}

func TestParticipantRejectsBadMessages(t *testing.T) {
	from1 := protocol.Party{Role: RoleParticipant, Index: 1}
	tests := []struct {
		name    string
		msg     protocol.Message
		wantErr string
	}{
		{"from itself", protocol.Message{From: protocol.Party{Role: RoleParticipant, Index: 0}, Body: body(t, pingMsg(0))}, "not another participant"},
		{"from unknown role", protocol.Message{From: protocol.Party{Role: "dealer", Index: 0}, Body: body(t, pingMsg(0))}, "not another participant"},
		{"index out of range", protocol.Message{From: protocol.Party{Role: RoleParticipant, Index: 9}, Body: body(t, pingMsg(0))}, "not another participant"},
		{"garbage", protocol.Message{From: from1, Body: []byte{0xff, 0xff, 0xff}}, "decoding"},
		{"empty kind", protocol.Message{From: from1, Body: nil}, "no known kind"},
		{"ping out of order", protocol.Message{From: from1, Body: body(t, pingMsg(3))}, "want sequence number 0"},
		{"unsolicited pong", protocol.Message{From: from1, Body: body(t, pongMsg(5))}, "no outstanding ping"},
		{"topic", protocol.Message{From: from1, Topic: true, Body: body(t, pingMsg(0))}, "topic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := newTestParticipant(t, 0, 2, 3)
			if err := r.Start(); err != nil {
				t.Fatal(err)
			}
			err := r.Step(tt.msg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestParticipantMeasuresAndFinishes(t *testing.T) {
	r, clock := newTestParticipant(t, 0, 2, 2)
	from1 := protocol.Party{Role: RoleParticipant, Index: 1}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if rd := r.Ready(); len(rd.Messages) != 1 {
		t.Fatalf("Start sent %d messages, want 1 ping", len(rd.Messages))
	}
	for seq := range uint32(2) {
		clock.t = clock.t.Add(3 * time.Millisecond)
		if err := r.Step(protocol.Message{From: from1, Body: body(t, pongMsg(seq))}); err != nil {
			t.Fatal(err)
		}
		if err := r.Step(protocol.Message{From: from1, Body: body(t, pingMsg(seq))}); err != nil {
			t.Fatal(err)
		}
	}
	rd := r.Ready()
	if rd.Result == nil {
		t.Fatal("participant did not finish after its samples and answers")
	}
	var rep pingpb.Report
	if err := proto.Unmarshal(rd.Result.Report, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].MedianNs != 3e6 || rep.Rows[0].Samples != 2 {
		t.Fatalf("report = %v, want one row of two 3 ms samples", &rep)
	}
}

func TestCombineRejectsBadReports(t *testing.T) {
	a := protocol.Assignment{Roles: map[string][]string{RoleParticipant: {"a", "b"}}}
	row := func(peer uint32, samples uint32, med int64) []byte {
		return body2(t, &pingpb.Report{Rows: []*pingpb.Row{{Peer: peer, Samples: samples, MinNs: 1, MedianNs: med, P99Ns: 10, MaxNs: 10}}})
	}
	p0, p1 := protocol.Party{Role: RoleParticipant, Index: 0}, protocol.Party{Role: RoleParticipant, Index: 1}
	tests := []struct {
		name    string
		reports map[protocol.Party][]byte
		wantErr string
	}{
		{"missing", map[protocol.Party][]byte{p0: row(1, 2, 5)}, "no report from participant[1]"},
		{"self row", map[protocol.Party][]byte{p0: row(0, 2, 5), p1: row(0, 2, 5)}, "bad or repeated peer"},
		{"sample count", map[protocol.Party][]byte{p0: row(1, 1, 5), p1: row(0, 2, 5)}, "samples"},
		{"inconsistent", map[protocol.Party][]byte{p0: row(1, 2, 50), p1: row(0, 2, 5)}, "inconsistent"},
		{"garbage", map[protocol.Party][]byte{p0: {0xff}, p1: row(0, 2, 5)}, "report of participant[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Family{}.Combine(a, Params{Count: 2}, tt.reports)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func body2(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestQuantile(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		q    float64
		want int64
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {1, 10}} {
		if got := quantile(s, tt.q); got != tt.want {
			t.Errorf("quantile(%v) = %d, want %d", tt.q, got, tt.want)
		}
	}
}
