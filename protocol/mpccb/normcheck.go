package mpccb

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// The joint range check. The engine needs every whole context to have norm
// at most 1 (learner.step), but each feature party holds only its columns
// x_{t,p}, and parts of norm at most 1 each can add up to a context of norm
// √P. Before step 1 the feature parties therefore compute in MPC, for every
// step t of the session, the bit b_t = [‖x_t‖² > 1 + slack], open the bits
// to one another, and refuse the session if one is set.
//
// ‖x_t‖² = Σ_p ‖x_{t,p}‖², so party p's own q_{t,p} = ⌊‖x_{t,p}‖²·2^F⌋ is,
// as it stands, its share of an additive sharing of s_t = Σ_p q_{t,p} (no
// sharing round is needed: party p's share is a binary input that it alone
// holds, as in mpc.Engine.MSB). The q are small non-negative integers, so
// the comparison runs on bit-sliced binary shares — 64 steps a word — rather
// than on one 64-bit word per step: party 0 adds the public
// K = 2^k − (c+1), with c = 2^F + checkSlack and P·2^F < 2^k, so bit k of
// z_t = K + Σ_p q_{t,p} < 2^(k+1) is b_t = [s_t > c]. Carry-save adders (one
// AND round per level: 3 numbers in, 2 out) reduce the P numbers to two; a
// ripple-carry adder (one AND round per bit) gives the carry into bit k; one
// more round reveals the bits. Each party's share of a bit holds the
// share of an AND output that its dealer stream made uniform, so the
// revealed shares tell no more than the bits.
const (
	// checkFrac is F, the fractional bits of the check's q_{t,p}.
	checkFrac = 20
	// checkSlack is the slack of the check, in units of 2^-F: a context
	// is refused when Σ_p ⌊‖x_{t,p}‖²·2^F⌋ > 2^F + checkSlack. Each floor
	// only lowers the sum, so a context with ‖x_t‖² ≤ 1 + 2^-20 (≈ 1 + 10^-6)
	// is always accepted — a unit-norm row written to CSV with strconv's
	// shortest round-trip format is off by about D·10^-16, and the per-party
	// bound maxNorm lets each part be 10^-9 long — while one with
	// ‖x_t‖² > 1 + (P+1)·2^-20 is always refused (the floors lose less than
	// P units). The engine's bounds have that room: the reciprocal's initial
	// guess on [1, 2] stays within 1/17 + 10^-3 for d ≤ 2 + (P+1)·2^-20 with
	// P ≤ 256, and the products have a factor two of room (learner.step).
	checkSlack = 1
)

// normShape is what the joint range check puts on the wire, once per
// session; like a step's, it depends on the parameters and the number of
// feature parties only.
type normShape struct {
	rounds      int // exchanges among the feature parties
	maxRound    int // words one party sends another in the largest round
	words       int // words one party sends another in all
	corrections int // correction words the dealer sends party 0
}

// checkPlan returns the check's bit position k, its planes w = k+1 and the
// words a chunk's plane holds: the steps are processed 64 to a word, in
// chunks small enough that every round fits frame words.
func checkPlan(steps int64, parties, frame int) (k, w, chunkWords, words int) {
	k = checkFrac + bits.Len(uint(parties))
	w = k + 1
	words = int((steps + 63) / 64)
	widest := 2 // words a chunk's word costs in the widest round: the ripple's
	if parties > 2 {
		widest = 2 * (parties / 3) * w // the first carry-save level's
	}
	chunkWords = max(1, min(words, frame/widest))
	return k, w, chunkWords, words
}

// measureCheck returns the check's shape without running it, for rounds of
// at most frame words.
func measureCheck(steps int64, parties, frame int) normShape {
	_, w, cw, words := checkPlan(steps, parties, frame)
	k := w - 1
	var s normShape
	for done := 0; done < words; done += cw {
		n := min(cw, words-done)
		for m := parties; m > 2; {
			t := m / 3
			s.rounds++
			s.maxRound = max(s.maxRound, 2*t*w*n)
			s.words += 2 * t * w * n
			s.corrections += t * w * n
			m = 2*t + m%3
		}
		s.rounds += k + 1 // the ripple's carries, the reveal
		s.maxRound = max(s.maxRound, 2*n)
		s.words += 2*k*n + n
		s.corrections += k * n
	}
	return s
}

// checkShare returns party p's q_{t,p} = ⌊‖x_{t,p}‖²·2^F⌋ for a part the
// per-party bound (maxNorm) has accepted; the cap at 2^F + 1, which that
// bound never reaches, keeps the sum within k bits.
func checkShare(row []float64) uint64 {
	var s float64
	for _, v := range row {
		s += v * v
	}
	return min(uint64(math.Floor(math.Ldexp(s, checkFrac))), 1<<checkFrac+1)
}

// normCheck returns the Program of the joint range check on e, in rounds of
// at most frame words (maxMessageWords but in tests). q holds
// this party's q_{t,p} for every step (nil on the dealer, which runs the
// same program on zeros to keep its draws in step); *out receives, once the
// program ends, b_t for every step (zeros on the dealer).
func normCheck(e *mpc.Engine, steps int64, q []uint64, out *[]bool, frame int) *mpc.Program {
	P := e.Parties()
	k, w, cw, words := checkPlan(steps, P, frame)
	c := uint64(1)<<checkFrac + checkSlack
	K := uint64(1)<<k - (c + 1)
	*out = make([]bool, steps)

	// The state of the chunk under way.
	var (
		start   int        // its first word
		n       int        // its words
		inputs  [][]uint64 // numbers of w planes of n words
		triples [][3][]uint64
		rest    [][]uint64
		csa     *mpc.And
		carry   []uint64 // carry into plane i of the ripple
		plane   int      // the ripple's next carry: into plane plane+1
		and     *mpc.And
		reveal  *mpc.Open
	)
	load := func() {
		n = min(cw, words-start)
		inputs = make([][]uint64, P)
		for p := range inputs {
			inputs[p] = make([]uint64, w*n)
		}
		if !e.IsDealer() {
			me := inputs[e.Party()]
			for j := range 64 * n {
				t := int64(64*start + j)
				var y uint64
				if t < steps {
					y = q[t]
				}
				if e.Party() == 0 {
					y += K
				}
				for i := range w {
					me[i*n+j/64] |= (y >> i & 1) << (j % 64)
				}
			}
		}
		carry, plane, and, csa, reveal = nil, 0, nil, nil, nil
	}
	planeOf := func(x []uint64, i int) []uint64 { return x[i*n : (i+1)*n] }
	// chunk advances the chunk under way to its next opening, or ends it:
	// more is set when a next chunk must begin in this round.
	chunk := func() (done, more bool) {
		if inputs == nil {
			load()
		}
		// Carry-save levels: one round each, until two numbers are left.
		if csa != nil {
			maj := e.AndResult(csa)
			csa = nil
			next := make([][]uint64, 0, len(inputs))
			for j, t := range triples {
				m := mpc.Xor(maj[j*w*n:(j+1)*w*n], t[2])
				sum := mpc.Xor(mpc.Xor(t[0], t[1]), t[2])
				cr := make([]uint64, w*n)
				copy(cr[n:], m[:(w-1)*n]) // the carries, one plane up
				next = append(next, sum, cr)
			}
			inputs = append(next, rest...)
		}
		if len(inputs) > 2 {
			triples, rest = nil, nil
			var xs, ys []uint64
			i := 0
			for ; i+3 <= len(inputs); i += 3 {
				a, b, cc := inputs[i], inputs[i+1], inputs[i+2]
				triples = append(triples, [3][]uint64{a, b, cc})
				xs = append(xs, mpc.Xor(a, cc)...)
				ys = append(ys, mpc.Xor(b, cc)...)
			}
			rest = inputs[i:]
			csa = e.AndStart(xs, ys)
			return false, false
		}
		A, B := inputs[0], inputs[1]
		// The ripple: carry_1 = A_0 B_0; carry_{i+1} = maj(A_i, B_i, carry_i)
		// = ((A_i ⊕ carry_i)(B_i ⊕ carry_i)) ⊕ carry_i.
		if and != nil {
			res := e.AndResult(and)
			and = nil
			if carry != nil {
				res = mpc.Xor(res, carry)
			}
			carry = res
			plane++
		}
		if plane < k {
			a, b := planeOf(A, plane), planeOf(B, plane)
			if carry != nil {
				a, b = mpc.Xor(a, carry), mpc.Xor(b, carry)
			}
			and = e.AndStart(a, b)
			return false, false
		}
		if reveal == nil {
			reveal = e.RevealBinary(mpc.Xor(mpc.Xor(planeOf(A, k), planeOf(B, k)), carry))
			return false, false
		}
		for j := range 64 * n {
			t := int64(64*start + j)
			if t < steps {
				(*out)[t] = reveal.Value[j/64]>>(j%64)&1 == 1
			}
		}
		start += n
		inputs = nil
		return start >= words, start < words
	}
	step := func() bool {
		for {
			if done, more := chunk(); !more {
				return done
			}
		}
	}
	g := e.NewProgram()
	g.Go(e.NewProc(step))
	return g
}

// firstOutOfRange returns the first step whose bit is set, 0 if none.
func firstOutOfRange(b []bool) int64 {
	for t, v := range b {
		if v {
			return int64(t) + 1
		}
	}
	return 0
}

// errJointNorm is the refusal of a session whose context of step t has a
// joint norm above 1.
func errJointNorm(t int64) error {
	return fmt.Errorf("mpccb: context of step %d (each feature party's answer to its context query of step %d; row %d of a features or replayed file) has a joint norm above 1 across the feature parties (each party's part is within 1); scale each context to unit norm before splitting it", t, t-1, t)
}
