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

	t     uint64
	l     int
	pulls []uint64

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
	d := &dataOwner{base: b, i: cfg.Self.Index, arm: [1]int{cfg.Self.Index}, plain: make([]byte, 0, 16), nonces: bufio.NewReaderSize(cfg.Rand, nonceBuffer)}
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
	d.t, d.l = d.t+1, 1
	return d.next()
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
	if d.in.decodeStep(m) && d.in.field == fieldBit {
		if m.From != controllerParty {
			return fmt.Errorf("a bit from %s", m.From)
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
	default:
		return fmt.Errorf("%s sent a data owner a message it never takes", m.From)
	}
	return d.maybeStart()
}

// next sends the score of (t, l), or, past the budget, E(s_i).
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
		// The first step of a new key epoch: the bit of this step will
		// come sealed in it too.
		var err error
		if d.sealCh, d.openCh, err = channels(d.key, d.cfg.SessionID, e); err != nil {
			return err
		}
		d.epoch = e
	}
	d.sc.T, d.sc.L = int64(d.t), d.l
	if d.coin {
		d.sc.Coin = coinFor(d.eps, d.t)
	}
	v := maskFor(d.alpha, d.t, d.l, d.alg.Matching(d.l)).apply(d.alg.ComputeScore(&d.sc))
	putFloat(&d.score, v)
	n := sealedBoxSize(len(d.score))
	body := appendSealedHead(d.bodies.cut(sealedMessageSize(fieldScore, d.t, uint32(d.l), n), bodyChunk), fieldScore, d.t, uint32(d.l), n)
	body, err := d.sealCh.AppendSeal(body, d.nonces, d.t, uint32(d.l), d.score[:])
	if err != nil {
		return err
	}
	d.rep.AesOps++
	d.sendBody(controllerParty, body)
	return nil
}

func (d *dataOwner) stepBit(t uint64, l uint32, box []byte) error {
	if !d.started || d.asked != 0 || t != d.t || int(l) != d.l {
		return fmt.Errorf("a bit for step %d iteration %d, but this data owner is at step %d iteration %d", t, l, d.t, d.l)
	}
	plain, err := d.openCh.AppendOpen(d.plain[:0], d.t, uint32(d.l), box)
	if err != nil {
		return fmt.Errorf("the bit of step %d iteration %d does not open: %w", d.t, d.l, err)
	}
	d.rep.AesOps++
	if len(plain) != 1 || plain[0] > 1 {
		return fmt.Errorf("the bit of step %d iteration %d is not a bit", d.t, d.l)
	}
	bit := plain[0] == 1
	if d.l < d.alg.Iterations() {
		d.alg.AfterIteration(d.l, bit, &d.sc)
		d.l++
		return d.next()
	}
	if bit {
		d.pull(d.t) // Answer goes on to the next step
		return nil
	}
	d.t, d.l = d.t+1, 1
	return d.next()
}

// OwnerOutcome is what a data owner keeps of a session: its own arm's sum of
// rewards and number of pulls.
type OwnerOutcome struct {
	Sum   int64 `json:"sum_of_rewards"`
	Pulls int64 `json:"pulls"`
}
