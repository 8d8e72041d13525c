package samba

import (
	"math"
	"math/bits"

	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Batched sessions (params.batch = B > 1), after the batched-bandit setting
// (Perchet, Rigollet, Chassang and Snowberg, "Batched bandit problems",
// arXiv:1505.00369; Gao, Han, Ren and Zhou, "Batched multi-armed bandits
// problem", arXiv:1904.01763; Kalkanli and Özgür, "Asymptotic performance
// of Thompson sampling in the batched multi-armed bandits",
// arXiv:2110.00158): the steps K+1..N are cut into batches of B
// consecutive steps, the last one shorter when N − K is not a multiple of
// B, and one round of SAMBA's core (Steps 2–5, each of its nb_A
// iterations) serves every step of a batch:
//
//   - each data owner computes the score of every step t of the batch from
//     the state at the batch's start, t included: its variables s_i, n_i
//     and, in the score's state-dependent part (ScoreContext.T: UCB's
//     ln t, ε-decreasing's ε_t), the batch's first step t₀ — while the
//     per-decision randomness stays step t's own (t's mask, ε-greedy's
//     coin of t, Thompson's own draw for t); it seals each for comp with
//     t in its associated data, and sends the n envelopes to the
//     controller in one message;
//   - the controller draws a fresh σ_t for every step of the batch and
//     sends comp each step's K envelopes permuted by it, one message a
//     step, as in the sequential protocol;
//   - comp opens and selects every step's list, as in the sequential
//     protocol, and returns each step's K sealed bits, one message a step;
//   - the controller routes each step's bits through σ_t⁻¹ and sends every
//     data owner its n bits in one message; the data owner then pulls its
//     arm at each step of the batch whose bit says so, in step order, and
//     the rewards update s_i and n_i before the next batch's scores.
//
// Pursuit's second iteration (a probability matching on p_i) follows the
// first for the whole batch: p_i moves with each step's argmax bit in step
// order, and step t's second score is p_i after step t's move. With B = 1
// every batch is one step and the session is the paper's, message for
// message (the data owners' messages keep their sequential kinds).
//
// One list for a batch of UCB. An algorithm whose decision is a function
// of the state alone (decidedByState: UCB — no coin, no draw, an argmax)
// computes the same scores at every step of a batch decided from the
// batch's start, t₀ included; so each data owner sends one score (masked
// and sealed with the batch's first step), comp receives one list under
// one fresh σ, and the controller routes every step's bits through that
// σ⁻¹. Comp still returns one list of K sealed bits a step, as for the
// other algorithms: for each step of the batch, in step order, it draws a
// position uniformly among the positions holding the list's largest score
// with its own randomness (selectSteps) — a unique largest score gives
// every step the same position, and nothing is drawn. The ties are what
// the batch's one list cannot break by itself: over sequential steps
// (and a list a step) each step's fresh permutation breaks them anew,
// while one list broken once would pull one of the tied arms at all B
// steps — UCB's early batches tie many arms (every arm pulled once with
// the same reward has the same score), and at B = 1,000 that cost ×8.28 of
// the sequential regret on MovieLens where a draw a step costs ×3.80
// (results/samba-batch, docs/protocols/samba.md). Comp's draws reveal
// nothing new to it: it sees which masked scores tie in the one list, and
// the draws are its own. Comp then sees one list where B sequential steps
// would show it B; each data owner receives its B bits of the batch in one
// message and learns what B sequential steps tell it (its own bits and
// rewards). Why not B lists of
// scores, as for the other algorithms: UCB's B lists of a batch are one
// vector of scores under B independent masks and permutations, and the
// masks' ranges are bounded (mask.go), so B lists pin the first list's
// mask to about 40/B and give comp an estimate of the vector's values —
// more than B sequential steps show it. (And why t₀ rather than each
// step's t, for every algorithm: with each step's own ln t, UCB's B lists
// would differ only through the public ln t, and comp, which sees each
// list's order, could link them by rank and solve for the empirical means
// and √(1/n_i) up to one affine map.) Wire 1.3.0 carries this, the B bits
// a batch of UCB; 1.2.0 sent one bit a batch, and a family at 1.2.0
// refuses batched UCB (family.go).

// The batch schedule (params.batch_growth = g): with g = 1 every batch has
// B steps; with g > 1 the j-th batch (from 0) has ⌈B·g^j⌉, at most
// MaxBatch — a geometric grid, after Perchet et al. and Gao et al., whose
// batches grow while the algorithm needs fewer fresh rewards; the last
// batch is cut at the budget. Every role derives the same batches from the
// public parameters and K, so no message says where a batch ends.

// batchShape is the batch that starts at step t (a batch's first step,
// with k data owners): its steps (its size in the schedule, or what is
// left of the budget) and the lists of scores it sends comp per iteration
// — one a step, or one for an algorithm decided by the state alone. Comp
// returns a list of bits a step either way, and each data owner receives
// a bit a step.
func batchShape(p Params, alg Algorithm, k int, t uint64) (steps, lists int) {
	steps = int(min(uint64(batchSize(p, k, t)), uint64(p.Budget)-t+1))
	if decidedByState(alg) {
		return steps, 1
	}
	return steps, steps
}

// batchSize is the schedule's size of the batch that starts at step t,
// before the budget cuts it.
func batchSize(p Params, k int, t uint64) int {
	if !(p.BatchGrowth > 1) {
		return max(p.Batch, 1)
	}
	start, size := uint64(k)+1, float64(max(p.Batch, 1))
	for {
		n := uint64(min(math.Ceil(size), MaxBatch))
		if n == MaxBatch && t >= start {
			return MaxBatch // every batch from here on
		}
		if t < start+n {
			return int(n)
		}
		start += n
		size *= p.BatchGrowth
	}
}

// maxBatchSize is the largest batch of p's schedule: what a role's
// per-batch storage holds.
func maxBatchSize(p Params) int {
	if p.BatchGrowth > 1 {
		return MaxBatch
	}
	return max(p.Batch, 1)
}

// batched reports whether the session is batched: its data owners' scores
// and bits travel as owner_scores and owner_bits.
func (p Params) batched() bool { return p.Batch > 1 || p.BatchGrowth > 1 }

// selectSteps is comp's selection for the steps one list of scores serves
// (len(sel) of them, from the batch's first): with one step, SelectArm —
// u, for a probability matching, drawn from r first; with several (a
// batch of an algorithm decided by the state, whose one list serves every
// step of the batch, all argmax), each step's own position, drawn
// uniformly from r among the positions holding the largest score, one
// draw a step in step order — so that, as over sequential steps, whose
// fresh permutations break the ties anew each step, the steps of a batch
// spread over the tied arms rather than pull one of them throughout. With
// a unique largest score every step takes its position and nothing is
// drawn. ties is storage of len(v). The plaintext reference (Reference)
// selects through it too, from comp's stream.
func selectSteps(matching bool, v []float64, r *randsrc.Source, ties, sel []int) {
	if len(sel) == 1 {
		u := 0.0
		if matching {
			u = r.Float()
		}
		sel[0] = SelectArm(matching, v, u)
		return
	}
	if matching {
		panic("samba: a list serving several steps of a probability matching") // batchShape gives one only to argmax algorithms
	}
	best := SelectArm(false, v, 0)
	ties = ties[:0]
	for j := best; j < len(v); j++ {
		if v[j] == v[best] {
			ties = append(ties, j)
		}
	}
	for j := range sel {
		sel[j] = best
		if len(ties) > 1 {
			sel[j] = ties[uniformIndex(r, len(ties))]
		}
	}
}

// uniformIndex draws an index in [0, n) uniformly from r (Lemire's
// multiply-and-reject: no modulo bias).
func uniformIndex(r *randsrc.Source, n int) int {
	bound := uint64(n)
	threshold := -bound % bound
	for {
		hi, lo := bits.Mul64(r.Uint64(), bound)
		if lo >= threshold {
			return int(hi)
		}
	}
}
