package samba

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Algorithm is a bandit algorithm as SAMBA runs it (Theorem 1): in each of
// its nb_A iterations per step, every data owner computes its arm's score
// from its own variables (ComputeScore), and comp selects a position from
// the permuted, masked scores (SelectArm). Adding an algorithm is one new
// file implementing it, plus its line in Algorithms.
type Algorithm interface {
	// Name is the algorithm's name in params.algorithm.
	Name() string
	// Iterations is nb_A.
	Iterations() int
	// Matching reports whether iteration l (from 1) selects by probability
	// matching; otherwise it takes an argmax.
	Matching(l int) bool
	// ComputeScore is a data owner's score at step c.T, iteration c.L.
	ComputeScore(c *ScoreContext) float64
	// AfterIteration lets a data owner update its state with its bit of an
	// iteration before the last (Pursuit's probabilities).
	AfterIteration(l int, bit bool, c *ScoreContext)
}

// ScoreContext is what a data owner knows when it computes a score: its own
// variables and nothing of the other arms.
type ScoreContext struct {
	// T is the step of the score — in a batched session the batch's first
	// step for every score of the batch (batch.go) — and K the number of
	// arms.
	T, K   int64
	L      int
	S, N   int64           // sum of rewards and pulls of this arm
	P      float64         // Pursuit's probability of this arm
	Coin   float64         // ε-greedy's shared coin of step T, in [0, 1); set only for an algorithm that embeds sharedCoin
	Params Params          // the public parameters
	Rand   *randsrc.Source // the data owner's own randomness (Thompson)
}

// Algorithms lists the algorithms SAMBA knows.
func Algorithms() []Algorithm {
	return []Algorithm{epsilonGreedy{}, epsilonDecreasing{}, ucb{}, thompson{}, softmax{}, pursuit{}}
}

// AlgorithmByName returns the algorithm called name, or an error listing them.
func AlgorithmByName(name string) (Algorithm, error) {
	var names []string
	for _, a := range Algorithms() {
		if a.Name() == name {
			return a, nil
		}
		names = append(names, a.Name())
	}
	sort.Strings(names)
	return nil, fmt.Errorf("params.algorithm: %q is not one of %s", name, strings.Join(names, ", "))
}

// SelectArm is comp's selection of a position among the scores of an
// iteration (already permuted and masked): for an argmax the first position
// holding the largest score — ties are broken by the permutation, which is
// what breaks them in the standard algorithm too (Theorem 2) — and for a
// probability matching the position where u·Σv falls in the running sum.
func SelectArm(matching bool, v []float64, u float64) int {
	if !matching {
		best := 0
		for j := 1; j < len(v); j++ {
			if v[j] > v[best] {
				best = j
			}
		}
		return best
	}
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	target := u * sum
	acc := 0.0
	for j, x := range v {
		acc += x
		if target < acc {
			return j
		}
	}
	return len(v) - 1
}

func mean(c *ScoreContext) float64 { return float64(c.S) / float64(c.N) }

// noUpdate is the AfterIteration of single-iteration algorithms.
type noUpdate struct{}

func (noUpdate) AfterIteration(int, bool, *ScoreContext) {}

// argmaxOnly is the Matching of argmax algorithms.
type argmaxOnly struct{}

func (argmaxOnly) Matching(int) bool { return false }

// sharedCoin marks an algorithm whose scores read ScoreContext.Coin. A data
// owner derives the coin (seedPRF of seed_ε at t) only for such an
// algorithm; for the others Coin stays zero.
type sharedCoin struct{}

func (sharedCoin) usesCoin() {}

// usesCoin reports whether alg embeds sharedCoin.
func usesCoin(alg Algorithm) bool {
	_, ok := alg.(interface{ usesCoin() })
	return ok
}

// stateDecided marks an algorithm whose decision is a function of the data
// owners' variables and t alone — no coin, no draw, an argmax in every
// iteration — so that every step of a batch, decided from the batch's
// start, makes the same decision: its batch is one decision (batch.go).
type stateDecided struct{}

func (stateDecided) decidedByState() {}

// decidedByState reports whether alg embeds stateDecided.
func decidedByState(alg Algorithm) bool {
	_, ok := alg.(interface{ decidedByState() })
	return ok
}

// single is the Iterations of one-iteration algorithms.
type single struct{}

func (single) Iterations() int { return 1 }

// epsilonExplore is the score ε-greedy sends when the shared coin says
// explore: the same constant from every data owner, so the controller cannot
// tell exploration from exploitation and comp's argmax over K equal values
// picks the arm the permutation puts first — uniformly at random.
const epsilonExplore = 0

func clampProb(x float64) float64 { return math.Min(1, math.Max(0, x)) }
