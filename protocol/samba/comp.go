package samba

import (
	"fmt"

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
	c := &comp{base: b, decide: randsrc.New(s), t: uint64(b.k) + 1, l: 1}
	if c.key, err = privacy.NewEnvelopeKey(cfg.Rand); err != nil {
		return nil, err
	}
	if c.env, err = privacy.NewEnvelope(c.key); err != nil {
		return nil, err
	}
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
	msg, err := decode(m)
	if err != nil {
		return err
	}
	b := msg.GetScores()
	if m.From != controllerParty || b == nil {
		return fmt.Errorf("%s sent comp something other than a batch of scores", m.From)
	}
	if b.T != c.t || int(b.L) != c.l || len(b.Boxes) != c.k {
		return fmt.Errorf("a batch of step %d iteration %d with %d scores, but comp is at step %d iteration %d of %d arms", b.T, b.L, len(b.Boxes), c.t, c.l, c.k)
	}
	v := make([]float64, c.k)
	for j, box := range b.Boxes {
		plain, err := c.env.Open(header(c.cfg.SessionID, c.t, c.l, RoleOwner, RoleComp), box)
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
		c.view(c.t, c.l, v, sel)
	}
	out := &sambapb.Batch{T: c.t, L: uint32(c.l), Boxes: make([][]byte, c.k)}
	for j := range c.k {
		bit := []byte{0}
		if j == sel {
			bit[0] = 1
		}
		if out.Boxes[j], err = c.env.Seal(c.cfg.Rand, header(c.cfg.SessionID, c.t, c.l, RoleComp, RoleOwner), bit); err != nil {
			return err
		}
		c.rep.AesOps++
	}
	c.send(controllerParty, &sambapb.Message{Kind: &sambapb.Message_Bits{Bits: out}})
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
