package samba

import (
	"testing"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
)

// TestEnvelopesPerKey: with a key per epoch of 2^keyEpochBits steps, no key
// seals more than 2³² envelopes with random nonces at the validated maximum
// (MaxOwners data owners, every algorithm's iterations), where one key per
// session would seal K·N·L.
func TestEnvelopesPerKey(t *testing.T) {
	for _, name := range []string{"epsilon_greedy", "epsilon_decreasing", "ucb", "thompson", "softmax", "pursuit"} {
		alg, err := AlgorithmByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if alg.Iterations() > maxIterations {
			t.Errorf("%s has %d iterations a step, more than maxIterations = %d", name, alg.Iterations(), maxIterations)
		}
	}
	perStep := uint64(MaxOwners * maxIterations) // on each of the two channels
	// A batch is sealed in the epoch of its first step: up to MaxBatch − 1
	// steps of the next epoch under the same key.
	if perKey := perStep<<keyEpochBits + perStep*(MaxBatch-1); perKey > 1<<27 {
		t.Errorf("a key seals up to %d envelopes, more than 2²⁷", perKey)
	}
	if perSession := perStep * MaxBudget; perSession <= 1<<32 {
		t.Errorf("one key per session would seal only %d envelopes: epochs are not needed", perSession)
	}
}

// TestKeyEpochs: each epoch's channels have keys of their own; both
// directions differ; an envelope sealed in one epoch opens in no other.
func TestKeyEpochs(t *testing.T) {
	key, err := privacy.NewEnvelopeKey(protocol.SeededRand(1, compParty))
	if err != nil {
		t.Fatal(err)
	}
	const step = 1 << keyEpochBits // the first step of epoch 1
	toComp0, toOwner0, err := channels(key, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	toComp1, toOwner1, err := channels(key, "s", keyEpoch(step))
	if err != nil {
		t.Fatal(err)
	}
	box, err := toComp1.AppendSeal(nil, protocol.SeededRand(2, compParty), step, 1, []byte("score..."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toComp1.AppendOpen(nil, step, 1, box); err != nil {
		t.Fatalf("epoch 1's envelope does not open in epoch 1: %v", err)
	}
	for name, ch := range map[string]*privacy.Channel{"owner → comp, epoch 0": toComp0, "comp → owner, epoch 0": toOwner0, "comp → owner, epoch 1": toOwner1} {
		if _, err := ch.AppendOpen(nil, step, 1, box); err == nil {
			t.Errorf("an envelope sealed owner → comp in epoch 1 opens %s", name)
		}
	}
	if keyEpoch(step-1) != 0 || keyEpoch(step) != 1 {
		t.Errorf("steps %d and %d in epochs %d and %d", step-1, step, keyEpoch(step-1), keyEpoch(step))
	}
}

// TestSessionAcrossKeyEpochs runs a session past the first epoch boundary
// (step 65,536): the data owners and comp change keys at the same step, and
// the session completes. The bit of step 65,535 opens with epoch 0's key
// only, that of step 65,536 with epoch 1's only.
func TestSessionAcrossKeyEpochs(t *testing.T) {
	const boundary = 65536
	d := newDriver(t, "ucb", boundary+64, []float64{0.5, 0.4}, 1)
	c := d.roles[compParty].(*comp)
	_, bits0, err := channels(c.key, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, bits1, err := channels(c.key, "test", 1)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	var in inbound
	d.tamper = func(m *protocol.Message) bool {
		if !in.parse(m.Body) || in.field != fieldBit || (in.t != boundary-1 && in.t != boundary) {
			return true
		}
		right, wrong := bits0, bits1
		if in.t == boundary {
			right, wrong = bits1, bits0
		}
		if _, err := right.AppendOpen(nil, in.t, in.l, in.box); err != nil {
			t.Errorf("the bit of step %d does not open in epoch %d: %v", in.t, keyEpoch(in.t), err)
		}
		if _, err := wrong.AppendOpen(nil, in.t, in.l, in.box); err == nil {
			t.Errorf("the bit of step %d opens in the other epoch", in.t)
		}
		checked++
		return true
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	if checked != 4 {
		t.Errorf("%d bits checked, want 2 data owners × 2 steps", checked)
	}
	if r := d.results[customerParty]; r == nil {
		t.Fatal("the data customer has no result")
	}
}

// TestBatchedSessionAcrossKeyEpochs: a batched session (params.batch = 100,
// K = 2: batches start at steps 3, 103, …) whose batch at step 65,503 spans
// the epoch boundary: all of that batch's envelopes, step 65,536's too, are
// in epoch 0, the next batch's (step 65,603) in epoch 1, and the session
// completes with the batched reference's reward.
func TestBatchedSessionAcrossKeyEpochs(t *testing.T) {
	const boundary, across, next = 65536, 65503, 65603
	d := newDriverWith(t, map[string]any{"algorithm": "ucb", "budget": int64(next + 50), "paillier_bits": int64(512), "batch": int64(100)},
		[]float64{0.5, 0.4}, 1)
	c := d.roles[compParty].(*comp)
	var bits [2]*privacy.Channel
	for e := range bits {
		var err error
		if _, bits[e], err = channels(c.key, "test", uint64(e)); err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	var in inbound
	d.tamper = func(m *protocol.Message) bool {
		if !in.parse(m.Body) || in.field != fieldOwnerBits || (in.t != across && in.t != next) {
			return true
		}
		e := 0
		if in.t == next {
			e = 1
		}
		for j, box := range in.boxes {
			step := in.t + uint64(j)
			if _, err := bits[e].AppendOpen(nil, step, in.l, box); err != nil {
				t.Errorf("the bit of step %d (batch at %d) does not open in epoch %d: %v", step, in.t, e, err)
			}
			if _, err := bits[1-e].AppendOpen(nil, step, in.l, box); err == nil {
				t.Errorf("the bit of step %d (batch at %d) opens in epoch %d too", step, in.t, 1-e)
			}
		}
		checked++
		return true
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	if checked != 4 {
		t.Errorf("%d batches of bits checked, want 2 data owners × 2 batches", checked)
	}
	p := c.p
	want, _, err := Reference(p, []float64{0.5, 0.4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.results[customerParty].Local.(CustomerOutcome).CumulativeReward; got != want {
		t.Errorf("cumulative reward %d, the batched reference %d", got, want)
	}
}
