package mpc

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// signValues are the inputs of the sign tests: the extremes, small values
// of both signs, and random words of every size.
func signValues(rng *rand.Rand) []uint64 {
	xs := []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 1<<63 + 1, 2, math.MaxUint64 - 1, 1 << 62, 3 << 62}
	for range 40 {
		xs = append(xs, rng.Uint64())
	}
	for range 40 {
		xs = append(xs, uint64(rng.Int64N(1<<21)-1<<20))
	}
	return xs
}

// csaRounds returns the carry-save rounds that reduce P inputs to two:
// each round turns every three numbers into two.
func csaRounds(parties int) int {
	r := 0
	for n := parties; n > 2; r++ {
		n = 2*(n/3) + n%3
	}
	return r
}

// msbRounds returns the rounds of one MSB for parties parties.
func msbRounds(t *testing.T, parties int) int {
	t.Helper()
	xs := []uint64{0, 1, math.MaxUint64, 1 << 63}
	engines, dealer := testEngines(t, parties, 16, uint64(950+parties))
	shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
		var out []uint64
		return []*Proc{e.MSB(shareOf(e, xs), &out)}, func() []uint64 { return out }
	})
	for i, x := range xs {
		if got := xorAll(shares)[i]; got != x>>63 {
			t.Errorf("P=%d: MSB(%d) = %d", parties, int64(x), got)
		}
	}
	return engines[0].Stats().Rounds
}

// TestMSBRoundsManyParties checks the MSB's rounds beyond partyCounts: 7
// for the Kogge–Stone adder plus one per carry-save level, each level
// turning every three numbers into two (the fewest levels 3:2 compressors
// allow: 2, 3, 4, 6, 9, 13 … numbers take 0, 1, 2, 3, 4, 5 … levels).
func TestMSBRoundsManyParties(t *testing.T) {
	for _, P := range []int{2, 3, 4, 5, 6, 7, 9, 10, 13, 14} {
		if got, want := msbRounds(t, P), 7+csaRounds(P); got != want {
			t.Errorf("P=%d: %d rounds, want %d", P, got, want)
		}
	}
}

// TestMSBRoundsDocFormula checks the round count MSB's doc comment states,
// 7 + ⌈log_{3/2}(P/2)⌉. It undercounts from P = 10 on: ten numbers need five
// carry-save levels (10 → 7 → 5 → 4 → 3 → 2), not ⌈3.97⌉ = 4, and no 3:2
// scheme does better; the code is right, the formula is not.
func TestMSBRoundsDocFormula(t *testing.T) {
	t.Skip("BUG: MSB's doc gives 7 + ⌈log_{3/2}(P/2)⌉ rounds; for P = 10 and 14 the MSB takes one more (12 and 13) — the doc formula, not the code, is off")
	for _, P := range []int{2, 3, 4, 5, 6, 7, 9, 10, 14} {
		doc := 7 + int(math.Ceil(math.Log(float64(P)/2)/math.Log(1.5)-1e-9))
		if got := msbRounds(t, P); got != doc {
			t.Errorf("P=%d: %d rounds, the doc says %d", P, got, doc)
		}
	}
}

// TestMSBAndLTZ checks the sign bit on binary shares (MSB) and as an
// arithmetic 0/1 (LTZ), and their rounds: 7 + ⌈log_{3/2}(P/2)⌉ for MSB,
// one more for LTZ.
func TestMSBAndLTZ(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for _, P := range partyCounts {
		for _, ltz := range []bool{false, true} {
			name := "MSB"
			if ltz {
				name = "LTZ"
			}
			t.Run(partiesName(P)+"/"+name, func(t *testing.T) {
				xs := signValues(rng)
				engines, dealer := testEngines(t, P, 16, uint64(900*P+len(name)))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var out []uint64
					x := shareOf(e, xs)
					if ltz {
						return []*Proc{e.LTZ(x, &out)}, func() []uint64 { return out }
					}
					return []*Proc{e.MSB(x, &out)}, func() []uint64 { return out }
				})
				got := xorAll(shares)
				if ltz {
					got = reconstruct(shares)
				}
				for i, x := range xs {
					if want := x >> 63; got[i] != want {
						t.Errorf("%s(%d) = %#x, want %d", name, int64(x), got[i], want)
					}
				}
				want := 7 + csaRounds(P)
				if ltz {
					want++
				}
				if r := engines[0].Stats().Rounds; r != want {
					t.Errorf("%d rounds, want %d", r, want)
				}
			})
		}
	}
}

// TestB2A converts random binary shares of bits to arithmetic 0/1 in one
// round.
func TestB2A(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			b := []uint64{0, 1, 0, 1}
			for range 200 {
				b = append(b, rng.Uint64()&1)
			}
			bs := xorShares(b, P, 1, 23)
			engines, dealer := testEngines(t, P, 16, uint64(1000+P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.B2A(sharesFor(e, bs), &out)}, func() []uint64 { return out }
			})
			if got := reconstruct(shares); !slices.Equal(got, b) {
				t.Errorf("B2A gives %v, want %v", got, b)
			}
			if r := engines[0].Stats().Rounds; r != 1 {
				t.Errorf("%d rounds, want 1", r)
			}
		})
	}
}

// argMaxComputation runs ArgMax on scores with a dealt permutation.
func argMaxComputation(fx Fixed, scores []float64) computation {
	return func(e *Engine) ([]*Proc, func() []uint64) {
		var out []uint64
		x := shareOf(e, fx.EncodeAll(scores))
		return []*Proc{e.ArgMax(x, e.DealtPermutation(len(scores)), &out)}, func() []uint64 { return out }
	}
}

// oneHot returns the index of the single 1 of v, or an error.
func oneHot(v []uint64) (int, error) {
	at := -1
	for i, x := range v {
		switch {
		case x == 0:
		case x == 1 && at < 0:
			at = i
		default:
			return -1, fmt.Errorf("not one-hot: %v", v)
		}
	}
	if at < 0 {
		return -1, fmt.Errorf("no 1 in %v", v)
	}
	return at, nil
}

// TestArgMaxArms checks ArgMax on random distinct scores and on all-equal
// ones for n = 2 … 50, and its rounds: 7 + ⌈log₂(n−1)⌉ + 1 for two parties
// (the doc), plus the carry-save rounds of the MSB for more.
func TestArgMaxArms(t *testing.T) {
	const frac = 16
	fx := Fixed{frac}
	rng := rand.New(rand.NewPCG(24, 25))
	for _, P := range partyCounts {
		for _, n := range []int{2, 3, 10, 17, 50} {
			distinct := make([]float64, 0, n)
			seen := map[int64]bool{}
			for len(distinct) < n {
				k := rng.Int64N(1<<20) - 1<<19 // ±8 in steps of 2^-16
				if !seen[k] {
					seen[k] = true
					distinct = append(distinct, math.Ldexp(float64(k), -frac))
				}
			}
			cases := []struct {
				name   string
				scores []float64
			}{
				{"distinct", distinct},
				{"equal", slices.Repeat([]float64{-2.5}, n)},
				{"zero", make([]float64, n)},
			}
			for ci, c := range cases {
				t.Run(fmt.Sprintf("%s/n=%d/%s", partiesName(P), n, c.name), func(t *testing.T) {
					engines, dealer := testEngines(t, P, frac, uint64(1100*P+10*n+ci))
					at, err := oneHot(reconstruct(runComputation(t, engines, dealer, argMaxComputation(fx, c.scores))))
					if err != nil {
						t.Fatal(err)
					}
					if c.name == "distinct" {
						if want := slices.Index(c.scores, slices.Max(c.scores)); at != want {
							t.Errorf("argmax %d (score %g), want %d (score %g)", at, c.scores[at], want, c.scores[want])
						}
					}
					want := 7 + csaRounds(P) + bits.Len(uint(n-2)) + 1 // ⌈log₂(n−1)⌉ = bits.Len(n−2)
					if P == 2 {
						want = 7 + int(math.Ceil(math.Log2(float64(n-1)))) + 1
					}
					if r := engines[0].Stats().Rounds; r != want {
						t.Errorf("%d rounds, want %d", r, want)
					}
				})
			}
		}
	}
}

// TestReciprocalConvergence checks Newton–Raphson on [1, 2] with 1, 2 and 3
// iterations at 20 fractional bits. From the minimax guess the relative
// error 1 − d·x_k is exactly e₀(d)^(2^k) with |e₀| ≤ 1/17 (reached at d = 1,
// 1.5 and 2), so the worst error must be (1/17)^(2^k) until the fixed-point
// floor, and each result must match the float64 recursion to that floor.
func TestReciprocalConvergence(t *testing.T) {
	const frac = 20
	fx := Fixed{frac}
	var ds []float64
	for i := range 33 {
		ds = append(ds, 1+float64(i)/32)
	}
	alpha, beta, err0 := ReciprocalGuess(1, 2)
	if math.Abs(err0-1.0/17) > 1e-15 {
		t.Fatalf("ReciprocalGuess(1, 2) error %g, want 1/17", err0)
	}
	for _, P := range partyCounts {
		floor := 8 * truncUnits * math.Ldexp(1, -frac)
		var worst []float64
		for _, iters := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/iters=%d", partiesName(P), iters), func(t *testing.T) {
				engines, dealer := testEngines(t, P, frac, uint64(1200*P+iters))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var out []uint64
					return []*Proc{e.Reciprocal(shareOf(e, fx.EncodeAll(ds)), 1, 2, iters, &out)}, func() []uint64 { return out }
				})
				got := fx.DecodeAll(reconstruct(shares))
				bound := math.Pow(1.0/17, math.Exp2(float64(iters)))
				var maxErr float64
				for i, d := range ds {
					e0 := 1 - alpha*d + beta*d*d
					model := (1 - math.Pow(e0, math.Exp2(float64(iters)))) / d
					if diff := math.Abs(got[i] - model); diff > floor {
						t.Errorf("1/%g after %d iterations: %.9g, the recursion gives %.9g (off by %.3g, floor %.3g)", d, iters, got[i], model, diff, floor)
					}
					maxErr = max(maxErr, math.Abs(1-d*got[i]))
				}
				if maxErr > bound+2*floor {
					t.Errorf("worst relative error %.3g, above (1/17)^%d + floor = %.3g", maxErr, 1<<iters, bound+2*floor)
				}
				if bound > 100*floor && maxErr < 0.9*bound {
					t.Errorf("worst relative error %.3g, well below (1/17)^%d = %.3g: not the iteration the doc describes", maxErr, 1<<iters, bound)
				}
				worst = append(worst, maxErr)
				t.Logf("worst relative error %.3g, (1/17)^%d = %.3g", maxErr, 1<<iters, bound)
				// One to open d, then d², β·d, α·d truncated side by side,
				// β·d² truncated, and two rounds (product, truncation) per
				// iteration.
				if r := engines[0].Stats().Rounds; r != 2*iters+3 {
					t.Errorf("%d rounds, want %d", r, 2*iters+3)
				}
			})
		}
		if len(worst) == 3 && !(worst[1] < worst[0] && worst[2] <= worst[1]) {
			t.Errorf("%s: the worst errors %v do not shrink", partiesName(P), worst)
		}
	}
}

// TestExpSquarings checks Exp against (1 + x/2^k)^(2^k), the approximation
// it computes, for several k. A unit error in 1 + x/2^k grows about 2^k-fold
// through the squarings.
func TestExpSquarings(t *testing.T) {
	const frac = 20
	fx := Fixed{frac}
	xs := []float64{0, 1, -1, 0.5, -0.5, 2, -2, 3, -4, 0.125, -0.0078125}
	for _, P := range partyCounts {
		for _, k := range []int{1, 4, 8} {
			t.Run(fmt.Sprintf("%s/k=%d", partiesName(P), k), func(t *testing.T) {
				engines, dealer := testEngines(t, P, frac, uint64(1300*P+k))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var out []uint64
					return []*Proc{e.Exp(shareOf(e, fx.EncodeAll(xs)), k, &out)}, func() []uint64 { return out }
				})
				got := fx.DecodeAll(reconstruct(shares))
				for i, x := range xs {
					pow := math.Exp2(float64(k))
					want := math.Pow(1+x/pow, pow)
					tol := (2*pow*want + 2) * truncUnits * math.Ldexp(1, -frac)
					if d := math.Abs(got[i] - want); d > tol {
						t.Errorf("exp(%g) with k=%d: %.9g, want %.9g (off by %.3g > %.3g)", x, k, got[i], want, d, tol)
					}
				}
				// The division by 2^k, then two rounds (product,
				// truncation) per squaring.
				if r := engines[0].Stats().Rounds; r != 2*k+1 {
					t.Errorf("%d rounds, want %d", r, 2*k+1)
				}
			})
		}
	}
}
