package mpccb

import (
	"gonum.org/v1/gonum/mat"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// Reference is the plaintext ε-greedy linear contextual bandit of Algorithm
// 1 in float64 (gonum), drawing the very samples the dealer draws — y_t,
// v_{t,a} on the same fixed-point grid, and the tie-breaking permutation —
// from the same stream. Run side by side with the private learner it
// measures what fixed-point arithmetic changes: ideally nothing.
type Reference struct {
	arms, dim int
	eps       float64
	frac      uint
	g         *mpc.PRG
	winv      []*mat.SymDense
	b         []*mat.VecDense
	u         *mat.VecDense
}

// NewReference returns a reference learner drawing its samples from the
// dealer's sample seed.
func NewReference(p Params, sampler mpc.Seed) *Reference {
	r := &Reference{arms: p.Arms, dim: p.Dimensions, eps: p.Epsilon, frac: uint(p.PrecisionBits),
		g: mpc.NewPRG(sampler), u: mat.NewVecDense(p.Dimensions, nil)}
	for range p.Arms {
		w := mat.NewSymDense(p.Dimensions, nil)
		for i := range p.Dimensions {
			w.SetSym(i, i, 1)
		}
		r.winv = append(r.winv, w)
		r.b = append(r.b, mat.NewVecDense(p.Dimensions, nil))
	}
	return r
}

// Step chooses the arm for context x, receives its reward from rewards
// (the realised reward of every arm) and updates. It returns the arm and
// its reward.
func (r *Reference) Step(x []float64, rewards []float64) (int, float64) {
	a := r.Choose(x)
	r.Update(x, a, rewards[a])
	return a, rewards[a]
}

// Choose draws the step's samples and returns the arm the learner picks for
// context x. Every Choose must be followed by one Update.
func (r *Reference) Choose(x []float64) int {
	smp := drawSamples(r.g, r.arms, r.eps, r.frac)
	xv := mat.NewVecDense(r.dim, x)
	best, bestScore, bestGamma := -1, 0.0, uint64(0)
	scale := float64(uint64(1) << r.frac)
	for a := range r.arms {
		var score float64
		if smp.y == 1 {
			score = float64(smp.v[a]) / scale
		} else {
			r.u.MulVec(r.winv[a], xv)
			score = mat.Dot(r.u, r.b[a])
		}
		if best < 0 || score > bestScore || (score == bestScore && smp.gamma[a] > bestGamma) {
			best, bestScore, bestGamma = a, score, smp.gamma[a]
		}
	}
	return best
}

// Update adds context x, pulled arm a and its reward to the model
// (Sherman–Morrison: W⁻¹ −= (W⁻¹x)(W⁻¹x)ᵀ / (1 + xᵀW⁻¹x); b_a += r·x).
func (r *Reference) Update(x []float64, a int, reward float64) {
	xv := mat.NewVecDense(r.dim, x)
	r.u.MulVec(r.winv[a], xv)
	den := 1 + mat.Dot(xv, r.u)
	r.winv[a].SymRankOne(r.winv[a], -1/den, r.u)
	r.b[a].AddScaledVec(r.b[a], reward, xv)
}

// StepBatch is one batch of the batched algorithm (the batched-bandit
// setting: Perchet et al. 2016, "Batched bandit problems"): every context
// of xs is scored with the model at the batch's start, each step drawing
// its own samples (y_t, v_t and the tie-breaking permutation) in order, as
// Choose does; then the model takes the batch's (context, arm, reward)
// triples, in the batch's order (Update). rewards[j] is the realised
// reward of every arm for xs[j]. It returns the arms and their rewards.
// With one context it is Step.
func (r *Reference) StepBatch(xs, rewards [][]float64) ([]int, []float64) {
	arms := make([]int, len(xs))
	got := make([]float64, len(xs))
	for j, x := range xs {
		arms[j] = r.Choose(x)
		got[j] = rewards[j][arms[j]]
	}
	for j, x := range xs {
		r.Update(x, arms[j], got[j])
	}
	return arms, got
}
