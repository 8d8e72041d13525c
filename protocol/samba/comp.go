package samba

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// comp is Comp (Figure 6(c)): it generates the AES key shared with the data
// owners (never with the controller), and each step and iteration opens the
// K permuted, masked scores, selects a position (SelectArm) and seals a bit
// for every position. What it sees: permuted masked scores — for an argmax
// their order only, for a probability matching their ratios too — and which
// position it selected; not which data owner is at which position.
type comp struct {
	base
	decide *randsrc.Source
	key    privacy.EnvelopeKey
	env    *privacy.Envelope
	t      uint64
	l      int

	// The channels of the scores the data owners seal and of the bits comp
	// seals for them (see channels), and, reused from step to step, the
	// decoded batch, the plaintexts and scores, the bits' plaintexts {0, 1},
	// and the nonces' buffered randomness.
	openCh *privacy.Channel
	sealCh *privacy.Channel
	in     inbound
	plain  []byte
	v      []float64
	bits   [2]byte
	nonces io.Reader

	// view, when set (tests), receives every list of scores comp opens and
	// the position it selects.
	view func(t uint64, l int, scores []float64, selected int)
}

func newComp(cfg protocol.RoleConfig) (*comp, error) {
	b, err := newBase(cfg)
	if err != nil {
		return nil, err
	}
	s, err := stream(cfg.Rand)
	if err != nil {
		return nil, err
	}
	c := &comp{base: b, decide: randsrc.New(s), t: uint64(b.k) + 1, l: 1, plain: make([]byte, 0, 16), v: make([]float64, b.k), bits: [2]byte{0, 1}}
	if c.key, err = privacy.NewEnvelopeKey(cfg.Rand); err != nil {
		return nil, err
	}
	if c.env, err = privacy.NewEnvelope(c.key); err != nil {
		return nil, err
	}
	if c.openCh, c.sealCh, err = channels(c.env, cfg.SessionID); err != nil {
		return nil, err
	}
	c.nonces = bufio.NewReaderSize(cfg.Rand, nonceBuffer)
	return c, nil
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
	v := c.v
	for j, box := range boxes {
		plain, err := c.openCh.AppendOpen(c.plain[:0], c.t, uint32(c.l), box)
		if err != nil {
			return fmt.Errorf("score %d of step %d iteration %d does not open (replayed, reordered or misrouted?): %w", j, c.t, c.l, err)
		}
		c.rep.AesOps++
		if v[j], err = decodeFloat(plain); err != nil {
			return fmt.Errorf("score %d of step %d iteration %d: %w", j, c.t, c.l, err)
		}
	}
	matching := c.alg.Matching(c.l)
	u := 0.0
	if matching {
		u = c.decide.Float()
	}
	sel := SelectArm(matching, v, u)
	if c.view != nil {
		c.view(c.t, c.l, slices.Clone(v), sel)
	}
	n := sealedBoxSize(1)
	size := stepHeadSize(c.t, uint32(c.l)) + c.k*boxFieldSize(n)
	body := appendBatchHead(make([]byte, 0, batchMessageSize(fieldBits, size)), fieldBits, size, c.t, uint32(c.l))
	for j := range c.k {
		bit := 0
		if j == sel {
			bit = 1
		}
		var err error
		if body, err = c.sealCh.AppendSeal(appendBoxHead(body, n), c.nonces, c.t, uint32(c.l), c.bits[bit:bit+1]); err != nil {
			return err
		}
		c.rep.AesOps++
	}
	c.sendBody(controllerParty, body)
	if c.l < c.alg.Iterations() {
		c.l++
	} else {
		c.t, c.l = c.t+1, 1
	}
	if c.t > uint64(c.p.Budget) {
		c.finish(nil)
	}
	return nil
}
