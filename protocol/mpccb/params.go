package mpccb

import (
	"fmt"
	"math"
)

// Params are the public parameters of a session.
type Params struct {
	// Epsilon is the exploration probability ε of ε-greedy.
	Epsilon float64 `toml:"epsilon"`
	// Steps is T, the number of contexts the learner goes through.
	Steps int64 `toml:"steps"`
	// Arms is |A|.
	Arms int `toml:"arms"`
	// Dimensions is D, the context's length; the feature parties hold
	// contiguous blocks of it (dataset.Split).
	Dimensions int `toml:"dimensions"`
	// PrecisionBits is L, the fixed-point encoding's fractional bits.
	PrecisionBits int `toml:"precision_bits"`
	// ReciprocalIterations is the number of Newton–Raphson iterations of the
	// private reciprocal (the paper: 7 in §5, 3 suffice by its Figure 8).
	ReciprocalIterations int `toml:"reciprocal_iterations"`
	// Window is how many steps ahead the dealer and the reward receiver may
	// send their shares; in a batched session, how many batches.
	Window int `toml:"window"`
	// Batch is B, the steps one round of the protocol serves (batch.go):
	// 1, the paper's algorithm, or up to MaxBatch decisions made from the
	// model at the batch's start and learned from together. Needs wire
	// 1.3.0 when above 1.
	Batch int `toml:"batch"`

	// wire is the wire version the session runs on, set by Family.NewRole:
	// "" for the family's current one, or wireV110, whose step differs.
	wire string
	// armsGiven and dimensionsGiven say whether the spec gave arms and
	// dimensions (ParseParams): a simulation of a table takes those it
	// did not give from the table (PrepareSimulation).
	armsGiven, dimensionsGiven bool
}

// DefaultParams: ε = 0.1, 10 arms, 20 dimensions, three reciprocal
// iterations, 10,000 steps, and L = 20 fractional bits, the paper's choice
// (its Figure 7: best reward at 20). W_a⁻¹ shrinks like 1/n_a, so its
// relative precision decays with the pulls; over 10,000 Fashion-MNIST steps
// (P = 2, seed 1) L = 20 chooses the plaintext reference's arm in 99.85 % of
// steps, L = 16 in 97.6 % (average reward 0.6693 and 0.6683 against 0.6692).
func DefaultParams() Params {
	return Params{Epsilon: 0.1, Steps: 10000, Arms: 10, Dimensions: 20, PrecisionBits: 20,
		ReciprocalIterations: 3, Window: 8, Batch: 1}
}

// Bounds of a session.
const (
	MaxSteps      = 10_000_000
	MaxArms       = 256
	MaxDimensions = 256
	MaxWindow     = 1024
	// MaxMatrixWords bounds |A|·D², the words of W⁻¹ opened each step. The
	// roles measure a step's rounds and corrections when they start
	// (checkShape) and refuse what would not fit a 4 MiB frame; the dealer
	// sends a step's corrections in chunks.
	MaxMatrixWords = 160_000
	// MaxBatch bounds params.batch. The batch's refresh of W_a⁻¹ keeps
	// its precision at any B (refreshShift); what bounds B is the price:
	// a batch's words live until it ends (simulate of B = 1,000 peaks at
	// 1.2 GB on 60,000 images; a daemon at about 200 MB), p″'s reward
	// range shrinks as 1/B (maxReward), and the regret grows (2 % at
	// B = 1,000 on Fashion-MNIST, docs/protocols/mpccb.md, "Batches").
	MaxBatch = 1000
	// DefaultBatchWindow is params.window's default in a batched session,
	// in batches: the dealer produces a batch while the parties run the
	// one before, and a batch's corrections are large (44 MB at B = 100,
	// |A| = 10, D = 20), so more would hold memory for nothing.
	DefaultBatchWindow = 2
)

func (p Params) validate() error {
	if !(p.Epsilon > 0 && p.Epsilon <= 1) {
		return fmt.Errorf("params.epsilon: %v is not in (0, 1] (ε = 0 gives no privacy: the pulled arm is a deterministic function of the data)", p.Epsilon)
	}
	if p.Steps < 1 || p.Steps > MaxSteps {
		return fmt.Errorf("params.steps: %d is out of range [1, %d]", p.Steps, MaxSteps)
	}
	if p.Arms < 2 || p.Arms > MaxArms {
		return fmt.Errorf("params.arms: %d is out of range [2, %d]", p.Arms, MaxArms)
	}
	if p.Dimensions < 1 || p.Dimensions > MaxDimensions {
		return fmt.Errorf("params.dimensions: %d is out of range [1, %d]", p.Dimensions, MaxDimensions)
	}
	if w := p.Arms * p.Dimensions * p.Dimensions; w > MaxMatrixWords {
		return fmt.Errorf("params: %d arms × %d² dimensions = %d words of W⁻¹ to open each step; at most %d fit the wire's frames", p.Arms, p.Dimensions, w, MaxMatrixWords)
	}
	if p.PrecisionBits < 8 || p.PrecisionBits > 24 {
		return fmt.Errorf("params.precision_bits: %d is out of range [8, 24] (products carry 2L bits, and the shares must not wrap)", p.PrecisionBits)
	}
	if p.ReciprocalIterations < 1 || p.ReciprocalIterations > 10 {
		return fmt.Errorf("params.reciprocal_iterations: %d is out of range [1, 10]", p.ReciprocalIterations)
	}
	if p.Window < 1 || p.Window > MaxWindow {
		return fmt.Errorf("params.window: %d is out of range [1, %d]", p.Window, MaxWindow)
	}
	if p.Batch < 1 || p.Batch > MaxBatch {
		return fmt.Errorf("params.batch: %d is out of range [1, %d] (1 is the paper's algorithm; a batch's memory and p″'s reward range grow worse with B)", p.Batch, MaxBatch)
	}
	return nil
}

// batched reports whether p's session runs in batches of more than one
// step (batch.go).
func (p Params) batched() bool { return p.Batch > 1 }

// units is how many units the session's feature parties run after the
// joint range check: its steps, or in a batched session its batches.
func (p Params) units() uint64 {
	return uint64((p.Steps + int64(p.batch()) - 1) / int64(p.batch()))
}

// batch is B, 1 for Params made without it.
func (p Params) batch() int { return max(p.Batch, 1) }

// unitSteps returns the steps of unit u (from 1): its first step and how
// many it has — the last batch is shorter when B does not divide T.
func (p Params) unitSteps(u uint64) (first uint64, n int) {
	first = (u-1)*uint64(p.batch()) + 1
	return first, int(min(uint64(p.batch()), uint64(p.Steps)-first+1))
}

// unitOf returns the unit (from 1) that step t (from 1) belongs to.
func (p Params) unitOf(t uint64) uint64 { return (t-1)/uint64(p.batch()) + 1 }

// maxReward is the largest reward magnitude R the engine computes with
// exactly: the score xᵀW_a⁻¹b_a reaches R·√T/2 (see learner.step), a
// batch's update of b_a sums B products of at most R before truncating
// them (stepBatch), and every truncated product must stay below 2^61 in
// the ring, 2^(61−2L) as a real: R = 2^(61−2L)/max(1, √T/2, B). With 0/1
// rewards every valid Params fits: R = 1 needs √(10^7)/2 ≈ 1582 < 2^13,
// the room at L = 24, and B ≤ MaxBatch < 2^13.
func (p Params) maxReward() float64 {
	return math.Ldexp(1, 61-2*p.PrecisionBits) / max(1, math.Sqrt(float64(p.Steps))/2, float64(p.batch()))
}

// PrivacyEta is Theorem 1's guarantee: opening a_t is log(|A|/ε)-DP.
func (p Params) PrivacyEta() float64 { return math.Log(float64(p.Arms) / p.Epsilon) }
