package samba

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

// heldBytes is what the controller holds of the data owners' scores and
// sums.
func (c *controller) heldBytes() int {
	n := 0
	for _, b := range c.boxes {
		n += cap(b)
	}
	for _, s := range c.pendingSums {
		n += len(s)
	}
	return n
}

// TestControllerBuffersAreBounded: the controller is the one SAMBA role that
// holds messages until others arrive — a score from each data owner until
// the step's last one is in, an encrypted sum from each until the public
// key is in — and it holds one of each per data owner, of the size the
// protocol sends. A flood of well-formed scores of other steps, repeated
// scores, oversized scores and sums, and sums before the end, from allowed
// data owners, is refused, each with the reason, and what the controller
// holds stays within K scores of 36 bytes and K sums of paillier_bits/4.
func TestControllerBuffersAreBounded(t *testing.T) {
	d := newDriver(t, "ucb", 100, []float64{0.5, 0.4, 0.3}, 1)
	c := d.roles[controllerParty].(*controller)
	owner := func(i int) protocol.Party { return protocol.Party{Role: RoleOwner, Index: i} }
	score := func(t uint64, n int) []byte { return appendSealedMessage(nil, fieldScore, t, 1, make([]byte, n)) }
	const k = 3
	bound := k*scoreBoxSize + k*c.p.PaillierBits/4
	step := func(from protocol.Party, body []byte, want string) {
		t.Helper()
		err := c.Step(protocol.Message{From: from, To: controllerParty, Body: body})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		c.Ready()
		if held := c.heldBytes(); held > bound {
			t.Fatalf("the controller holds %d bytes, more than %d", held, bound)
		}
	}
	// The legitimate score of data_owner[0] at the first step (t = K+1).
	step(owner(0), score(k+1, scoreBoxSize), "")
	for i := range 3000 {
		step(owner(i%k), score(uint64(k+2+i), scoreBoxSize), "but the controller is at step 4 iteration 1")
		step(owner(0), score(k+1, scoreBoxSize), "a score of step 4 iteration 1 from data_owner[0], but")
		step(owner(1), score(k+1, 1<<16), "a score of 65536 bytes from data_owner[1]")
		sum, _ := proto.Marshal(&sambapb.Message{Kind: &sambapb.Message_Sum{Sum: &sambapb.Paillier{C: make([]byte, 1<<16)}}})
		step(owner(2), sum, "an unexpected sum from data_owner[2]")
	}
	if c.got != 1 {
		t.Fatalf("%d scores held, want the 1 legitimate one", c.got)
	}
	// Past the budget, each data owner sends one sum of at most a
	// ciphertext's size; the controller holds them until the key is in.
	c.t = uint64(c.p.Budget) + 1
	big, _ := proto.Marshal(&sambapb.Message{Kind: &sambapb.Message_Sum{Sum: &sambapb.Paillier{C: make([]byte, c.p.PaillierBits/4+1)}}})
	ok, _ := proto.Marshal(&sambapb.Message{Kind: &sambapb.Message_Sum{Sum: &sambapb.Paillier{C: make([]byte, c.p.PaillierBits/4)}}})
	step(owner(0), big, "the encrypted sum from data_owner[0] has 129 bytes, more than a 512-bit key's ciphertext")
	step(owner(0), ok, "")
	step(owner(0), ok, "an unexpected sum from data_owner[0]")
	if len(c.pendingSums) != 1 {
		t.Fatalf("%d sums held, want 1", len(c.pendingSums))
	}
}

// TestControllerRefusesBitsOfAnotherSize: comp's bits are envelopes of one
// byte each; a batch with any other size is refused before it is forwarded.
func TestControllerRefusesBitsOfAnotherSize(t *testing.T) {
	d := newDriver(t, "ucb", 100, []float64{0.5, 0.4, 0.3}, 1)
	c := d.roles[controllerParty].(*controller)
	for i := range 3 {
		if err := c.Step(protocol.Message{From: protocol.Party{Role: RoleOwner, Index: i}, To: controllerParty,
			Body: appendSealedMessage(nil, fieldScore, 4, 1, make([]byte, scoreBoxSize))}); err != nil {
			t.Fatal(err)
		}
	}
	c.Ready()
	body, _ := proto.Marshal(&sambapb.Message{Kind: &sambapb.Message_Bits{Bits: &sambapb.Batch{T: 4, L: 1,
		Boxes: [][]byte{make([]byte, bitBoxSize), make([]byte, 1<<16), make([]byte, bitBoxSize)}}}})
	err := c.Step(protocol.Message{From: compParty, To: controllerParty, Body: body})
	if err == nil || !strings.Contains(err.Error(), "bit 1 of step 4 iteration 1 has 65536 bytes, want 29") {
		t.Fatalf("err = %v", err)
	}
	if rd := c.Ready(); len(rd.Messages) != 0 {
		t.Fatalf("%d messages forwarded", len(rd.Messages))
	}
}

// TestBatchedControllerBuffersAreBounded: in a batched session the
// controller holds each data owner's n scores of the batch until the last
// data owner's are in — n envelopes of 36 bytes each, no more — and refuses
// single scores, batches of other steps or lengths, repeated and oversized
// ones, each with the reason.
func TestBatchedControllerBuffersAreBounded(t *testing.T) {
	const k, batch = 3, 10
	// Thompson sampling: a list a step, n scores from each data owner.
	d := newDriverWith(t, map[string]any{"algorithm": "thompson", "budget": int64(100), "paillier_bits": int64(512), "batch": int64(batch)},
		[]float64{0.5, 0.4, 0.3}, 1)
	c := d.roles[controllerParty].(*controller)
	owner := func(i int) protocol.Party { return protocol.Party{Role: RoleOwner, Index: i} }
	scores := func(t uint64, n, size int) []byte {
		body := appendBatchHead(nil, fieldOwnerScores, stepHeadSize(t, 1)+n*boxFieldSize(size), t, 1)
		for range n {
			body = append(appendBoxHead(body, size), make([]byte, size)...)
		}
		return body
	}
	bound := k * batch * scoreBoxSize
	step := func(from protocol.Party, body []byte, want string) {
		t.Helper()
		err := c.Step(protocol.Message{From: from, To: controllerParty, Body: body})
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		c.Ready()
		if held := c.heldBytes(); held > bound {
			t.Fatalf("the controller holds %d bytes, more than %d", held, bound)
		}
	}
	step(owner(0), scores(k+1, batch, scoreBoxSize), "")
	for i := range 500 {
		step(owner(i%k), scores(uint64(k+2+i), batch, scoreBoxSize), "but the controller is at the batch of 10 steps (10 lists) at step 4 iteration 1")
		step(owner(1), scores(k+1, batch+1, scoreBoxSize), "11 scores of the batch at step 4 iteration 1 from data_owner[1]")
		step(owner(0), scores(k+1, batch, scoreBoxSize), "from data_owner[0], but the controller is at the batch")
		step(owner(2), scores(k+1, batch, 1<<12), "score 0 of 4096 bytes from data_owner[2]")
		step(owner(1), appendSealedMessage(nil, fieldScore, k+1, 1, make([]byte, scoreBoxSize)), "a single score from data_owner[1] in a batched session")
	}
	if c.got != 1 {
		t.Fatalf("%d data owners' scores held, want the 1 legitimate one", c.got)
	}
}

// TestBatchedUCBControllerTakesOneScore: in a batched UCB session the
// controller takes one score from each data owner a batch (batchShape) and
// refuses a score a step, naming both counts.
func TestBatchedUCBControllerTakesOneScore(t *testing.T) {
	const k, batch = 3, 10
	d := newDriverWith(t, map[string]any{"algorithm": "ucb", "budget": int64(100), "paillier_bits": int64(512), "batch": int64(batch)},
		[]float64{0.5, 0.4, 0.3}, 1)
	c := d.roles[controllerParty].(*controller)
	scores := func(n int) []byte {
		body := appendBatchHead(nil, fieldOwnerScores, stepHeadSize(k+1, 1)+n*boxFieldSize(scoreBoxSize), k+1, 1)
		for range n {
			body = append(appendBoxHead(body, scoreBoxSize), make([]byte, scoreBoxSize)...)
		}
		return body
	}
	for _, tt := range []struct {
		from int
		n    int
		want string // "" if taken
	}{
		{0, batch, "10 scores of the batch at step 4 iteration 1 from data_owner[0], but the controller is at the batch of 10 steps (1 lists)"},
		{0, 1, ""},
		{1, 1, ""},
	} {
		err := c.Step(protocol.Message{From: protocol.Party{Role: RoleOwner, Index: tt.from}, To: controllerParty, Body: scores(tt.n)})
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Fatalf("%d scores from data_owner[%d]: err = %v, want %q", tt.n, tt.from, err, tt.want)
		}
	}
	if c.got != 2 {
		t.Fatalf("%d data owners' scores held, want 2", c.got)
	}
}
