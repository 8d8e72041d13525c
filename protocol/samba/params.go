package samba

import (
	"fmt"
	"math"
)

// Params are the public parameters of a SAMBA session.
type Params struct {
	// Algorithm is epsilon_greedy, epsilon_decreasing, ucb, thompson,
	// softmax or pursuit.
	Algorithm string `toml:"algorithm"`
	// Budget is N, the number of pulls in all.
	Budget int64 `toml:"budget"`
	// Epsilon is ε-greedy's exploration probability.
	Epsilon float64 `toml:"epsilon"`
	// EpsilonSchedule is f_ε(t) of ε-decreasing: "ln" (1/ln t, default) or
	// "log2" (1/log₂ t, the paper's prototype).
	EpsilonSchedule string `toml:"epsilon_schedule"`
	// Tau is softmax's temperature τ.
	Tau float64 `toml:"tau"`
	// Beta is pursuit's learning rate β.
	Beta float64 `toml:"beta"`
	// PaillierBits is the size of the data customer's Paillier modulus.
	PaillierBits int `toml:"paillier_bits"`
	// Batch is B, the decisions one protocol round serves (batch.go): the
	// steps K+1..N are cut into batches of B (the last one shorter when
	// N − K is not a multiple of B), every decision of a batch is made from
	// the variables at the batch's start, and the rewards of its pulls
	// update them at its end. 1, the default, is the paper's protocol.
	Batch int `toml:"batch"`
	// BatchGrowth is g, the batch schedule: 1 (the default) cuts batches
	// of B steps; g > 1 a geometric schedule, the j-th batch (from 0)
	// ⌈B·g^j⌉ steps, at most MaxBatch — small batches while the arms are
	// still unknown, longer ones later, the grids of Perchet et al. and
	// Gao et al. (batch.go).
	BatchGrowth float64 `toml:"batch_growth"`
}

// DefaultParams are the paper's prototype's tuned values (ε = 0.1,
// τ = 0.06, β = 0.1) with UCB, N = 10,000 and 2048-bit Paillier.
func DefaultParams() Params {
	return Params{Algorithm: "ucb", Budget: 10000, Epsilon: 0.1, EpsilonSchedule: "ln", Tau: 0.06, Beta: 0.1, PaillierBits: 2048, Batch: 1, BatchGrowth: 1}
}

// MaxBudget bounds N.
const MaxBudget = 100_000_000

// MaxBatch bounds B: a data owner's message of a batch carries B sealed
// scores of 38 bytes on the wire, and the controller's to it B sealed bits
// of 31, so that at B = 1,000 both stay below the 64 KiB a driver steps
// where it reads them (protocol.Info.SmallMessages); the controller's
// messages to comp stay one a step of the batch, K envelopes each, as in
// the sequential protocol.
const MaxBatch = 1000

// MaxBatchGrowth bounds params.batch_growth.
const MaxBatchGrowth = 10

func (p Params) validate() error {
	if _, err := AlgorithmByName(p.Algorithm); err != nil {
		return err
	}
	if p.Budget < 1 || p.Budget > MaxBudget {
		return fmt.Errorf("params.budget: %d is out of range [1, %d]", p.Budget, MaxBudget)
	}
	if !(p.Epsilon >= 0 && p.Epsilon <= 1) {
		return fmt.Errorf("params.epsilon: %v is not in [0, 1]", p.Epsilon)
	}
	if p.EpsilonSchedule != "ln" && p.EpsilonSchedule != "log2" {
		return fmt.Errorf("params.epsilon_schedule: %q is not ln or log2", p.EpsilonSchedule)
	}
	// Softmax's score exp(μ/τ), μ ≤ 1, masked by up to 2^20 and summed over
	// up to MaxOwners arms, must stay below float64's 1.8e308 = e^709.8:
	// 1/τ + ln 2^20 + ln MaxOwners ≈ 1/τ + 20.8 ≤ 709 holds for τ ≥ 1/600.
	if math.IsInf(p.Tau, 0) {
		return fmt.Errorf("params.tau: %v must be finite", p.Tau)
	}
	if !(p.Tau >= minTau) {
		return fmt.Errorf("params.tau: %v is below %.5f (1/600); softmax's exp(μ/τ) would overflow", p.Tau, minTau)
	}
	if !(p.Beta > 0 && p.Beta <= 1) {
		return fmt.Errorf("params.beta: %v is not in (0, 1]", p.Beta)
	}
	if p.Batch < 1 || p.Batch > MaxBatch {
		return fmt.Errorf("params.batch: %d is out of range [1, %d] (1 is the paper's protocol, one decision a round)", p.Batch, MaxBatch)
	}
	if int64(p.Batch) > p.Budget {
		return fmt.Errorf("params.batch: %d is more than params.budget %d; a batch serves at most the budget's decisions", p.Batch, p.Budget)
	}
	if !(p.BatchGrowth >= 1 && p.BatchGrowth <= MaxBatchGrowth) {
		return fmt.Errorf("params.batch_growth: %v is not in [1, %d] (1: batches of params.batch steps; more: each batch that many times the last)", p.BatchGrowth, MaxBatchGrowth)
	}
	if p.PaillierBits < 512 || p.PaillierBits > 8192 || p.PaillierBits%2 != 0 {
		return fmt.Errorf("params.paillier_bits: %d is not an even size in [512, 8192] (2048 or more for real sessions)", p.PaillierBits)
	}
	return nil
}

// MinDaemonPaillierBits is the smallest Paillier modulus a daemon accepts
// for a session when its operator's policy does not allow less
// ([policy.samba.min] paillier_bits): 2048 bits, about 112-bit security
// (NIST SP 800-57 Part 1, Table 2, for factoring moduli). Params.validate
// accepts 512 bits and up, so that simulate and tests run fast; only a
// daemon's admission applies this floor (PolicyDefaultMin).
const MinDaemonPaillierBits = 2048

// PolicyDefaultMin are the lower bounds a daemon applies to these
// parameters when its policy's [policy.samba.min] table does not set the
// key itself: paillier_bits ≥ MinDaemonPaillierBits, so that no initiator
// can have a participant's data encrypted under a test-sized key by
// asking for one. An operator who wants less writes it explicitly
// ([policy.samba.min] paillier_bits = 1024).
func (Params) PolicyDefaultMin() map[string]float64 {
	return map[string]float64{"paillier_bits": MinDaemonPaillierBits}
}

// minTau is the smallest softmax temperature whose scores cannot overflow
// (see Params.validate).
const minTau = 1.0 / 600
