package samba

import (
	"bufio"
	"fmt"
	"io"
	"math/big"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// dataOwner is data owner DO_i (Figure 6(a)): it holds arm i, computes its
// score each step and iteration, sends it masked and sealed for comp to the
// controller, and pulls its arm when its bit says so. At the end it sends its
// sum of rewards encrypted with the data customer's Paillier key. It pulls
// by asking its environment (protocol.Asker): a pull of arm i at step t,
// answered with a reward of 0 or 1 (SAMBA's arms are Bernoulli: the sum of
// rewards is a Paillier plaintext, an integer).
type dataOwner struct {
	base
	i      int
	decide *randsrc.Source
	// asked is the step of the pull asked and not yet answered, 0 if
	// none; queries counts the queries asked.
	asked   uint64
	queries uint64
	arm     [1]int // the pull's arms, the query's lent storage: [i]
	sc      ScoreContext
	coin    bool // the algorithm reads sc.Coin

	pk      *privacy.PublicKey
	alpha   *seedPRF            // seed_α's function: the masks
	eps     *seedPRF            // seed_ε's function: the shared coins
	key     privacy.EnvelopeKey // comp's, once it has arrived
	keyed   bool
	started bool

	// t is the first step of the current batch (the step, when
	// params.batch = 1), n its number of steps, m its lists (batchShape:
	// n, or 1 for an algorithm decided by the state alone: one score for
	// the whole batch), l the iteration; bits are the batch's bits of that
	// iteration, one a step whatever m, v its scores, one a list; while
	// pulling, at is the batch's next step to look at.
	t       uint64
	n, m    int
	l       int
	bits    []bool
	v       []float64
	pulling bool
	at      int
	pulls   []uint64

	// The channels of the scores sealed for comp and of the bits comp seals
	// in key epoch epoch (see channels), and, reused from step to step, the
	// decoded bit, the plaintexts and the nonces' buffered randomness.
	sealCh *privacy.Channel
	openCh *privacy.Channel
	epoch  uint64
	in     inbound
	score  [8]byte
	plain  []byte
	nonces io.Reader
	bodies slab[byte] // the storage of the score messages
}

// bodyChunk is the size of a slab of a data owner's score messages (each a
// few dozen bytes).
const bodyChunk = 4096

func newDataOwner(cfg protocol.RoleConfig, p Params) (*dataOwner, error) {
	b, err := newBase(cfg, p)
	if err != nil {
		return nil, err
	}
	d := &dataOwner{base: b, i: cfg.Self.Index, arm: [1]int{cfg.Self.Index}, plain: make([]byte, 0, 16), nonces: bufio.NewReaderSize(cfg.Rand, nonceBuffer),
		bits: make([]bool, maxBatchSize(b.p)), v: make([]float64, maxBatchSize(b.p))}
	s, err := stream(cfg.Rand)
	if err != nil {
		return nil, err
	}
	d.decide = randsrc.New(s)
	d.sc = ScoreContext{K: int64(b.k), Params: b.p, Rand: d.decide, P: 1 / float64(b.k)}
	d.coin = usesCoin(b.alg)
	return d, nil
}

// Start pulls the arm once (Figure 3's initialisation: arm i at step i).
func (d *dataOwner) Start() error {
	d.pull(uint64(d.i + 1))
	return nil
}

// pull asks the environment for the reward of this data owner's arm at
// step t; Answer goes on.
func (d *dataOwner) pull(t uint64) {
	d.asked = t
	d.queries++
	// The query's steps count from 0: SAMBA's step t is step t−1.
	d.Ask(protocol.Query{ID: d.queries, Kind: protocol.QueryPull, Step: int64(t) - 1, Arms: d.arm[:]})
}

// Answer implements protocol.Asker: the reward of the pull asked. After the
// initial pull the data owner starts once its setup has arrived; after a
// step's pull it goes on to the next step.
func (d *dataOwner) Answer(o protocol.Outcome) error {
	return d.timed(func() error { return d.answer(o) })
}

func (d *dataOwner) answer(o protocol.Outcome) error {
	t := d.asked
	switch {
	case t == 0 || o.ID != d.queries:
		return fmt.Errorf("an answer to query %d, but the query asked is %d", o.ID, d.queries)
	// These reasons may reach every party: they name no reward.
	case len(o.Rewards) != 1:
		return fmt.Errorf("pull at step %d (SAMBA's t = %d): the environment answered a number of rewards other than one for a pull of one arm", t-1, t)
	case o.Rewards[0] != 0 && o.Rewards[0] != 1:
		return fmt.Errorf("pull at step %d (SAMBA's t = %d): the environment answered a reward that is not 0 or 1 (SAMBA's arms are Bernoulli; the sum of rewards is encrypted as an integer)", t-1, t)
	}
	d.asked = 0
	d.sc.S += int64(o.Rewards[0])
	d.sc.N++
	if d.cfg.Simulated {
		d.pulls = append(d.pulls, t)
	}
	if !d.started {
		return d.maybeStart()
	}
	return d.pullNext()
}

// maybeStart starts the steps once the setup has arrived and the initial
// pull has been answered.
func (d *dataOwner) maybeStart() error {
	if d.started || d.pk == nil || d.alpha == nil || !d.keyed || d.asked != 0 {
		return nil
	}
	d.started = true
	d.t, d.l = uint64(d.k)+1, 1
	return d.next()
}

// Step handles the setup messages and the bits.
func (d *dataOwner) Step(m protocol.Message) error {
	return d.timed(func() error { return d.step(m) })
}

func (d *dataOwner) step(m protocol.Message) error {
	if d.in.decodeStep(m) && (d.in.field == fieldBit || d.in.field == fieldOwnerBits) {
		if m.From != controllerParty {
			return fmt.Errorf("a bit from %s", m.From)
		}
		if d.in.field == fieldOwnerBits {
			return d.stepBits(d.in.t, d.in.l, d.in.boxes)
		}
		return d.stepBit(d.in.t, d.in.l, d.in.box)
	}
	msg, err := decode(m)
	if err != nil {
		return err
	}
	switch k := msg.Kind.(type) {
	case *sambapb.Message_PublicKey:
		if m.From != customerParty || d.pk != nil {
			return fmt.Errorf("a public key from %s", m.From)
		}
		if d.pk, err = d.publicKey(k.PublicKey.N); err != nil {
			return err
		}
	case *sambapb.Message_Seeds:
		if m.From != controllerParty || d.alpha != nil {
			return fmt.Errorf("seeds from %s, which does not send them or sent them already", m.From)
		}
		alpha, err := newSeedPRF(k.Seeds.Alpha) // checks the length
		if err != nil {
			return fmt.Errorf("seed_α from %s: %w", m.From, err)
		}
		eps, err := newSeedPRF(k.Seeds.Epsilon)
		if err != nil {
			return fmt.Errorf("seed_ε from %s: %w", m.From, err)
		}
		d.alpha, d.eps = alpha, eps
	case *sambapb.Message_AesKey:
		if m.From != compParty || d.keyed || len(k.AesKey.Key) != len(d.key) {
			return fmt.Errorf("bad or repeated AES key from %s", m.From)
		}
		copy(d.key[:], k.AesKey.Key)
		d.keyed = true
		d.epoch = keyEpoch(uint64(d.k) + 1)
		if d.sealCh, d.openCh, err = channels(d.key, d.cfg.SessionID, d.epoch); err != nil {
			return err
		}
	case *sambapb.Message_Bit:
		if m.From != controllerParty {
			return fmt.Errorf("a bit from %s", m.From)
		}
		return d.stepBit(k.Bit.T, k.Bit.L, k.Bit.Box)
	case *sambapb.Message_OwnerBits:
		if m.From != controllerParty {
			return fmt.Errorf("bits from %s", m.From)
		}
		return d.stepBits(k.OwnerBits.T, k.OwnerBits.L, k.OwnerBits.Boxes)
	default:
		return fmt.Errorf("%s sent a data owner a message it never takes", m.From)
	}
	return d.maybeStart()
}

// next starts the batch at step d.t (iteration 1), or, past the budget,
// sends E(s_i).
func (d *dataOwner) next() error {
	if d.t > uint64(d.p.Budget) {
		c, err := d.pk.Encrypt(d.cfg.Rand, big.NewInt(d.sc.S))
		if err != nil {
			return fmt.Errorf("encrypting the sum of rewards: %w", err)
		}
		d.rep.PaillierOps++
		d.send(controllerParty, &sambapb.Message{Kind: &sambapb.Message_Sum{Sum: &sambapb.Paillier{C: c.Bytes(d.pk)}}})
		d.rep.Pulls = d.pulls
		d.finish(OwnerOutcome{Sum: d.sc.S, Pulls: d.sc.N})
		return nil
	}
	if e := keyEpoch(d.t); e != d.epoch {
		// The first batch of a new key epoch (the epoch of a batch's first
		// step): its bits will come sealed in it too.
		var err error
		if d.sealCh, d.openCh, err = channels(d.key, d.cfg.SessionID, e); err != nil {
			return err
		}
		d.epoch = e
	}
	if !d.p.batched() {
		// batchShape's answer for a session of one step a round, without
		// its copy of the parameters every step (≈ 2 % of a session's CPU).
		d.n, d.m = 1, 1
		return d.sendScore(d.scoreOf(d.t, d.l))
	}
	d.n, d.m = batchShape(d.p, d.alg, d.k, d.t)
	for j := range d.m {
		d.v[j] = d.scoreOf(d.t+uint64(j), d.l)
	}
	return d.sendScores()
}

// scoreOf is the masked score of step t, iteration l, from this data
// owner's variables (ComputeScore). The score's state, t included, is the
// batch's start: ScoreContext.T is the batch's first step d.t (t itself
// when params.batch = 1), while the mask and the coin are step t's own
// (batch.go).
func (d *dataOwner) scoreOf(t uint64, l int) float64 {
	d.sc.T, d.sc.L = int64(d.t), l
	if d.coin {
		d.sc.Coin = coinFor(d.eps, t)
	}
	return maskFor(d.alpha, t, l, d.alg.Matching(l)).apply(d.alg.ComputeScore(&d.sc))
}

// sendScore sends the score v of step d.t, iteration d.l, sealed for comp
// (the paper's Step 2, params.batch = 1).
func (d *dataOwner) sendScore(v float64) error {
	putFloat(&d.score, v)
	n := sealedBoxSize(len(d.score))
	size := sealedMessageSize(fieldScore, d.t, uint32(d.l), n)
	buf := d.body(size)
	if buf == nil {
		buf = d.bodies.cut(size, bodyChunk)
	}
	body := appendSealedHead(buf, fieldScore, d.t, uint32(d.l), n)
	body, err := d.sealCh.AppendSeal(body, d.nonces, d.t, uint32(d.l), d.score[:])
	if err != nil {
		return err
	}
	d.rep.AesOps++
	d.sendBody(controllerParty, body)
	return nil
}

// sendScores sends the scores d.v of the batch's d.m lists, iteration d.l,
// each sealed for comp with its own step, in one message (owner_scores).
func (d *dataOwner) sendScores() error {
	field := boxFieldSize(scoreBoxSize)
	size := stepHeadSize(d.t, uint32(d.l)) + d.m*field
	body := appendBatchHead(make([]byte, 0, batchMessageSize(fieldOwnerScores, size)), fieldOwnerScores, size, d.t, uint32(d.l))
	for j := range d.m {
		putFloat(&d.score, d.v[j])
		var err error
		body, err = d.sealCh.AppendSeal(appendBoxHead(body, scoreBoxSize), d.nonces, d.t+uint64(j), uint32(d.l), d.score[:])
		if err != nil {
			return err
		}
	}
	d.rep.AesOps += int64(d.m)
	d.sendBody(controllerParty, body)
	return nil
}

// stepBit takes the bit of step t, iteration l (params.batch = 1).
func (d *dataOwner) stepBit(t uint64, l uint32, box []byte) error {
	if d.p.batched() {
		return fmt.Errorf("a single bit in a batched session (params.batch = %d)", d.p.Batch)
	}
	if err := d.checkBits(t, l, 1); err != nil {
		return err
	}
	if err := d.openBit(0, box); err != nil {
		return err
	}
	return d.afterBits()
}

// stepBits takes the bits of the batch that starts at step t, iteration l
// (params.batch > 1).
func (d *dataOwner) stepBits(t uint64, l uint32, boxes [][]byte) error {
	if !d.p.batched() {
		return fmt.Errorf("the bits of a batch in a session of one step a round (params.batch = 1)")
	}
	if err := d.checkBits(t, l, len(boxes)); err != nil {
		return err
	}
	for j, box := range boxes {
		if err := d.openBit(j, box); err != nil {
			return err
		}
	}
	return d.afterBits()
}

func (d *dataOwner) checkBits(t uint64, l uint32, n int) error {
	if !d.started || d.asked != 0 || d.pulling || t != d.t || int(l) != d.l || n != d.n {
		if !d.p.batched() {
			return fmt.Errorf("a bit for step %d iteration %d, but this data owner is at step %d iteration %d", t, l, d.t, d.l)
		}
		return fmt.Errorf("%d bits for the batch at step %d iteration %d, but this data owner is at the batch of %d steps at step %d iteration %d", n, t, l, d.n, d.t, d.l)
	}
	return nil
}

// openBit opens the bit of the batch's step d.t+j into d.bits[j].
func (d *dataOwner) openBit(j int, box []byte) error {
	t := d.t + uint64(j)
	plain, err := d.openCh.AppendOpen(d.plain[:0], t, uint32(d.l), box)
	if err != nil {
		return fmt.Errorf("the bit of step %d iteration %d does not open: %w", t, d.l, err)
	}
	d.rep.AesOps++
	if len(plain) != 1 || plain[0] > 1 {
		return fmt.Errorf("the bit of step %d iteration %d is not a bit", t, d.l)
	}
	d.bits[j] = plain[0] == 1
	return nil
}

// afterBits goes on once the batch's bits of iteration d.l are in: before
// the last iteration, each step's bit updates the data owner's state
// (AfterIteration) and its next iteration's score is computed from the
// state so updated, step after step; after the last, the arm is pulled at
// every step of the batch whose bit says so, in step order.
func (d *dataOwner) afterBits() error {
	if d.l < d.alg.Iterations() {
		l := d.l
		d.l++
		if !d.p.batched() {
			d.alg.AfterIteration(l, d.bits[0], &d.sc)
			return d.sendScore(d.scoreOf(d.t, d.l))
		}
		for j := range d.m {
			d.alg.AfterIteration(l, d.bits[j], &d.sc)
			d.v[j] = d.scoreOf(d.t+uint64(j), d.l)
		}
		return d.sendScores()
	}
	d.pulling, d.at = true, 0
	return d.pullNext()
}

// pullNext pulls the arm at the batch's next step whose bit is set (Answer
// goes on), or, if none is left, starts the next batch.
func (d *dataOwner) pullNext() error {
	for ; d.at < d.n; d.at++ {
		if d.bits[d.at] {
			d.at++
			d.pull(d.t + uint64(d.at) - 1)
			return nil
		}
	}
	d.pulling = false
	d.t, d.l = d.t+uint64(d.n), 1
	return d.next()
}

// OwnerOutcome is what a data owner keeps of a session: its own arm's sum of
// rewards and number of pulls.
type OwnerOutcome struct {
	Sum   int64 `json:"sum_of_rewards"`
	Pulls int64 `json:"pulls"`
}
