package mpc

import (
	"errors"
	"fmt"
)

// Dealer is the party index of the dealer's engine.
const Dealer = -1

// Payload is what one party sends every other party in a round: its masked
// arithmetic words and its masked binary words, in the order they were
// queued.
type Payload struct {
	Arith  []uint64
	Binary []uint64
}

// Stats counts a party's communication.
type Stats struct {
	Rounds    int   // exchanges among the computing parties
	WordsSent int64 // 64-bit words this party sent to each other party
}

// Engine is one participant's view of a computation on secret shares: the
// shares of a computing party, or — for the dealer — the masks. Every
// participant runs the same sequence of operations; each operation draws its
// correlated randomness from streams the dealer also holds, so the dealer can
// compute the one correction party 0 needs for every product of masks
// without seeing any data (CrypTen's trusted-third-party provider).
//
// Within a round, operations queue the values they open; Outgoing returns the
// round's payload, Complete takes the other parties' payloads and finishes
// the openings. An Engine is not safe for concurrent use.
type Engine struct {
	party   int
	parties int
	fx      Fixed
	own     *PRG   // a party's stream shared with the dealer
	all     []*PRG // the dealer's copy of every party's stream
	pairs   []*PRG // pairs[q]: a party's stream shared with party q

	corr    []uint64 // party 0: corrections to use; dealer: corrections made
	corrPos int

	outA, outB []uint64
	opens      []*Open
	stats      Stats
	err        error // the first failure of an operation
	sampler    *PRG  // the dealer's private samples

	termCache map[termKey][]term // fused products' terms by shape (fused.go)

	// The scratch words of the current step (Recycle): nil until the first
	// Recycle, when every operation allocates afresh.
	scratch   []uint64
	used      int      // words of scratch handed out since the last Recycle
	overflow  int      // words allocated afresh since then: scratch was too small
	recycling bool     // Recycle has been called
	corrSpare []uint64 // the dealer's last corrections (TakeCorrections), reused
}

// Recycle declares that nothing the engine returned before is in use any
// more — no slice, Open, Trunc, And, Many or Payload that its operations
// returned (Share and Public excepted: their results are the caller's) —
// and, on the dealer, no slice TakeCorrections returned. The engine then
// reuses that memory for the operations that follow: a protocol that runs
// the same computation every step (protocol/mpccb's learner) calls it at the
// start of each step, so that a step allocates next to nothing and a
// session's memory does not grow with its length. From the first call on,
// the engine keeps one block of scratch words sized by the largest step
// since the previous call; an engine that never calls it allocates every
// result afresh.
func (e *Engine) Recycle() {
	if need := e.used + e.overflow; e.overflow > 0 || need < len(e.scratch)/4 {
		e.scratch = make([]uint64, need+need/8)
	}
	e.used, e.overflow, e.recycling = 0, 0, true
	if e.party == Dealer && e.corr == nil {
		e.corr = e.corrSpare[:0]
	}
}

// alloc returns n zeroed words that live until the next Recycle.
func (e *Engine) alloc(n int) []uint64 {
	if e.used+n <= len(e.scratch) {
		s := e.scratch[e.used : e.used+n : e.used+n]
		clear(s)
		e.used += n
		return s
	}
	if e.recycling {
		e.overflow += n
	}
	return make([]uint64, n)
}

// grow returns buf with room for n more words, moving it into scratch
// words (alloc) when it needs more capacity.
func (e *Engine) grow(buf []uint64, n int) []uint64 {
	if cap(buf)-len(buf) >= n {
		return buf
	}
	nb := e.alloc(max(2*cap(buf), len(buf)+n, 64))[:len(buf)]
	copy(nb, buf)
	return nb
}

// Err returns the first failure of an operation, if any: a party 0 whose
// corrections ran out. Drivers check it after each round.
func (e *Engine) Err() error { return e.err }

// Config describes a computation's public setup.
type Config struct {
	Parties int  // computing parties, at least 2
	Frac    uint // fractional bits of the fixed-point encoding
}

// NewParty returns party's engine. dealerSeed is the seed it shares with the
// dealer; pairSeeds[q] the seed it shares with party q (ignored at q ==
// party).
func NewParty(cfg Config, party int, dealerSeed Seed, pairSeeds []Seed) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if party < 0 || party >= cfg.Parties {
		return nil, fmt.Errorf("mpc: party %d out of range [0, %d)", party, cfg.Parties)
	}
	if len(pairSeeds) != cfg.Parties {
		return nil, fmt.Errorf("mpc: %d pair seeds for %d parties", len(pairSeeds), cfg.Parties)
	}
	e := &Engine{party: party, parties: cfg.Parties, fx: Fixed{cfg.Frac}, own: NewPRG(dealerSeed),
		pairs: make([]*PRG, cfg.Parties)}
	for q, s := range pairSeeds {
		if q != party {
			e.pairs[q] = NewPRG(s)
		}
	}
	return e, nil
}

// NewDealer returns the dealer's engine; partySeeds[p] is the seed it shares
// with party p.
func NewDealer(cfg Config, partySeeds []Seed) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if len(partySeeds) != cfg.Parties {
		return nil, fmt.Errorf("mpc: %d dealer seeds for %d parties", len(partySeeds), cfg.Parties)
	}
	e := &Engine{party: Dealer, parties: cfg.Parties, fx: Fixed{cfg.Frac}, all: make([]*PRG, cfg.Parties)}
	for p, s := range partySeeds {
		e.all[p] = NewPRG(s)
	}
	return e, nil
}

func (c Config) check() error {
	if c.Parties < 2 {
		return fmt.Errorf("mpc: %d computing parties; at least 2 are needed", c.Parties)
	}
	if c.Frac == 0 || c.Frac > 30 {
		return fmt.Errorf("mpc: %d fractional bits; use 1 to 30", c.Frac)
	}
	return nil
}

// Party returns the engine's party index (Dealer for the dealer).
func (e *Engine) Party() int { return e.party }

// Parties returns the number of computing parties.
func (e *Engine) Parties() int { return e.parties }

// IsDealer reports whether e is the dealer's engine.
func (e *Engine) IsDealer() bool { return e.party == Dealer }

// Fixed returns the fixed-point encoding.
func (e *Engine) Fixed() Fixed { return e.fx }

// Stats returns the communication so far.
func (e *Engine) Stats() Stats { return e.stats }

// SetCorrections hands party 0 the dealer's corrections for the next
// operations (one batch per step, in order).
func (e *Engine) SetCorrections(c []uint64) {
	e.corr, e.corrPos = c, 0
}

// TakeUsedCorrections returns, on party 0, the batch SetCorrections handed
// it, and forgets it: the caller may reuse its words.
func (e *Engine) TakeUsedCorrections() []uint64 {
	c := e.corr
	e.corr, e.corrPos = nil, 0
	return c
}

// CorrectionsLeft returns how many words of the current batch party 0 has
// not used: after a step it must be zero, or the dealer and the parties
// disagree about the computation.
func (e *Engine) CorrectionsLeft() int { return len(e.corr) - e.corrPos }

// TakeCorrections returns the corrections the dealer made since the last
// call, for party 0. Once the engine recycles (Recycle), the slice is valid
// only until the next Recycle, which reuses it.
func (e *Engine) TakeCorrections() []uint64 {
	c := e.corr
	e.corr = nil
	if e.recycling && c != nil {
		e.corrSpare = c
	}
	return c
}

// errCorrections is the error of a party 0 that ran out of corrections.
var errCorrections = errors.New("mpc: the dealer's corrections ran out: the dealer and the parties disagree about the computation")

// draw fills dst with this party's next dealer-stream words; the dealer
// fills dst with the sum (or, bin, XOR) over parties and returns every
// party's draw.
func (e *Engine) draw(dst []uint64, bin bool) [][]uint64 {
	if e.party != Dealer {
		e.own.Fill(dst)
		return nil
	}
	each := make([][]uint64, e.parties)
	clear(dst)
	for p, g := range e.all {
		each[p] = e.alloc(len(dst))
		g.Fill(each[p])
		for i, v := range each[p] {
			if bin {
				dst[i] ^= v
			} else {
				dst[i] += v
			}
		}
	}
	return each
}

// dealt returns this party's share of n words whose value only the dealer
// knows: parties 1…P−1 draw their shares from their dealer streams, party 0
// takes the dealer's correction. On the dealer, value fills the values and
// the correction is recorded. Arithmetic shares sum to the value; binary
// shares (bin) XOR to it.
func (e *Engine) dealt(n int, bin bool, value func(dst []uint64)) []uint64 {
	out := e.alloc(n)
	switch {
	case e.party == Dealer:
		value(out)
		tmp := e.alloc(n)
		for p := 1; p < e.parties; p++ {
			e.all[p].Fill(tmp)
			for i, v := range tmp {
				if bin {
					out[i] ^= v
				} else {
					out[i] -= v
				}
			}
		}
		e.corr = append(e.corr, out...)
	case e.party == 0:
		if e.corrPos+n > len(e.corr) {
			if e.err == nil {
				e.err = errCorrections
			}
			return out
		}
		copy(out, e.corr[e.corrPos:e.corrPos+n])
		e.corrPos += n
	default:
		e.own.Fill(out)
	}
	return out
}

// Dealt returns this party's arithmetic share of n values the dealer draws
// with value (called on the dealer only): the private samples of a protocol.
func (e *Engine) Dealt(n int, value func(dst []uint64)) []uint64 { return e.dealt(n, false, value) }

// Open is a value being opened in the current round.
type Open struct {
	n    int
	bin  bool
	off  int
	mask []uint64 // this party's share of the mask; the dealer's: the mask
	// Value is, once the round completes, the opened value: x − mask (x ⊕
	// mask when binary), or x itself for a plain reveal. The dealer's is
	// zero: it sees no openings.
	Value []uint64
	// Shares holds, after a plain reveal, every party's share.
	Shares [][]uint64
	reveal bool
	done   bool
	// comps, when not nil, writes the mask as Σ coefficient·component
	// (fused.go): an opening whose mask the dealer knows only up to public
	// coefficients, such as a truncation's result (Trunc.Open). Nil is a
	// plain opening: one component, mask, with coefficient 1.
	comps []component
}

// Mask queues x − m for opening, with m a fresh mask from the dealer
// streams: after the round every party knows x − m and holds a share of m,
// which is what Beaver products need.
func (e *Engine) Mask(x []uint64) *Open {
	o := &Open{n: len(x), off: len(e.outA), mask: e.alloc(len(x))}
	e.draw(o.mask, false)
	e.outA = e.grow(e.outA, len(x))
	for i, v := range x {
		e.outA = append(e.outA, v-o.mask[i])
	}
	e.opens = append(e.opens, o)
	return o
}

// MaskBinary queues x ⊕ m for opening, with m a fresh binary mask.
func (e *Engine) MaskBinary(x []uint64) *Open {
	o := &Open{n: len(x), bin: true, off: len(e.outB), mask: e.alloc(len(x))}
	e.draw(o.mask, true)
	e.outB = e.grow(e.outB, len(x))
	for i, v := range x {
		e.outB = append(e.outB, v^o.mask[i])
	}
	e.opens = append(e.opens, o)
	return o
}

// Reveal queues the shares x for opening to every party.
func (e *Engine) Reveal(x []uint64) *Open {
	o := &Open{n: len(x), off: len(e.outA), reveal: true}
	e.outA = append(e.grow(e.outA, len(x)), x...)
	e.opens = append(e.opens, o)
	return o
}

// RevealBinary queues the binary shares x for opening to every party.
func (e *Engine) RevealBinary(x []uint64) *Open {
	o := &Open{n: len(x), bin: true, off: len(e.outB), reveal: true}
	e.outB = append(e.grow(e.outB, len(x)), x...)
	e.opens = append(e.opens, o)
	return o
}

// Pending reports whether the current round has anything to open.
func (e *Engine) Pending() bool { return len(e.opens) > 0 }

// Outgoing returns the current round's payload, to be sent to every other
// party.
func (e *Engine) Outgoing() Payload { return Payload{Arith: e.outA, Binary: e.outB} }

// Complete finishes the round with the payloads of the other parties
// (in[p] from party p; in[e.Party()] is ignored). The dealer passes nil.
func (e *Engine) Complete(in []Payload) error {
	if e.party != Dealer {
		if len(in) != e.parties {
			return fmt.Errorf("mpc: %d payloads for %d parties", len(in), e.parties)
		}
		for p, pl := range in {
			if p == e.party {
				continue
			}
			if len(pl.Arith) != len(e.outA) || len(pl.Binary) != len(e.outB) {
				return fmt.Errorf("mpc: party %d opened %d+%d words in this round, party %d %d+%d: the parties are out of step",
					p, len(pl.Arith), len(pl.Binary), e.party, len(e.outA), len(e.outB))
			}
		}
		e.stats.Rounds++
		e.stats.WordsSent += int64(len(e.outA) + len(e.outB))
	}
	for _, o := range e.opens {
		src := e.outA
		if o.bin {
			src = e.outB
		}
		o.Value = e.alloc(o.n)
		if e.party != Dealer {
			copy(o.Value, src[o.off:o.off+o.n])
			if o.reveal {
				o.Shares = make([][]uint64, e.parties)
				o.Shares[e.party] = src[o.off : o.off+o.n]
			}
			for p, pl := range in {
				if p == e.party {
					continue
				}
				theirs := pl.Arith
				if o.bin {
					theirs = pl.Binary
				}
				theirs = theirs[o.off : o.off+o.n]
				if o.reveal {
					o.Shares[p] = theirs
				}
				for i, v := range theirs {
					if o.bin {
						o.Value[i] ^= v
					} else {
						o.Value[i] += v
					}
				}
			}
		} else if o.reveal {
			o.Shares = make([][]uint64, e.parties)
			for p := range o.Shares {
				o.Shares[p] = e.alloc(o.n)
			}
		}
		o.done = true
	}
	clear(e.opens)
	e.outA, e.outB, e.opens = nil, nil, e.opens[:0]
	return nil
}

// Share returns this party's share of the values x that owner contributes
// (x is read on the owner only): a zero sharing from the pairwise streams
// plus x at the owner, so sharing an input needs no communication. The
// dealer takes no part and gets zeros.
func (e *Engine) Share(owner int, x []uint64, n int) []uint64 {
	out := make([]uint64, n)
	if e.party == Dealer {
		return out
	}
	tmp := make([]uint64, n)
	for q, g := range e.pairs {
		if g == nil {
			continue
		}
		g.Fill(tmp)
		for i, v := range tmp {
			if e.party < q {
				out[i] += v
			} else {
				out[i] -= v
			}
		}
	}
	if e.party == owner {
		for i := range out {
			out[i] += x[i]
		}
	}
	return out
}

// Public returns this party's share of the public values x: party 0 holds
// them, the others zero.
func (e *Engine) Public(x []uint64) []uint64 {
	out := make([]uint64, len(x))
	if e.party == 0 {
		copy(out, x)
	}
	return out
}

// PublicBinary is Public for binary shares.
func (e *Engine) PublicBinary(x []uint64) []uint64 { return e.Public(x) }
