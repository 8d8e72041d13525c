package mpccb

import (
	"io"
	"math"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// samples are the dealer's private samples of one step (Algorithm 1, lines 8
// and 12, and the argmax's tie-breaker): y ~ Bernoulli(ε), v_a ~ U[0, 1) on
// the fixed-point grid, γ a uniform permutation of the arms.
type samples struct {
	y     uint64   // 0 or 1, an integer
	v     []uint64 // fixed point
	gamma []uint64 // integers
}

// drawSamples draws one step's samples from g. The dealer draws them inside
// the computation; the plaintext reference draws the same ones from the same
// stream, which is how the two can be compared step by step.
func drawSamples(g *mpc.PRG, arms int, eps float64, frac uint) samples {
	s := samples{v: make([]uint64, arms)}
	if float64(g.Uint64()>>11)/(1<<53) < eps {
		s.y = 1
	}
	for a := range s.v {
		s.v[a] = g.Uint64() >> (64 - frac)
	}
	s.gamma = mpc.Permutation(g, arms)
	return s
}

// pack lays the samples out as one vector: y, v, γ.
func (s samples) pack() []uint64 {
	out := append([]uint64{s.y}, s.v...)
	return append(out, s.gamma...)
}

// dealerSeeds draws, from the dealer's randomness, the seed of every feature
// party's dealer stream and the seed of the dealer's samples — in this order,
// which the simulator's grader relies on to replay the samples.
func dealerSeeds(r io.Reader, parties int) ([]mpc.Seed, mpc.Seed, error) {
	seeds := make([]mpc.Seed, parties)
	for p := range seeds {
		if _, err := io.ReadFull(r, seeds[p][:]); err != nil {
			return nil, mpc.Seed{}, err
		}
	}
	var sampler mpc.Seed
	if _, err := io.ReadFull(r, sampler[:]); err != nil {
		return nil, mpc.Seed{}, err
	}
	return seeds, sampler, nil
}

// maxNorm is the largest norm a feature party accepts for its part of a
// context: 1, and room for the rounding of a unit-norm row written to CSV.
//
// The engine needs ‖x‖ ≤ 1 for the whole context (the Sherman–Morrison
// denominator 1 + xᵀW⁻¹x must lie in [1, 2] for the reciprocal, and the
// products must stay within the fixed-point range; see learner.step). A
// party sees only its columns, so it checks ‖x_p‖ ≤ 1, which every context
// of norm at most 1 satisfies: a file that was not normalised — raw pixel
// values, unscaled projections — is refused before the session starts
// instead of running to completion at chance-level reward, with a message
// naming the file and the row. That the parts add up to at most 1 is the
// joint range check's (normcheck.go), which runs before step 1.
const maxNorm = 1 + 1e-9

// norm returns the Euclidean norm of xs.
func norm(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x * x
	}
	return math.Sqrt(s)
}

// isFinite reports whether every value is finite.
func isFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// explore fills z with the one-hot of the arm ε-greedy explores when y = 1:
// the largest v_a, ties broken by the largest γ_a — the argmax of the keys
// v_a·2^b + γ_a that the private argmax would compare, and the reference's
// rule. The dealer computes it in the clear (it drew the samples) and deals
// it to the private argmax (mpc.ArgMaxOr).
func (s samples) explore(z []uint64) {
	best := 0
	for a := range s.v {
		if s.v[a] > s.v[best] || (s.v[a] == s.v[best] && s.gamma[a] > s.gamma[best]) {
			best = a
		}
	}
	clear(z)
	z[best] = 1
}
