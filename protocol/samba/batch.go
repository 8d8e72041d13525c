package samba

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
// Why t₀ and not each step's t: UCB's B lists of a batch would otherwise
// differ only through the public ln t, and comp, which sees the order of
// each list (its masks are increasing affine maps), could link the B
// lists by rank and solve for the empirical means and √(1/n_i) up to one
// affine map. With t₀ the B lists of a batch are one vector of scores
// under B independent masks and permutations, which tells comp nothing
// one list does not (TestBatchedUCBListsAreOneVector).

// batchLen is the number of steps of the batch that starts at step t: B,
// or what is left of the budget.
func batchLen(p Params, t uint64) int {
	return int(min(uint64(p.Batch), uint64(p.Budget)-t+1))
}

// batched reports whether the session is batched: its data owners' scores
// and bits travel as owner_scores and owner_bits.
func (p Params) batched() bool { return p.Batch > 1 }
