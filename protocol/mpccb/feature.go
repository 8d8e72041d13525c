package mpccb

import (
	"fmt"
	"io"
	"time"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// roundKey names one party's payload of one round.
type roundKey struct {
	step  uint64
	round uint32
	from  int
}

// featureParty is a feature party's state machine: setup (seeds) while it
// asks its environment for its features of every step's context
// (protocol.Asker), the joint range check as step 0 (normcheck.go), then
// Algorithm 1 step by step, each step a Program whose rounds it exchanges
// with the other feature parties. In a batched session (params.batch > 1)
// the unit is a batch instead: the rounds, the dealer's corrections and
// party 0's acknowledgements are numbered by batch (from 1), the reward
// rows, arm shares and reward shares still by step.
type featureParty struct {
	base
	cfg     protocol.RoleConfig
	p       Params
	idx     int // this party's index among the feature parties
	parties int
	cols    [2]int
	width   int       // cols[1] − cols[0]: the features of a context this party holds
	x       []float64 // the contexts answered so far, width values each, step 0 first
	asked   int64     // QueryContext queries asked (steps 0 to asked−1)
	got     int64     // and answered
	done    int64     // steps ended, the check's included
	fx      mpc.Fixed
	q       []uint64 // this party's share of every step's ‖x_t‖², for the check
	outside []bool   // the check's bits: b_t = [‖x_t‖² > 1]

	dealerSeed *mpc.Seed
	pairSeeds  []*mpc.Seed
	engine     *mpc.Engine
	learner    *learner

	step        uint64 // the step (batch) under way (1-based); 0 before setup and during the check
	prog        *mpc.Program
	round       uint32
	corrections map[uint64][]uint64
	spare       [][]uint64 // party 0: the words of steps' corrections done with, for steps to come
	rewardRows  map[uint64][]uint64
	rounds      map[roundKey]mpc.Payload
	finished    bool
	started     time.Time
	shape       stepShape // what a step puts on the wire
	checkStats  mpc.Stats // the engine's counts at the end of the check
}

func newFeatureParty(cfg protocol.RoleConfig, p Params) (*featureParty, error) {
	P := cfg.Assignment.Count(RoleFeature)
	if P > p.Dimensions {
		return nil, fmt.Errorf("%d feature parties for %d dimensions: every party must hold at least one feature", P, p.Dimensions)
	}
	f := &featureParty{cfg: cfg, p: p, idx: cfg.Self.Index, parties: P, fx: mpc.Fixed{Frac: uint(p.PrecisionBits)},
		pairSeeds: make([]*mpc.Seed, P), corrections: map[uint64][]uint64{}, rewardRows: map[uint64][]uint64{},
		rounds: map[roundKey]mpc.Payload{}}
	shape, err := checkShape(p, P)
	if err != nil {
		return nil, err
	}
	f.shape = shape
	f.cols = dataset.Split(p.Dimensions, P)[f.idx]
	f.width = f.cols[1] - f.cols[0]
	f.x = make([]float64, 0, p.Steps*int64(f.width))
	f.q = make([]uint64, 0, p.Steps)
	return f, nil
}

func (f *featureParty) feature(i int) protocol.Party {
	return protocol.Party{Role: RoleFeature, Index: i}
}

// Start implements protocol.Role: send each later party a pair seed.
func (f *featureParty) Start() error {
	for q := f.idx + 1; q < f.parties; q++ {
		var s mpc.Seed
		if _, err := io.ReadFull(f.cfg.Rand, s[:]); err != nil {
			return fmt.Errorf("drawing a pair seed: %w", err)
		}
		f.pairSeeds[q] = &s
		f.send(f.feature(q), &mpccbpb.Message{Kind: &mpccbpb.Message_PairSeed{PairSeed: &mpccbpb.Seed{Seed: s[:]}}})
	}
	f.askContexts()
	return nil
}

// contextsAhead bounds the context queries a feature party has asked and
// not yet had answered: enough to keep an environment that answers at its
// own pace (a program, a service) busy, and within what a daemon queues for
// one party (node's maxQueriesQueued).
const contextsAhead = 32

// askContexts asks the contexts of the next steps, up to contextsAhead
// unanswered. A feature party needs every step's context before step 1:
// the joint range check (normcheck.go), step 0, covers all of them at once.
// So it asks them from the start, in order, and keeps them; each step then
// shares the context it was answered.
func (f *featureParty) askContexts() {
	for f.asked < f.p.Steps && f.asked-f.got < contextsAhead {
		f.asked++
		f.Ask(protocol.Query{ID: uint64(f.asked), Kind: protocol.QueryContext, Step: f.asked - 1})
	}
}

// context returns this party's features of step t (1-based, as the
// protocol's steps; the query's step t−1).
func (f *featureParty) context(t uint64) []float64 {
	return f.x[(t-1)*uint64(f.width) : t*uint64(f.width)]
}

// Answer implements protocol.Asker: the context of the oldest step asked,
// this party's features of it. They must be this party's number of
// columns, finite, and of norm at most 1 (maxNorm): the engine needs every
// whole context within the unit ball, and that the parts add up to at most
// 1 the joint range check decides before step 1. Once every step's context
// is here, the check may begin.
func (f *featureParty) Answer(o protocol.Outcome) error {
	t := f.got // the query's step
	switch {
	case t >= f.asked || o.ID != uint64(t+1):
		return fmt.Errorf("feature party %d: an answer to query %d, but the oldest query asked and not answered is %d (of %d asked)", f.idx, o.ID, t+1, f.asked)
	case len(o.X) != f.width:
		return fmt.Errorf("feature party %d, step %d: a context of %d features; party %d of %d holds columns [%d, %d) of %d, that is %d",
			f.idx, t, len(o.X), f.idx, f.parties, f.cols[0], f.cols[1], f.p.Dimensions, f.width)
	case !isFinite(o.X):
		return fmt.Errorf("feature party %d, step %d: the environment answered a context that holds a value that is not a finite number", f.idx, t)
	}
	// The reason may reach every party: it names the step, never a
	// feature or the norm.
	if n := norm(o.X); n > maxNorm {
		return fmt.Errorf("feature party %d, step %d (row %d of a features or replayed file): this party's %d features have a norm above 1; the engine needs every context's norm to be at most 1 (scale each context to unit norm before splitting it, as dataset.NormalizeRows does)",
			f.idx, t, t+1, f.width)
	}
	f.x = append(f.x, o.X...)
	f.q = append(f.q, checkShare(o.X))
	f.got++
	f.SetProgress(protocol.Progress{Activity: f.activity()})
	f.askContexts()
	return f.advance()
}

// activity counts a feature party's work for the daemon's stall timeout:
// the contexts answered and the steps done (the check counts as one). It
// reports no Step and Total: p′ alone does (see puller.Step), so that a
// session's progress reads steps of steps.
func (f *featureParty) activity() int64 { return f.got + f.done }

// Step implements protocol.Role.
func (f *featureParty) Step(m protocol.Message) error {
	if f.finished {
		return nil
	}
	msg, err := decode(m)
	if err != nil {
		return err
	}
	switch k := msg.Kind.(type) {
	case *mpccbpb.Message_DealerSeed:
		if m.From.Role != RoleDealer || f.dealerSeed != nil {
			return fmt.Errorf("an unexpected dealer seed from %s", m.From)
		}
		s := seedOf(k.DealerSeed.Seed)
		f.dealerSeed = &s
	case *mpccbpb.Message_PairSeed:
		q := m.From.Index
		if m.From.Role != RoleFeature || q >= f.idx || f.pairSeeds[q] != nil {
			return fmt.Errorf("an unexpected pair seed from %s", m.From)
		}
		s := seedOf(k.PairSeed.Seed)
		f.pairSeeds[q] = &s
	case *mpccbpb.Message_Corrections:
		st := k.Corrections.Step
		if m.From.Role != RoleDealer || f.idx != 0 || !f.ahead(st) {
			return fmt.Errorf("unexpected corrections for %s from %s", unitName(f.p, st), m.From)
		}
		// A step's corrections come in chunks; party 0 keeps at most the
		// words a step uses, for the Window steps the dealer may be ahead
		// (step 0, the check, alone before them).
		limit := f.shape.check.corrections
		if st != 0 {
			limit = f.shape.correctionsOf(f.p, st)
		}
		if have := len(f.corrections[st]); have+len(k.Corrections.Words) > limit {
			return fmt.Errorf("%d correction words for %s from %s after %d; %s uses %d",
				len(k.Corrections.Words), unitName(f.p, st), m.From, have, unitKind(f.p), limit)
		}
		c, ok := f.corrections[st]
		switch {
		case ok:
		case st != 0 && len(f.spare) > 0:
			// A step's words in those of a step done with (endStep): the
			// dealer's window bounds the buffers party 0 ever holds.
			c, f.spare = f.spare[len(f.spare)-1][:0], f.spare[:len(f.spare)-1]
		default:
			c = make([]uint64, 0, limit)
		}
		f.corrections[st] = append(c, k.Corrections.Words...)
	case *mpccbpb.Message_RewardRow:
		st := k.RewardRow.Step
		if m.From.Role != RoleReceiver || st == 0 || st > uint64(f.p.Steps) || !f.ahead(f.p.unitOf(st)) || f.rewardRows[st] != nil {
			return fmt.Errorf("an unexpected reward row for step %d from %s", st, m.From)
		}
		if len(k.RewardRow.Words) != f.p.Arms {
			return fmt.Errorf("a reward row of %d arms from %s; the session has %d", len(k.RewardRow.Words), m.From, f.p.Arms)
		}
		f.rewardRows[st] = k.RewardRow.Words
	case *mpccbpb.Message_Round:
		r := k.Round
		key := roundKey{step: r.Step, round: r.Round, from: m.From.Index}
		if m.From.Role != RoleFeature || m.From.Index == f.idx {
			return fmt.Errorf("an unexpected round (step %d, round %d) from %s", r.Step, r.Round, m.From)
		}
		if st, rd := f.position(); !(r.Step == st && (r.Round == rd || r.Round == rd+1) || r.Step == st+1 && r.Round == 0) {
			return fmt.Errorf("round %d of %s from %s while this party waits for round %d of %s: a party can be at most one round ahead of another",
				r.Round, unitName(f.p, r.Step), m.From, rd, unitName(f.p, st))
		}
		if _, dup := f.rounds[key]; dup {
			return fmt.Errorf("round %d of %s twice from %s", r.Round, unitName(f.p, r.Step), m.From)
		}
		limit := f.shape.maxRound
		if r.Step == 0 {
			limit = f.shape.check.maxRound
		}
		if n := len(r.Arith) + len(r.Binary); n > limit {
			return fmt.Errorf("round %d of %s from %s holds %d words; no round of %s opens more than %d", r.Round, unitName(f.p, r.Step), m.From, n, unitKind(f.p), limit)
		}
		f.rounds[key] = mpc.Payload{Arith: r.Arith, Binary: r.Binary}
	default:
		return fmt.Errorf("a feature party takes no %T", k)
	}
	return f.advance()
}

// maxRoundsAhead bounds the payloads a feature party keeps from each other
// feature party: a party sends its payload of round k+1 only after it has
// every party's payload of round k, so another party can be at most one
// round ahead of this one — in the current round, the next, or the first
// round of the next step when this one ends. Step refuses any other round,
// so the buffer holds at most maxRoundsAhead payloads per party (each at
// most the largest round's words, stepShape.maxRound) however many frames a
// party sends.
const maxRoundsAhead = 3

// position returns the step and round whose payloads this party needs next
// (step 0 is the check).
func (f *featureParty) position() (uint64, uint32) {
	if f.prog == nil {
		return f.step, 0
	}
	return f.step, f.round
}

// ahead reports whether st is a step (a batch) whose inputs may arrive
// now: not done, not begun (a step's inputs are taken when it begins, so
// any that came later would stay forever), and within the session's
// window; step 0, the check, until it begins.
func (f *featureParty) ahead(st uint64) bool {
	begun := f.prog != nil && st == f.step
	if st == 0 {
		return f.step == 0 && !begun
	}
	cur := max(f.step, 1)
	return st >= cur && !begun && st < cur+uint64(f.p.Window)+1 && st <= f.p.units()
}

// advance does everything the messages received so far allow.
func (f *featureParty) advance() error {
	if f.engine == nil {
		if f.dealerSeed == nil {
			return nil
		}
		pairs := make([]mpc.Seed, f.parties)
		for q, s := range f.pairSeeds {
			if q == f.idx {
				continue
			}
			if s == nil {
				return nil
			}
			pairs[q] = *s
		}
		e, err := mpc.NewParty(mpc.Config{Parties: f.parties, Frac: f.fx.Frac}, f.idx, *f.dealerSeed, pairs)
		if err != nil {
			return err
		}
		f.engine, f.learner, f.step = e, newLearner(e, f.p), 0
	}
	for !f.finished {
		if f.prog == nil {
			if !f.beginStep() {
				return nil
			}
		} else {
			in := make([]mpc.Payload, f.parties)
			for q := range f.parties {
				if q == f.idx {
					continue
				}
				pl, ok := f.rounds[roundKey{f.step, f.round, q}]
				if !ok {
					return nil
				}
				in[q] = pl
			}
			for q := range f.parties {
				delete(f.rounds, roundKey{f.step, f.round, q})
			}
			if err := f.engine.Complete(in); err != nil {
				return fmt.Errorf("%s, round %d: %w", unitName(f.p, f.step), f.round, err)
			}
			f.round++
		}
		done, err := f.prog.Advance()
		if err != nil {
			return fmt.Errorf("%s, round %d: %w", unitName(f.p, f.step), f.round, err)
		}
		if !done {
			out := f.engine.Outgoing()
			for q := range f.parties {
				if q != f.idx {
					f.send(f.feature(q), &mpccbpb.Message{Kind: &mpccbpb.Message_Round{Round: &mpccbpb.Round{
						Step: f.step, Round: f.round, Arith: out.Arith, Binary: out.Binary}}})
				}
			}
			continue
		}
		if err := f.endStep(); err != nil {
			return err
		}
	}
	return nil
}

// beginStep starts step f.step if its inputs are here.
func (f *featureParty) beginStep() bool {
	if f.step == 0 {
		if f.got < f.p.Steps {
			return false // the check needs every step's context
		}
		if f.idx == 0 {
			c := f.corrections[0]
			if len(c) < f.shape.check.corrections {
				return false
			}
			f.engine.SetCorrections(c)
			delete(f.corrections, 0)
		}
		f.prog = normCheck(f.engine, f.p.Steps, f.q, &f.outside, maxMessageWords)
		f.round = 0
		return true
	}
	first, n := f.p.unitSteps(f.step)
	for t := first; t < first+uint64(n); t++ {
		if _, ok := f.rewardRows[t]; !ok {
			return false
		}
	}
	if f.idx == 0 {
		c := f.corrections[f.step]
		if len(c) < f.shape.correctionsOf(f.p, f.step) {
			return false
		}
		f.engine.SetCorrections(c)
		delete(f.corrections, f.step)
	}
	xs, rrs := make([][]uint64, n), make([][]uint64, n)
	split := dataset.Split(f.p.Dimensions, f.parties)
	for j := range n {
		t := first + uint64(j)
		rrs[j] = f.rewardRows[t]
		delete(f.rewardRows, t)
		// Line 6: share the context; each party contributes its own columns.
		row := f.context(t)
		x := make([]uint64, f.p.Dimensions)
		for q, c := range split {
			var mine []uint64
			if q == f.idx {
				mine = f.fx.EncodeAll(row)
			}
			copy(x[c[0]:c[1]], f.engine.Share(q, mine, c[1]-c[0]))
		}
		xs[j] = x
	}
	f.prog = f.learner.unit(f.p, xs, rrs, batchOutputs{
		arm: func(j int, onehot []uint64) {
			f.send(protocol.Party{Role: RolePuller}, &mpccbpb.Message{Kind: &mpccbpb.Message_Arm{Arm: &mpccbpb.Words{Step: first + uint64(j), Words: onehot}}})
		},
		reward: func(j int, share uint64) {
			f.send(protocol.Party{Role: RoleReceiver}, &mpccbpb.Message{Kind: &mpccbpb.Message_Reward{Reward: &mpccbpb.Words{Step: first + uint64(j), Words: []uint64{share}}}})
		},
	})
	f.round = 0
	return true
}

// endStep closes step f.step.
func (f *featureParty) endStep() error {
	for k := range f.rounds {
		if k.step == f.step {
			return fmt.Errorf("%s has ended, and %s sent a payload for its round %d, which does not exist", unitName(f.p, f.step), f.feature(k.from), k.round)
		}
	}
	// Step 0 is the check: every feature party has opened the same bits,
	// so each refuses alike, and party 0 does not acknowledge it.
	if t := firstOutOfRange(f.outside); f.step == 0 && t != 0 {
		return errJointNorm(t)
	}
	if f.idx == 0 {
		if left := f.engine.CorrectionsLeft(); left != 0 {
			return fmt.Errorf("%s: %d of the dealer's correction words were not used: the dealer and the parties disagree about the computation", unitName(f.p, f.step), left)
		}
		if f.step != 0 {
			f.spare = append(f.spare, f.engine.TakeUsedCorrections())
		}
		f.send(protocol.Party{Role: RoleDealer}, &mpccbpb.Message{Kind: &mpccbpb.Message_Ack{Ack: &mpccbpb.Step{Step: f.step}}})
	}
	f.prog = nil
	f.done++
	if f.step == 0 {
		f.q, f.outside = nil, nil
		f.checkStats = f.engine.Stats()
		f.started = f.cfg.Clock.Now()
		f.step++
		f.SetProgress(protocol.Progress{Activity: f.activity()})
		return nil
	}
	f.SetProgress(protocol.Progress{Activity: f.activity()})
	if f.step == f.p.units() {
		f.finished = true
		// The report counts the steps' exchanges; the check's, once per
		// session, are in docs/protocols/mpccb.md ("Cost, once per session").
		st := f.engine.Stats()
		f.SetResult(protocol.Result{Report: encodeReport(report{Steps: f.p.Steps,
			Rounds: int64(st.Rounds - f.checkStats.Rounds), Words: st.WordsSent - f.checkStats.WordsSent,
			ElapsedNs: int64(f.cfg.Clock.Now().Sub(f.started))})})
		return nil
	}
	f.step++
	return nil
}
