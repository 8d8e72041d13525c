package mpccb

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// toyData returns unit-norm contexts and the reward rows of a linear
// problem: arm a pays 1 when its weight vector scores x highest.
func toyData(n, arms, dim int, seed uint64) ([][]float64, [][]float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	w := make([][]float64, arms)
	for a := range w {
		w[a] = make([]float64, dim)
		for i := range w[a] {
			w[a][i] = rng.NormFloat64()
		}
	}
	xs, rs := make([][]float64, n), make([][]float64, n)
	for t := range n {
		x := make([]float64, dim)
		var norm float64
		for i := range x {
			x[i] = rng.NormFloat64()
			norm += x[i] * x[i]
		}
		for i := range x {
			x[i] /= math.Sqrt(norm)
		}
		best, bs := 0, math.Inf(-1)
		for a := range arms {
			var s float64
			for i := range x {
				s += w[a][i] * x[i]
			}
			if s > bs {
				best, bs = a, s
			}
		}
		row := make([]float64, arms)
		row[best] = 1
		xs[t], rs[t] = x, row
	}
	return xs, rs
}

// TestLearnerMatchesReference runs the private learner in memory (dealer
// first, then the parties in lock step) against the plaintext reference.
// With ε = 1 every step explores: the dealer's exploring arm (ArgMaxOr's
// alternative) must be the reference's in every step.
func TestLearnerMatchesReference(t *testing.T) {
	for _, c := range []struct {
		name      string
		P, arms   int
		eps       float64
		wantAgree int // in percent
		wire      string
	}{
		{"P=2", 2, 4, 0.1, 99, ""},
		{"P=3", 3, 4, 0.1, 99, ""},
		{"P=2 A=10", 2, 10, 0.1, 99, ""},
		{"P=2 explore always", 2, 10, 1, 100, ""},
		{"P=2 wire 1.1.0", 2, 4, 0.1, 99, wireV110},
		{"P=2 wire 1.1.0 explore always", 2, 10, 1, 100, wireV110},
	} {
		P := c.P
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Arms, p.Dimensions, p.Epsilon, p.PrecisionBits = c.arms, 6, c.eps, 16
			p.wire = c.wire
			const steps = 150
			xs, rs := toyData(steps, p.Arms, p.Dimensions, 3)
			var seeds []mpc.Seed
			for i := range P {
				seeds = append(seeds, mpc.Seed{byte(i + 1)})
			}
			sampler := mpc.Seed{99}
			cfg := mpc.Config{Parties: P, Frac: uint(p.PrecisionBits)}
			dealer, err := mpc.NewDealer(cfg, seeds)
			if err != nil {
				t.Fatal(err)
			}
			dealer.SetSampler(mpc.NewPRG(sampler))
			engines := make([]*mpc.Engine, P)
			for i := range engines {
				pairs := make([]mpc.Seed, P)
				for q := range pairs {
					lo, hi := min(i, q), max(i, q)
					pairs[q] = mpc.Seed{byte(lo), byte(hi), 42}
				}
				if engines[i], err = mpc.NewParty(cfg, i, seeds[i], pairs); err != nil {
					t.Fatal(err)
				}
			}
			dl := newLearner(dealer, p)
			ls := make([]*learner, P)
			for i, e := range engines {
				ls[i] = newLearner(e, p)
			}
			ref := NewReference(p, sampler)
			fx := mpc.Fixed{Frac: uint(p.PrecisionBits)}
			agree, privReward, refReward := 0, 0.0, 0.0
			for step := range steps {
				// The parties: features split in blocks, rewards shared by party 0.
				arm := make([]uint64, p.Arms)
				var rt uint64
				inputs := func(l *learner) ([]uint64, []uint64) {
					enc := fx.EncodeAll(xs[step])
					x := make([]uint64, p.Dimensions)
					for owner := range P {
						lo, hi := owner*p.Dimensions/P, (owner+1)*p.Dimensions/P
						copy(x[lo:hi], l.e.Share(owner, enc[lo:hi], hi-lo))
					}
					return x, l.e.Share(0, fx.EncodeAll(rs[step]), p.Arms)
				}
				privateStep(t, dl, ls, inputs, stepOutputs{
					arm: func(oh []uint64) {
						for a, v := range oh {
							arm[a] += v
						}
					},
					reward: func(s uint64) { rt += s },
				})
				a := -1
				for i, v := range arm {
					if v == 1 {
						a = i
					} else if v != 0 {
						t.Fatalf("step %d: one-hot %v", step, arm)
					}
				}
				refArm, refR := ref.Step(xs[step], rs[step])
				if a == refArm {
					agree++
				} else if testing.Verbose() && agree+5 > step {
					t.Logf("step %d: private %d, reference %d", step, a, refArm)
				}
				privReward += fx.Decode(rt)
				refReward += refR
			}
			t.Logf("P=%d: agreement %d/%d, reward %.0f vs %.0f, rounds %d", P, agree, steps, privReward, refReward, engines[0].Stats().Rounds)
			// The truncation keeps an exact zero exact with any number of
			// parties, so the learners break the first steps' ties (every
			// score is 0) the same way, by γ, and then follow the same path.
			if agree < steps*c.wantAgree/100 {
				t.Errorf("the private learner chose the reference's arm in %d of %d steps", agree, steps)
			}
			if math.Abs(privReward-refReward) > 0.1*refReward {
				t.Errorf("private reward %.0f, reference %.0f", privReward, refReward)
			}
		})
	}
}
