package samba

import (
	"fmt"
	"math/rand/v2"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
)

// Reference runs the standard (non-secure, non-federated) algorithm of
// Figure 3 on Bernoulli arms, consuming exactly the randomness the roles of a
// simulated SAMBA session of the same seed consume: each data owner's
// environment's stream for its rewards, each data owner's stream for its
// Thompson draws, the controller's stream for seed_ε and
// the permutations — which break the argmax's ties, as they do in SAMBA — and
// comp's stream for probability matching and for the ties of a batch's one
// list (selectSteps). Theorem 2: it returns the same
// cumulative reward and the same sequence of pulled arms. With
// params.batch = B > 1 it is the batched algorithm (batch.go): each batch
// of B steps decides from the state at the batch's start, t included, and
// its rewards update the variables at its end — the plaintext reference of a batched
// session, step for step.
func Reference(p Params, means []float64, seed int64) (reward int64, pulls []int, err error) {
	alg, err := AlgorithmByName(p.Algorithm)
	if err != nil {
		return 0, nil, err
	}
	k := len(means)
	owners := make([]*randsrc.Source, k)
	arms := make([]*randsrc.Source, k)
	ctx := make([]ScoreContext, k)
	for i := range k {
		owner := protocol.Party{Role: RoleOwner, Index: i}
		s, err := stream(protocol.SeededRand(seed, owner))
		if err != nil {
			return 0, nil, err
		}
		owners[i] = randsrc.New(s)
		if s, err = stream(protocol.SeededEnvironmentRand(seed, owner)); err != nil {
			return 0, nil, err
		}
		arms[i] = randsrc.New(s)
		ctx[i] = ScoreContext{K: int64(k), Params: p, Rand: owners[i], P: 1 / float64(k)}
	}
	cs, err := stream(protocol.SeededRand(seed, controllerParty))
	if err != nil {
		return 0, nil, err
	}
	perm := rand.New(cs)
	seedEps := make([]byte, 32)
	for i := range seedEps {
		seedEps[i] = byte(perm.Uint32())
	}
	eps, err := newSeedPRF(seedEps)
	if err != nil {
		return 0, nil, err
	}
	ms, err := stream(protocol.SeededRand(seed, compParty))
	if err != nil {
		return 0, nil, err
	}
	match := randsrc.New(ms)
	pull := func(i int) {
		r := Bernoulli{Mu: means[i]}.Pull(arms[i])
		ctx[i].S += int64(r)
		ctx[i].N++
		reward += int64(r)
		pulls = append(pulls, i)
	}
	for i := range min(int64(k), p.Budget) {
		pull(int(i))
	}
	// The batches of params.batch steps (batch.go): every step's scores
	// from the variables at the batch's start, the pulls at its end. With
	// B = 1 this is Figure 3's loop, one step at a time.
	batch := maxBatchSize(p)
	v := make([]float64, batch*k)
	w := make([]float64, k)
	sigma := make([]int, k)
	ties := make([]int, 0, k)
	sel := make([]int, batch)
	chosen := make([]int, batch)
	coin := make([]float64, batch)
	coins := usesCoin(alg)
	for t0 := int64(k) + 1; t0 <= p.Budget; {
		// n steps, in the schedule's batch at t0, and m lists: one for an
		// algorithm decided by the state alone, whose batch is one
		// decision (batch.go).
		n, m := batchShape(p, alg, k, uint64(t0))
		if coins {
			for j := range n {
				coin[j] = coinFor(eps, uint64(t0)+uint64(j))
			}
		}
		for l := 1; l <= alg.Iterations(); l++ {
			// Each data owner's scores of the batch, in step order: at the
			// first iteration from its variables, at a later one after each
			// step's bit of the iteration before (Pursuit's p_i); the t of
			// every score is the batch's first step t0, the coin each
			// step's own.
			for i := range k {
				for j := range m {
					if l > 1 {
						alg.AfterIteration(l-1, i == chosen[j], &ctx[i])
					}
					ctx[i].T, ctx[i].L, ctx[i].Coin = t0, l, coin[j]
					v[j*k+i] = alg.ComputeScore(&ctx[i])
				}
			}
			for j := range m {
				// The controller's σ_t: rand.Perm's draws, into one slice.
				for x := range sigma {
					sigma[x] = x
				}
				perm.Shuffle(k, func(a, b int) { sigma[a], sigma[b] = sigma[b], sigma[a] })
				for x, i := range sigma {
					w[x] = v[j*k+i]
				}
				// Comp's selection: for this step, or, for the batch's
				// one list (m = 1 < n), for each of its steps.
				steps := 1
				if m < n {
					steps = n
				}
				selectSteps(alg.Matching(l), w, match, ties, sel[:steps])
				for s, pos := range sel[:steps] {
					chosen[j+s] = sigma[pos]
				}
			}
		}
		for j := range n {
			pull(chosen[j])
		}
		t0 += int64(n)
	}
	if len(pulls) != int(p.Budget) {
		return 0, nil, fmt.Errorf("reference pulled %d times for a budget of %d", len(pulls), p.Budget)
	}
	return reward, pulls, nil
}
