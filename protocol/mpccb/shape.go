package mpccb

import (
	"fmt"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// stepShape is what one step of Algorithm 1 — in a batched session, one
// batch — puts on the wire; it depends on the parameters and the number of
// feature parties only, never on data.
type stepShape struct {
	rounds      int // exchanges among the feature parties
	maxRound    int // words one party sends another in the largest round
	corrections int // correction words the dealer sends party 0
	// lastCorrections is the last unit's: a batch shorter than B when B
	// does not divide T uses fewer.
	lastCorrections int
	// check is the joint range check's, once before step 1 (normcheck.go).
	check normShape
}

// correctionsOf is the correction words of unit u (from 1) of p.
func (s stepShape) correctionsOf(p Params, u uint64) int {
	if u == p.units() {
		return s.lastCorrections
	}
	return s.corrections
}

// Memory and frame bounds of a step.
const (
	// maxMessageWords bounds the words of one message so that it fits the
	// daemon's default 4 MiB frame with room for the envelope. The dealer
	// sends a step's corrections in chunks of at most this many words.
	maxMessageWords = (4<<20 - 64<<10) / 8
	// maxBufferedCorrections bounds the correction words party 0 may hold
	// for the Window steps the dealer may run ahead: 256 MiB.
	maxBufferedCorrections = 256 << 20 / 8
)

// measureStep runs one unit of the dealer's computation — a step, or a
// whole batch of B steps — on a scratch engine (masks only: no data, no
// exchanges) and counts its rounds and words, and the corrections of the
// session's last unit when it is a shorter batch.
func measureStep(p Params, parties int) (stepShape, error) {
	s, err := measureUnit(p, parties, p.batch())
	if err != nil {
		return s, err
	}
	s.lastCorrections = s.corrections
	if _, n := p.unitSteps(p.units()); n != p.batch() {
		last, err := measureUnit(p, parties, n)
		if err != nil {
			return s, err
		}
		s.lastCorrections = last.corrections
	}
	s.check = measureCheck(p.Steps, parties, maxMessageWords)
	return s, nil
}

// measureUnit measures a unit of n steps (learner.unit).
func measureUnit(p Params, parties, n int) (stepShape, error) {
	e, err := mpc.NewDealer(mpc.Config{Parties: parties, Frac: uint(p.PrecisionBits)}, make([]mpc.Seed, parties))
	if err != nil {
		return stepShape{}, err
	}
	e.SetSampler(mpc.NewPRG(mpc.Seed{}))
	xs, rrs := zeroInputs(p, n)
	g := newLearner(e, p).unit(p, xs, rrs, batchOutputs{})
	var s stepShape
	for {
		done, err := g.Advance()
		if err != nil {
			return s, err
		}
		if done {
			break
		}
		out := e.Outgoing()
		s.maxRound = max(s.maxRound, len(out.Arith)+len(out.Binary))
		s.rounds++
		if err := e.Complete(nil); err != nil {
			return s, err
		}
	}
	s.corrections = len(e.TakeCorrections())
	return s, nil
}

// checkShape measures a step and refuses parameters whose rounds would not
// fit a frame or whose corrections, Window steps of them, would take more
// memory at party 0 than maxBufferedCorrections; likewise the joint range
// check's corrections, which party 0 holds before step 1 (the dealer sends
// the steps' only once party 0 has acknowledged the check).
func checkShape(p Params, parties int) (stepShape, error) {
	s, err := measureStep(p, parties)
	if err != nil {
		return s, fmt.Errorf("measuring a step: %w", err)
	}
	if s.maxRound > maxMessageWords {
		unit, fix := "a step", "use fewer arms"
		if p.batched() {
			unit, fix = fmt.Sprintf("a batch of %d steps", p.Batch), "use a smaller params.batch or fewer arms"
		}
		return s, fmt.Errorf("params: %s of %d arms × %d dimensions among %d feature parties opens %d words in one round; at most %d fit a frame: %s",
			unit, p.Arms, p.Dimensions, parties, s.maxRound, maxMessageWords, fix)
	}
	if b := int64(s.corrections) * int64(p.Window); b > maxBufferedCorrections {
		unit := "steps"
		if p.batched() {
			unit = fmt.Sprintf("batches of %d steps", p.Batch)
		}
		return s, fmt.Errorf("params.window: %d %s of %d correction words (%.0f MiB) would wait at feature party 0; at most %d MiB: use a smaller window",
			p.Window, unit, s.corrections, float64(b)*8/(1<<20), maxBufferedCorrections*8>>20)
	}
	if s.check.corrections > maxBufferedCorrections {
		return s, fmt.Errorf("params.steps: the joint range check of %d contexts among %d feature parties needs %d correction words (%.0f MiB) at feature party 0; at most %d MiB: use fewer steps or fewer feature parties",
			p.Steps, parties, s.check.corrections, float64(s.check.corrections)*8/(1<<20), maxBufferedCorrections*8>>20)
	}
	return s, nil
}
