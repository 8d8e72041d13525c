package samba

import "math"

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
//     protocol, and returns each step's K sealed bits;
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
// makes the same decision at every step of a batch decided from the
// batch's start, t₀ included; so its batch is one decision: each data
// owner sends one score (masked and sealed with the batch's first step),
// comp receives one list under one fresh σ and selects once, each data
// owner receives one bit, and the arm it names is pulled at every step of
// the batch. Comp then sees one list where B sequential steps would show
// it B; the data owners learn what B sequential steps tell them (their own
// bits and rewards). Why not B lists, as for the other algorithms: UCB's B
// lists of a batch are one vector of scores under B independent masks and
// permutations, and the masks' ranges are bounded (mask.go), so B lists
// pin the first list's mask to about 40/B and give comp an estimate of the
// vector's values — more than B sequential steps show it. (And why t₀
// rather than each step's t, for every algorithm: with each step's own
// ln t, UCB's B lists would differ only through the public ln t, and comp,
// which sees each list's order, could link them by rank and solve for the
// empirical means and √(1/n_i) up to one affine map.)

// The batch schedule (params.batch_growth = g): with g = 1 every batch has
// B steps; with g > 1 the j-th batch (from 0) has ⌈B·g^j⌉, at most
// MaxBatch — a geometric grid, after Perchet et al. and Gao et al., whose
// batches grow while the algorithm needs fewer fresh rewards; the last
// batch is cut at the budget. Every role derives the same batches from the
// public parameters and K, so no message says where a batch ends.

// batchShape is the batch that starts at step t (a batch's first step,
// with k data owners): its steps (its size in the schedule, or what is
// left of the budget) and the lists of scores it sends comp per iteration
// — one a step, or one for an algorithm decided by the state alone.
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
