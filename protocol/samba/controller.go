package samba

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
)

// controller is the Controller (Figure 6(b)): it sees nothing but
// ciphertexts. It draws seed_α and seed_ε for the data owners, gathers each
// step's K sealed scores, forwards them to comp under a fresh uniformly random
// permutation σ_t, routes comp's sealed bits back through σ_t⁻¹ (in a batch
// of an algorithm decided by the state, every step's through the batch's
// one σ), and at the
// end multiplies the data owners' Paillier ciphertexts into E(Σ s_i) for the
// data customer.
type controller struct {
	base
	perm *rand.Rand
	pk   *privacy.PublicKey
	// t is the first step of the current batch (the step, when
	// params.batch = 1), n its number of steps, m its lists (batchShape:
	// n, or 1 for an algorithm decided by the state alone), l the
	// iteration; once the scores are out, j is the batch's step whose
	// bits come next (comp returns bits a step, n lists of them, whatever
	// m).
	t     uint64
	n, m  int
	l     int
	j     int
	boxes [][]byte // the batch's scores of each data owner, m envelopes end to end; storage reused
	have  []bool   // which data owners' scores are in boxes
	got   int
	sigma []int // σ_t of each list of the batch, K entries each; storage reused
	// out holds each data owner's bits of the batch, n envelopes end to
	// end, until the last step's are in (params.batch > 1).
	out         [][]byte
	in          inbound
	sums        []bool
	nsums       int
	pendingSums [][]byte
	inStep      bool
	// firstScore is when the first score arrived (daemon only): the steps'
	// wall time, reported as StepsNs, runs from it to the last bits.
	firstScore time.Time
}

func newController(cfg protocol.RoleConfig, p Params) (*controller, error) {
	b, err := newBase(cfg, p)
	if err != nil {
		return nil, err
	}
	s, err := stream(cfg.Rand)
	if err != nil {
		return nil, err
	}
	c := &controller{base: b, perm: rand.New(s), t: uint64(b.k) + 1, l: 1, boxes: make([][]byte, b.k), have: make([]bool, b.k),
		sigma: make([]int, b.k*maxBatchSize(b.p)), sums: make([]bool, b.k)}
	if c.t <= uint64(b.p.Budget) {
		c.n, c.m = batchShape(b.p, b.alg, b.k, c.t)
	}
	if b.p.batched() {
		c.out = make([][]byte, b.k)
	}
	return c, nil
}

// Start sends the data owners seed_α and seed_ε (Step 1).
func (c *controller) Start() error {
	seedAlpha := make([]byte, 32)
	if _, err := c.cfg.Rand.Read(seedAlpha); err != nil {
		return fmt.Errorf("drawing seed_α: %w", err)
	}
	seedEps := make([]byte, 32)
	for i := range seedEps {
		seedEps[i] = byte(c.perm.Uint32())
	}
	for i := range c.k {
		c.send(protocol.Party{Role: RoleOwner, Index: i}, &sambapb.Message{Kind: &sambapb.Message_Seeds{Seeds: &sambapb.Seeds{Alpha: seedAlpha, Epsilon: seedEps}}})
	}
	return nil
}

// Step handles scores, bits, sums and the public key.
func (c *controller) Step(m protocol.Message) error {
	return c.timed(func() error { return c.step(m) })
}

func (c *controller) step(m protocol.Message) error {
	owner := m.From.Role == RoleOwner && m.From.Index >= 0 && m.From.Index < c.k
	if c.in.decodeStep(m) {
		switch {
		case c.in.field == fieldScore && owner:
			return c.stepScore(m.From.Index, c.in.t, c.in.l, c.in.box)
		case c.in.field == fieldOwnerScores && owner:
			return c.stepScores(m.From.Index, c.in.t, c.in.l, c.in.boxes)
		case c.in.field == fieldBits && m.From == compParty:
			return c.stepBits(c.in.t, c.in.l, c.in.boxes)
		}
	}
	msg, err := decode(m)
	if err != nil {
		return err
	}
	switch k := msg.Kind.(type) {
	case *sambapb.Message_PublicKey:
		if m.From != customerParty || c.pk != nil {
			return fmt.Errorf("a public key from %s", m.From)
		}
		if c.pk, err = c.publicKey(k.PublicKey.N); err != nil {
			return err
		}
		return c.maybeTotal()
	case *sambapb.Message_Score:
		if !owner {
			return fmt.Errorf("a score from %s", m.From)
		}
		return c.stepScore(m.From.Index, k.Score.T, k.Score.L, k.Score.Box)
	case *sambapb.Message_OwnerScores:
		if !owner {
			return fmt.Errorf("scores from %s", m.From)
		}
		return c.stepScores(m.From.Index, k.OwnerScores.T, k.OwnerScores.L, k.OwnerScores.Boxes)
	case *sambapb.Message_Bits:
		if m.From != compParty {
			return fmt.Errorf("bits from %s", m.From)
		}
		return c.stepBits(k.Bits.T, k.Bits.L, k.Bits.Boxes)
	case *sambapb.Message_Sum:
		if !owner || c.t <= uint64(c.p.Budget) || c.sums[m.From.Index] {
			return fmt.Errorf("an unexpected sum from %s", m.From)
		}
		// A ciphertext is below N², of 2 × paillier_bits bits: the K held
		// until the public key is in take at most that each.
		if len(k.Sum.C) > c.p.PaillierBits/4 {
			return fmt.Errorf("the encrypted sum from %s has %d bytes, more than a %d-bit key's ciphertext", m.From, len(k.Sum.C), c.p.PaillierBits)
		}
		c.sums[m.From.Index] = true
		c.nsums++
		c.pendingSums = append(c.pendingSums, k.Sum.C)
		return c.maybeTotal()
	}
	return fmt.Errorf("%s sent the controller a message it never takes", m.From)
}

// stepScore takes a data owner's score of step t, iteration l
// (params.batch = 1).
func (c *controller) stepScore(i int, t uint64, l uint32, box []byte) error {
	if c.p.batched() {
		return fmt.Errorf("a single score from data_owner[%d] in a batched session (params.batch = %d)", i, c.p.Batch)
	}
	if err := c.checkScores(i, t, l, 1); err != nil {
		return err
	}
	// The controller holds one score per data owner, each exactly the
	// envelope of an 8-byte float, until the step's last one is in.
	if len(box) != scoreBoxSize {
		return fmt.Errorf("a score of %d bytes from data_owner[%d] at step %d iteration %d, want %d (a sealed 8-byte score)", len(box), i, t, l, scoreBoxSize)
	}
	c.boxes[i] = append(c.boxes[i][:0], box...)
	return c.gotScores(i)
}

// stepScores takes a data owner's scores of the batch that starts at step
// t, iteration l (params.batch > 1).
func (c *controller) stepScores(i int, t uint64, l uint32, boxes [][]byte) error {
	if !c.p.batched() {
		return fmt.Errorf("the scores of a batch from data_owner[%d] in a session of one step a round (params.batch = 1)", i)
	}
	if err := c.checkScores(i, t, l, len(boxes)); err != nil {
		return err
	}
	// The controller holds n scores per data owner, each exactly the
	// envelope of an 8-byte float, until the batch's last ones are in.
	for j, box := range boxes {
		if len(box) != scoreBoxSize {
			return fmt.Errorf("score %d of %d bytes from data_owner[%d] in the batch at step %d iteration %d, want %d (a sealed 8-byte score)", j, len(box), i, t, l, scoreBoxSize)
		}
	}
	c.boxes[i] = c.boxes[i][:0]
	for _, box := range boxes {
		c.boxes[i] = append(c.boxes[i], box...)
	}
	return c.gotScores(i)
}

func (c *controller) checkScores(i int, t uint64, l uint32, n int) error {
	if t != c.t || int(l) != c.l || c.have[i] || c.inStep || n != c.m {
		if !c.p.batched() {
			return fmt.Errorf("a score of step %d iteration %d from data_owner[%d], but the controller is at step %d iteration %d", t, l, i, c.t, c.l)
		}
		return fmt.Errorf("%d scores of the batch at step %d iteration %d from data_owner[%d], but the controller is at the batch of %d steps (%d lists) at step %d iteration %d", n, t, l, i, c.n, c.m, c.t, c.l)
	}
	return nil
}

// gotScores notes data owner i's scores, and once every data owner's are
// in, sends comp each list of the batch under a fresh permutation (Step 3):
// one a step, or one for the batch (batchShape).
func (c *controller) gotScores(i int) error {
	if !c.cfg.Simulated && c.firstScore.IsZero() {
		c.firstScore = c.cfg.Clock.Now()
	}
	c.have[i] = true
	c.got++
	if c.got < c.k {
		return nil
	}
	for j := range c.m {
		t := c.t + uint64(j)
		// A fresh uniformly random permutation σ_t for every step
		// (rand.Perm's draws, into the storage of the last one).
		sigma := c.sigma[j*c.k : (j+1)*c.k]
		for x := range sigma {
			sigma[x] = x
		}
		c.perm.Shuffle(c.k, func(a, b int) { sigma[a], sigma[b] = sigma[b], sigma[a] })
		size := stepHeadSize(t, uint32(c.l)) + c.k*boxFieldSize(scoreBoxSize)
		buf := c.body(batchMessageSize(fieldScores, size))
		if buf == nil {
			buf = make([]byte, 0, batchMessageSize(fieldScores, size))
		}
		body := appendBatchHead(buf, fieldScores, size, t, uint32(c.l))
		for _, i := range sigma {
			body = append(appendBoxHead(body, scoreBoxSize), c.boxes[i][j*scoreBoxSize:(j+1)*scoreBoxSize]...)
		}
		c.sendBody(compParty, body)
	}
	clear(c.have)
	c.got = 0
	c.j = 0
	c.inStep = true
	return nil
}

// stepBits takes comp's bits of the batch's step c.t+c.j (Step 4) and
// routes them through σ_t⁻¹ (Step 5) — the σ of the step's list, or of the
// batch's one list (m = 1) — at once when params.batch = 1, after the
// batch's last step's otherwise, each data owner's n bits in one message.
func (c *controller) stepBits(t uint64, l uint32, boxes [][]byte) error {
	if !c.inStep || t != c.t+uint64(c.j) || int(l) != c.l || len(boxes) != c.k {
		return fmt.Errorf("bits of step %d iteration %d (%d of them), but the controller waits for step %d iteration %d", t, l, len(boxes), c.t+uint64(c.j), c.l)
	}
	for j, box := range boxes {
		if len(box) != bitBoxSize {
			return fmt.Errorf("bit %d of step %d iteration %d has %d bytes, want %d (a sealed bit)", j, t, l, len(box), bitBoxSize)
		}
	}
	list := min(c.j, c.m-1)
	sigma := c.sigma[list*c.k : (list+1)*c.k]
	if c.p.batched() {
		if c.j == 0 {
			for i := range c.out {
				c.out[i] = c.out[i][:0]
			}
		}
		for x, i := range sigma {
			c.out[i] = append(c.out[i], boxes[x]...)
		}
		if c.j++; c.j < c.n {
			return nil
		}
		field := boxFieldSize(bitBoxSize)
		size := stepHeadSize(c.t, uint32(c.l)) + c.n*field
		c.Grow(c.k)
		for i, bits := range c.out {
			body := appendBatchHead(make([]byte, 0, batchMessageSize(fieldOwnerBits, size)), fieldOwnerBits, size, c.t, uint32(c.l))
			for j := range c.n {
				body = append(appendBoxHead(body, bitBoxSize), bits[j*bitBoxSize:(j+1)*bitBoxSize]...)
			}
			c.sendBody(protocol.Party{Role: RoleOwner, Index: i}, body)
		}
	} else {
		// Each message in a body handed back (drive.Recycler), or else
		// the K cut from one allocation, each capped so that none can grow
		// into the next.
		var slab []byte
		c.Grow(c.k)
		for j, i := range sigma {
			n := sealedMessageSize(fieldBit, c.t, uint32(c.l), len(boxes[j]))
			buf := c.body(n)
			if buf == nil {
				if cap(slab)-len(slab) < n {
					size := 0
					for _, box := range boxes[j:] {
						size += sealedMessageSize(fieldBit, c.t, uint32(c.l), len(box))
					}
					slab = make([]byte, 0, size)
				}
				buf = slab[len(slab) : len(slab) : len(slab)+n]
				slab = slab[:len(slab)+n]
			}
			c.sendBody(protocol.Party{Role: RoleOwner, Index: i}, appendSealedMessage(buf, fieldBit, c.t, uint32(c.l), boxes[j]))
		}
	}
	c.inStep = false
	if c.l < c.alg.Iterations() {
		c.l++
		return nil
	}
	before := int64(c.t) - 1
	c.t, c.l = c.t+uint64(c.n), 1
	if done := int64(c.t) - 1; done/256 != before/256 || done == c.p.Budget {
		c.SetProgress(protocol.Progress{Step: done, Total: c.p.Budget, Activity: done})
		if done == c.p.Budget && !c.cfg.Simulated {
			c.rep.StepsNs = c.cfg.Clock.Now().Sub(c.firstScore).Nanoseconds()
		}
	}
	if c.t <= uint64(c.p.Budget) {
		c.n, c.m = batchShape(c.p, c.alg, c.k, c.t)
	}
	return nil
}

// maybeTotal multiplies the data owners' E(s_i) once all are in (Step 7).
func (c *controller) maybeTotal() error {
	if c.pk == nil || c.nsums < c.k || c.finished {
		return nil
	}
	var total *privacy.Ciphertext
	for _, raw := range c.pendingSums {
		ct, err := c.pk.ParseCiphertext(raw)
		if err != nil {
			return fmt.Errorf("a data owner's encrypted sum: %w", err)
		}
		if total == nil {
			total = ct
		} else {
			total = c.pk.Add(total, ct)
			c.rep.PaillierOps++
		}
	}
	c.send(customerParty, &sambapb.Message{Kind: &sambapb.Message_Total{Total: &sambapb.Paillier{C: total.Bytes(c.pk)}}})
	c.finish(nil)
	return nil
}
