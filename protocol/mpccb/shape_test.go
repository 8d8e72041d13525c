package mpccb

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// TestCorrectionChunks: a step whose corrections exceed one message (256
// arms, 20 dimensions: about 824,000 words, 6.3 MiB, since each truncated
// word costs two) goes to party 0 in chunks that each fit a frame; party 0
// takes exactly a step's words and refuses one more. Before the chunks the
// dealer sent it in one message, which the wire refused.
func TestCorrectionChunks(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 256, 20, 1, 1
	a := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}}
	cfg := func(self protocol.Party, local any) protocol.RoleConfig {
		return protocol.RoleConfig{Self: self, Assignment: a, Params: p, Local: local,
			Rand: rand.NewChaCha8([32]byte{3}), Clock: fixedClock{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	}
	d, err := newDealer(cfg(protocol.Party{Role: RoleDealer}, nil), p)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	rows := [][]float64{make([]float64, 10)}
	f, err := newFeatureParty(cfg(protocol.Party{Role: RoleFeature}, &FeatureLocal{Rows: rows}), p)
	if err != nil {
		t.Fatal(err)
	}
	if f.shape.corrections <= maxMessageWords {
		t.Fatalf("a step of %d correction words fits one message; the test needs more", f.shape.corrections)
	}
	// Step 0, the joint range check, comes first; its acknowledgement
	// releases step 1's corrections.
	for _, m := range d.Ready().Messages {
		m.From = protocol.Party{Role: RoleDealer}
		if m.To == (protocol.Party{Role: RoleFeature}) {
			if err := f.Step(m); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(f.corrections[0]) != f.shape.check.corrections {
		t.Fatalf("party 0 holds %d words of the check's corrections; it uses %d", len(f.corrections[0]), f.shape.check.corrections)
	}
	ack := encode(protocol.Party{Role: RoleDealer}, &mpccbpb.Message{Kind: &mpccbpb.Message_Ack{Ack: &mpccbpb.Step{Step: 0}}})
	ack.From = protocol.Party{Role: RoleFeature}
	if err := d.Step(ack); err != nil {
		t.Fatal(err)
	}
	chunks, total := 0, 0
	for _, m := range d.Ready().Messages {
		m.From = protocol.Party{Role: RoleDealer}
		msg, err := decode(m)
		if err != nil {
			t.Fatalf("the dealer sent a message the wire refuses: %v", err)
		}
		c, ok := msg.Kind.(*mpccbpb.Message_Corrections)
		if !ok || m.To != (protocol.Party{Role: RoleFeature}) {
			continue
		}
		if n := len(m.Body); n > 4<<20 {
			t.Errorf("a chunk of %d bytes, beyond a 4 MiB frame", n)
		}
		chunks++
		total += len(c.Corrections.Words)
		if err := f.Step(m); err != nil {
			t.Fatalf("party 0 refused chunk %d: %v", chunks, err)
		}
	}
	if chunks < 2 || total != f.shape.corrections || len(f.corrections[1]) != total {
		t.Errorf("%d chunks of %d words in all, party 0 holds %d; a step uses %d", chunks, total, len(f.corrections[1]), f.shape.corrections)
	}
	extra := encode(protocol.Party{Role: RoleFeature}, &mpccbpb.Message{Kind: &mpccbpb.Message_Corrections{Corrections: &mpccbpb.Words{Step: 1, Words: []uint64{7}}}})
	extra.From = protocol.Party{Role: RoleDealer}
	if err := f.Step(extra); err == nil || !strings.Contains(err.Error(), "a step uses") {
		t.Errorf("one correction word more than a step uses: %v", err)
	}
}

// TestOversizedRound: a round payload longer than any round of a step is
// refused before it is buffered.
func TestOversizedRound(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 3, 4, 4, 2
	s := newMemSession(t, p, 2)
	v := s.roles[protocol.Party{Role: RoleFeature, Index: 1}].(*featureParty)
	s.runUntil(func() bool { return v.step == 1 && v.prog != nil })
	st, rd := v.position()
	err := v.Step(roundFrame(protocol.Party{Role: RoleFeature}, protocol.Party{Role: RoleFeature, Index: 1}, st, rd+1, v.shape.maxRound+1))
	if err == nil || !strings.Contains(err.Error(), "no round of a step opens more") {
		t.Errorf("a round of %d words, one more than the largest: %v", v.shape.maxRound+1, err)
	}
	if len(v.rounds) > maxRoundsAhead {
		t.Errorf("%d payloads buffered", len(v.rounds))
	}
}

// TestShapeRefusals: parameters whose step would not fit the wire or whose
// corrections over the window would exceed party 0's budget are refused
// when a role starts, with the reason.
func TestShapeRefusals(t *testing.T) {
	cases := []struct {
		name       string
		arms, dims int
		parties    int
		window     int
		want       string
		batch      int
	}{
		{"defaults", 10, 20, 2, 8, "", 0},
		{"largest window at defaults", 10, 20, 16, MaxWindow, "", 0},
		{"window too large for wide steps", 100, 20, 2, MaxWindow, "params.window: 1024 steps of", 0},
		{"the largest batch at defaults", 10, 20, 2, DefaultBatchWindow, "", MaxBatch},
		// 150 arms open 525,000 words in a round at B = 1,000, just over a
		// frame; with one dimension the check takes a tenth of a second.
		{"a batch too wide for a frame", 150, 1, 2, DefaultBatchWindow, "fit a frame: use a smaller params.batch or fewer arms", MaxBatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Arms, p.Dimensions, p.Window, p.Batch = c.arms, c.dims, c.window, c.batch
			_, err := checkShape(p, c.parties)
			if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
				t.Errorf("checkShape: %v, want %q", err, c.want)
			}
		})
	}
}
