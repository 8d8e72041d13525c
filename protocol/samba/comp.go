package samba

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// comp is Comp (Figure 6(c)): it generates the AES key shared with the data
// owners (never with the controller), and each step and iteration opens the
// K permuted, masked scores, selects a position (SelectArm) and seals a bit
// for every position — in a batch of an algorithm decided by the state,
// whose one list serves every step of the batch, a position a step, drawn
// among the largest scores' (selectSteps), and a list of bits a step. What
// it sees: permuted masked scores — for an argmax their order, which are
// equal and the ratios of their differences, for a probability matching
// their ratios too (see leakage) — and which positions it selected; not
// which data owner is at which position.
type comp struct {
	base
	decide *randsrc.Source
	key    privacy.EnvelopeKey
	epoch  uint64 // the key epoch of the workers' channels
	// t is the step of the list of scores that comes next, in the batch
	// of n steps and m lists (batchShape) that starts at step t0 (t0 = t
	// and n = m = 1 when params.batch = 1), at iteration l: the controller
	// sends a batch's lists in order, every list of its iteration l before
	// any of l+1.
	t, t0 uint64
	n, m  int
	l     int

	// What each worker of c.cfg.ForEach uses, and, reused from step to step,
	// the decoded batch, the scores, each position's error, the bits'
	// plaintexts {0, 1}, the nonces' buffered randomness and one step's
	// nonces.
	workers []compWorker
	in      inbound
	v       []float64
	errs    []error
	bits    [2]byte
	nonces  io.Reader
	nonce   []byte
	seen    []int32 // distinct's hash table of the batch's nonces: a position + 1, or 0
	ties    []int   // the positions of a list's largest score (selectSteps)
	sel     []int   // the position selected for each step the list serves

	// view, when set (tests), receives every list of scores comp opens and
	// the positions it selects, one for each step the list serves.
	view func(t uint64, l int, scores []float64, selected []int)
}

// distinct reports an error if two of a batch's envelopes, all of which
// opened, are the same envelope: the controller could copy one data owner's
// score into another's position of the same step and iteration, and it
// would open there too, since every data owner seals for the same channel
// (comp must not learn whose score is where). Each data owner draws a fresh
// random 96-bit nonce for every envelope, so two envelopes of one batch
// share a nonce only if one is a copy. The nonces' first 8 bytes go into a
// hash table of positions (open addressing, at most half full), which finds
// a repeated prefix in one pass — 0.2 µs at K = 100 in a benchmark, where
// sorting them took 0.6 µs (and about 4 µs a step in a session's profile,
// 3 % of it); equal prefixes are compared whole.
func (c *comp) distinct(boxes [][]byte) error {
	size := 1
	for size < 2*len(boxes) {
		size *= 2
	}
	if cap(c.seen) < size {
		c.seen = make([]int32, size)
	}
	seen := c.seen[:size]
	clear(seen)
	shift := 64 - bits.TrailingZeros(uint(size))
	for j, box := range boxes {
		prefix := binary.BigEndian.Uint64(box)
		// The data owners draw the nonces, and an envelope whose nonce
		// the controller changed would not have opened: prefixes that
		// collide in the table are chance, and even all K colliding
		// would cost K probes a position, as the pairwise check below.
		h := int((prefix * 0x9e3779b97f4a7c15) >> shift)
		for ; seen[h] != 0; h = (h + 1) & (size - 1) {
			if binary.BigEndian.Uint64(boxes[seen[h]-1]) == prefix {
				return c.sameEnvelope(boxes)
			}
		}
		seen[h] = int32(j + 1)
	}
	return nil
}

// sameEnvelope is distinct's rare path, for a batch in which two nonces
// share their first 8 bytes: it finds the first pair whose whole nonces are
// equal, if any.
func (c *comp) sameEnvelope(boxes [][]byte) error {
	for a := range boxes {
		for b := a + 1; b < len(boxes); b++ {
			if bytes.Equal(boxes[a][:privacy.EnvelopeNonceSize], boxes[b][:privacy.EnvelopeNonceSize]) {
				return fmt.Errorf("scores %d and %d of step %d iteration %d are the same envelope (one data owner's score replayed in another's place)", a, b, c.t, c.l)
			}
		}
	}
	return nil
}

// compWorker is one worker's share of comp's state: its own clones of the
// channels of the scores the data owners seal and of the bits comp seals for
// them (see channels; a Channel is for one goroutine at a time), a
// plaintext buffer and a reader of the step's nonces — padded so that two
// workers never write to the same cache line.
type compWorker struct {
	open, seal *privacy.Channel
	plain      [16]byte
	nonces     bytes.Reader
	_          [64]byte
}

func newComp(cfg protocol.RoleConfig, p Params) (*comp, error) {
	b, err := newBase(cfg, p)
	if err != nil {
		return nil, err
	}
	s, err := stream(cfg.Rand)
	if err != nil {
		return nil, err
	}
	c := &comp{base: b, decide: randsrc.New(s), t: uint64(b.k) + 1, t0: uint64(b.k) + 1, l: 1, v: make([]float64, b.k), errs: make([]error, b.k),
		bits: [2]byte{0, 1}, workers: make([]compWorker, cfg.WorkerCount()), nonce: make([]byte, b.k*privacy.EnvelopeNonceSize),
		ties: make([]int, 0, b.k), sel: make([]int, maxBatchSize(b.p))}
	if c.key, err = privacy.NewEnvelopeKey(cfg.Rand); err != nil {
		return nil, err
	}
	if c.t0 <= uint64(b.p.Budget) {
		c.n, c.m = batchShape(b.p, b.alg, b.k, c.t0)
	}
	if err := c.rekey(keyEpoch(c.t)); err != nil {
		return nil, err
	}
	c.nonces = bufio.NewReaderSize(cfg.Rand, nonceBuffer)
	return c, nil
}

// rekey gives every worker the channels of key epoch e.
func (c *comp) rekey(e uint64) error {
	open, seal, err := channels(c.key, c.cfg.SessionID, e)
	if err != nil {
		return err
	}
	for i := range c.workers {
		c.workers[i].open, c.workers[i].seal = open.Clone(), seal.Clone()
	}
	c.epoch = e
	return nil
}

// Start hands the AES key to every data owner.
func (c *comp) Start() error {
	for i := range c.k {
		c.send(protocol.Party{Role: RoleOwner, Index: i}, &sambapb.Message{Kind: &sambapb.Message_AesKey{AesKey: &sambapb.AESKey{Key: c.key[:]}}})
	}
	if c.t > uint64(c.p.Budget) {
		c.finish(nil)
	}
	return nil
}

// Step answers a batch of scores (Step 4).
func (c *comp) Step(m protocol.Message) error {
	return c.timed(func() error { return c.step(m) })
}

func (c *comp) step(m protocol.Message) error {
	if c.in.decodeStep(m) && c.in.field == fieldScores && m.From == controllerParty {
		return c.stepScores(c.in.t, c.in.l, c.in.boxes)
	}
	msg, err := decode(m)
	if err != nil {
		return err
	}
	b := msg.GetScores()
	if m.From != controllerParty || b == nil {
		return fmt.Errorf("%s sent comp something other than a batch of scores", m.From)
	}
	return c.stepScores(b.T, b.L, b.Boxes)
}

func (c *comp) stepScores(t uint64, l uint32, boxes [][]byte) error {
	if t != c.t || int(l) != c.l || len(boxes) != c.k {
		return fmt.Errorf("a batch of step %d iteration %d with %d scores, but comp is at step %d iteration %d of %d arms", t, l, len(boxes), c.t, c.l, c.k)
	}
	// Every envelope of a batch is in the key epoch of its first step.
	if e := keyEpoch(c.t0); e != c.epoch {
		if err := c.rekey(e); err != nil {
			return err
		}
	}
	// The K envelopes are opened, and below the K bits sealed, by
	// c.cfg.ForEach: in a simulation, on every core the driver has idle
	// (comp works alone between two batches of data owners). Each position
	// is independent, errors are reported for the first failing position
	// and the nonces are drawn in position order beforehand, so the outcome
	// is the same as one position after the other.
	v := c.v
	c.cfg.ForEach(c.k, func(w, j int) {
		cw := &c.workers[w]
		plain, err := cw.open.AppendOpen(cw.plain[:0], c.t, uint32(c.l), boxes[j])
		if err != nil {
			c.errs[j] = fmt.Errorf("score %d of step %d iteration %d does not open (replayed, reordered or misrouted?): %w", j, c.t, c.l, err)
			return
		}
		if v[j], err = decodeFloat(plain); err != nil {
			c.errs[j] = fmt.Errorf("score %d of step %d iteration %d: %w", j, c.t, c.l, err)
		}
	})
	if err := c.firstError(); err != nil {
		return err
	}
	if err := c.distinct(boxes); err != nil {
		return err
	}
	c.rep.AesOps += int64(c.k)
	// The steps this list serves: its own, or, for the one list of a
	// batch (m = 1 < n), every step of the batch.
	steps := 1
	if c.m < c.n {
		steps = c.n
	}
	sel := c.sel[:steps]
	selectSteps(c.alg.Matching(c.l), c.v, c.decide, c.ties, sel)
	if c.view != nil {
		c.view(c.t, c.l, slices.Clone(c.v), slices.Clone(sel))
	}
	for j, pos := range sel {
		if err := c.sealBits(c.t+uint64(j), pos); err != nil {
			return err
		}
	}
	switch {
	case c.t+1 < c.t0+uint64(c.m):
		c.t++ // the batch's next list
	case c.l < c.alg.Iterations():
		c.t, c.l = c.t0, c.l+1 // the batch's next iteration
	default:
		c.t0 += uint64(c.n)
		c.t, c.l = c.t0, 1
		if c.t0 <= uint64(c.p.Budget) {
			c.n, c.m = batchShape(c.p, c.alg, c.k, c.t0)
		}
	}
	if c.t > uint64(c.p.Budget) {
		c.finish(nil)
	}
	return nil
}

// sealBits seals the K bits of step t, iteration c.l — 1 at position sel
// — and sends them to the controller in one message.
func (c *comp) sealBits(t uint64, sel int) error {
	if _, err := io.ReadFull(c.nonces, c.nonce); err != nil {
		return fmt.Errorf("sealing the bits of step %d iteration %d: reading nonce randomness: %w", t, c.l, err)
	}
	n := sealedBoxSize(1)
	field := boxFieldSize(n)
	size := stepHeadSize(t, uint32(c.l)) + c.k*field
	buf := c.body(batchMessageSize(fieldBits, size))
	if buf == nil {
		buf = make([]byte, 0, batchMessageSize(fieldBits, size))
	}
	body := appendBatchHead(buf, fieldBits, size, t, uint32(c.l))
	head := len(body)
	body = body[:head+c.k*field]
	c.cfg.ForEach(c.k, func(w, j int) {
		bit := 0
		if j == sel {
			bit = 1
		}
		at := head + j*field
		cw := &c.workers[w]
		cw.nonces.Reset(c.nonce[j*privacy.EnvelopeNonceSize : (j+1)*privacy.EnvelopeNonceSize])
		box, err := cw.seal.AppendSeal(appendBoxHead(body[at:at:at+field], n), &cw.nonces, t, uint32(c.l), c.bits[bit:bit+1])
		if err == nil && len(box) != field {
			err = fmt.Errorf("a sealed bit of %d bytes, want %d", len(box), field)
		}
		if err != nil {
			c.errs[j] = fmt.Errorf("sealing bit %d of step %d iteration %d: %w", j, t, c.l, err)
		}
	})
	if err := c.firstError(); err != nil {
		return err
	}
	c.rep.AesOps += int64(c.k)
	c.sendBody(controllerParty, body)
	return nil
}

// firstError returns the error of the first position that failed in the
// last ForEach, and clears them all.
func (c *comp) firstError() error {
	var first error
	for j, err := range c.errs {
		if err != nil && first == nil {
			first = err
		}
		c.errs[j] = nil
	}
	return first
}
