package mpccb

import (
	"fmt"

	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// dealer is the dealer's state machine. At the start it draws every feature
// party's stream seed (and its own sample seed) and hands each party its
// seed, runs the joint range check (normcheck.go) on zeros and sends party 0
// its corrections as step 0's. Once party 0 acknowledges step 0 it runs each
// step's computation — in a batched session each batch's, numbered from 1
// as the steps are — ahead of the parties, with no data, only masks, and
// sends party 0 the step's corrections, in chunks of at most
// maxMessageWords words, at most Window steps (batches) ahead of party
// 0's acknowledgements.
type dealer struct {
	base
	p        Params
	parties  int
	engine   *mpc.Engine
	learner  *learner
	checked  bool   // party 0 acknowledged step 0, the check
	produced uint64 // units (steps, or batches) whose corrections went out
	acked    uint64
	words    int64 // correction words of the steps (the check's not counted)
}

func newDealer(cfg protocol.RoleConfig, p Params) (*dealer, error) {
	P := cfg.Assignment.Count(RoleFeature)
	if _, err := checkShape(p, P); err != nil {
		return nil, err
	}
	seeds, sampler, err := dealerSeeds(cfg.Rand, P)
	if err != nil {
		return nil, fmt.Errorf("drawing the dealer's seeds: %w", err)
	}
	e, err := mpc.NewDealer(mpc.Config{Parties: P, Frac: uint(p.PrecisionBits)}, seeds)
	if err != nil {
		return nil, err
	}
	e.SetSampler(mpc.NewPRG(sampler))
	d := &dealer{p: p, parties: P, engine: e, learner: newLearner(e, p)}
	for i, s := range seeds {
		d.send(protocol.Party{Role: RoleFeature, Index: i}, &mpccbpb.Message{Kind: &mpccbpb.Message_DealerSeed{DealerSeed: &mpccbpb.Seed{Seed: s[:]}}})
	}
	return d, nil
}

// Start implements protocol.Role: the check's corrections.
func (d *dealer) Start() error {
	var outside []bool
	if err := d.run(normCheck(d.engine, d.p.Steps, nil, &outside, maxMessageWords)); err != nil {
		return fmt.Errorf("dealer, the joint range check: %w", err)
	}
	d.sendCorrections(0, d.engine.TakeCorrections())
	return nil
}

// run runs g on the dealer's engine: masks only, no exchanges.
func (d *dealer) run(g *mpc.Program) error {
	for {
		done, err := g.Advance()
		if err != nil || done {
			return err
		}
		if err := d.engine.Complete(nil); err != nil {
			return err
		}
	}
}

// sendCorrections sends party 0 the corrections c of step st in chunks.
func (d *dealer) sendCorrections(st uint64, c []uint64) {
	for len(c) > 0 {
		n := min(len(c), maxMessageWords)
		d.send(protocol.Party{Role: RoleFeature, Index: 0}, &mpccbpb.Message{Kind: &mpccbpb.Message_Corrections{
			Corrections: &mpccbpb.Words{Step: st, Words: c[:n]}}})
		c = c[n:]
	}
}

// produce sends corrections up to Window units (steps, or batches)
// past the last acknowledged.
func (d *dealer) produce() error {
	for d.produced < d.p.units() && d.produced < d.acked+uint64(d.p.Window) {
		_, n := d.p.unitSteps(d.produced + 1)
		xs, rrs := zeroInputs(d.p, n)
		if err := d.run(d.learner.unit(d.p, xs, rrs, batchOutputs{})); err != nil {
			return fmt.Errorf("dealer, %s: %w", unitName(d.p, d.produced+1), err)
		}
		d.produced++
		c := d.engine.TakeCorrections()
		d.words += int64(len(c))
		d.sendCorrections(d.produced, c)
	}
	return nil
}

// Step implements protocol.Role.
func (d *dealer) Step(m protocol.Message) error {
	msg, err := decode(m)
	if err != nil {
		return err
	}
	ack, ok := msg.Kind.(*mpccbpb.Message_Ack)
	if !ok || m.From != (protocol.Party{Role: RoleFeature, Index: 0}) {
		return fmt.Errorf("the dealer takes only party 0's acknowledgements, not %T from %s", msg.Kind, m.From)
	}
	if !d.checked {
		if ack.Ack.Step != 0 {
			return fmt.Errorf("an acknowledgement of step %d before the check's (step 0)", ack.Ack.Step)
		}
		d.checked = true
		return d.produce()
	}
	if ack.Ack.Step != d.acked+1 || ack.Ack.Step > d.produced {
		return fmt.Errorf("an acknowledgement of %s after %s", unitName(d.p, ack.Ack.Step), unitName(d.p, d.acked))
	}
	d.acked++
	// Activity only: p′ alone reports the session's steps (see puller.Step).
	d.SetProgress(protocol.Progress{Activity: int64(d.acked)})
	if d.acked == d.p.units() {
		d.SetResult(protocol.Result{Report: encodeReport(report{Steps: d.p.Steps, CorrectionWords: d.words})})
		return nil
	}
	return d.produce()
}
