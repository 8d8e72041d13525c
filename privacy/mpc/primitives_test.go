package mpc

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every primitive is checked against a plaintext reference, for P = 2, 3
// and 5 (partyCounts): raw ring products against uint64 arithmetic mod 2^64,
// fixed-point ones against float64.

// chiSquare999 is the 0.999 quantile of χ² with 15 degrees of freedom: the
// threshold for 16 buckets.
const chiSquare999 = 37.7

// uniformSamples is the number of words the uniformity tests bucket.
const uniformSamples = 4096

// chiSquareTop4 returns Pearson's χ² of the top four bits of vs against the
// uniform distribution over 16 buckets.
func chiSquareTop4(vs []uint64) float64 {
	var counts [16]float64
	for _, v := range vs {
		counts[v>>60]++
	}
	want := float64(len(vs)) / 16
	var chi float64
	for _, c := range counts {
		chi += (c - want) * (c - want) / want
	}
	return chi
}

// xorAll reconstructs binary shares.
func xorAll(shares [][]uint64) []uint64 {
	out := make([]uint64, len(shares[0]))
	for _, s := range shares {
		for i, v := range s {
			out[i] ^= v
		}
	}
	return out
}

// xorShares splits x into parties random binary shares; mask limits the
// random bits (bit 0 only for shares of bits).
func xorShares(x []uint64, parties int, mask, seed uint64) [][]uint64 {
	rng := rand.New(rand.NewPCG(seed, 0xb1))
	out := make([][]uint64, parties)
	out[0] = slices.Clone(x)
	for p := 1; p < parties; p++ {
		out[p] = make([]uint64, len(x))
		for i := range x {
			out[p][i] = rng.Uint64() & mask
			out[0][i] ^= out[p][i]
		}
	}
	return out
}

// sharesFor returns e's row of shares (zeros on the dealer).
func sharesFor(e *Engine, shares [][]uint64) []uint64 {
	if e.IsDealer() {
		return make([]uint64, len(shares[0]))
	}
	return shares[e.Party()]
}

// truncUnits is the truncation error bound in units: the probabilistic
// truncation returns ⌊x/2^l⌋ or ⌊x/2^l⌋ + 1 with any number of parties, so
// it errs by less than one unit.
const truncUnits = 1.0

// randWords returns n uniformly random words.
func randWords(rng *rand.Rand, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = rng.Uint64()
	}
	return out
}

// ringEdges are words next to 0 and ±2^63, where products wrap.
var ringEdges = []uint64{
	0, 1, 2, 3, math.MaxUint64, math.MaxUint64 - 1,
	1 << 63, 1<<63 - 1, 1<<63 + 1, 1 << 62, 3 << 62, 1<<62 + 1,
	1 << 32, 1<<32 + 1, 1<<32 - 1, 0xdeadbeefcafebabe,
}

// productOp multiplies two openings.
type productOp func(e *Engine, oa, ob *Open) []uint64

// product returns the computation that shares a (party 0's input) and b
// (the last party's), opens both with masks in one round and applies op;
// with trunc, the result is then divided by 2^Frac.
func product(a, b []uint64, op productOp, trunc bool) computation {
	return func(e *Engine) ([]*Proc, func() []uint64) {
		xa := shareOf(e, a)
		xb := e.Share(e.Parties()-1, b, len(b))
		var oa, ob *Open
		var t *Trunc
		var out []uint64
		p := e.NewProc(func() bool {
			oa, ob = e.Mask(xa), e.Mask(xb)
			return true
		}, func() bool {
			out = op(e, oa, ob)
			if trunc {
				t = e.TruncStart(out)
			}
			return true
		}, func() bool {
			if trunc {
				out = t.Result()
			}
			return true
		})
		return []*Proc{p}, func() []uint64 { return out }
	}
}

// Plaintext references over the ring (uint64 wraps mod 2^64) and over the
// reals; the generic forms serve both.

func refMulElem[T uint64 | float64](a, b []T) []T {
	out := make([]T, len(a))
	for i := range a {
		out[i] = a[i] * b[i]
	}
	return out
}

func refMulScalar[T uint64 | float64](s, v []T) []T {
	out := make([]T, len(v))
	for i := range v {
		out[i] = s[0] * v[i]
	}
	return out
}

func refDot[T uint64 | float64](a, b []T, dim int) []T {
	out := make([]T, len(a)/dim)
	for k := range out {
		bo := k * dim
		if len(b) == dim {
			bo = 0
		}
		for i := range dim {
			out[k] += a[k*dim+i] * b[bo+i]
		}
	}
	return out
}

func refMatVec[T uint64 | float64](m, v []T, dim int) []T {
	out := make([]T, len(m)/dim)
	for r := range out {
		for i := range dim {
			out[r] += m[r*dim+i] * v[i]
		}
	}
	return out
}

func refOuter[T uint64 | float64](a, b []T, dim int) []T {
	var out []T
	for k := range len(a) / dim {
		for i := range dim {
			for j := range dim {
				out = append(out, a[k*dim+i]*b[k*dim+j])
			}
		}
	}
	return out
}

func refMulRows[T uint64 | float64](s, v []T, dim int) []T {
	var out []T
	for k := range s {
		vo := k * dim
		if len(v) == dim {
			vo = 0
		}
		for i := range dim {
			out = append(out, s[k]*v[vo+i])
		}
	}
	return out
}

// productCase is one product primitive on one shape of inputs.
type productCase[T uint64 | float64] struct {
	name string
	a, b []T
	op   productOp
	ref  func(a, b []T) []T
}

// ringProductCases are the product primitives on raw ring elements: no
// truncation, so the result must equal uint64 arithmetic exactly.
func ringProductCases() []productCase[uint64] {
	rng := rand.New(rand.NewPCG(1, 2))
	var ea, eb []uint64
	for _, x := range ringEdges {
		for _, y := range ringEdges {
			ea, eb = append(ea, x), append(eb, y)
		}
	}
	mulElem := func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }
	dot := func(dim int) productOp {
		return func(e *Engine, oa, ob *Open) []uint64 { return e.Dot(oa, ob, dim) }
	}
	refDotDim := func(dim int) func(a, b []uint64) []uint64 {
		return func(a, b []uint64) []uint64 { return refDot(a, b, dim) }
	}
	matVec := func(dim int) productOp {
		return func(e *Engine, oa, ob *Open) []uint64 { return e.MatVec(oa, ob, dim) }
	}
	refMatVecDim := func(dim int) func(a, b []uint64) []uint64 {
		return func(a, b []uint64) []uint64 { return refMatVec(a, b, dim) }
	}
	outer := func(dim int) productOp {
		return func(e *Engine, oa, ob *Open) []uint64 { return e.Outer(oa, ob, dim) }
	}
	refOuterDim := func(dim int) func(a, b []uint64) []uint64 {
		return func(a, b []uint64) []uint64 { return refOuter(a, b, dim) }
	}
	mulRows := func(dim int) productOp {
		return func(e *Engine, oa, ob *Open) []uint64 { return e.MulRows(oa, ob, dim) }
	}
	refMulRowsDim := func(dim int) func(a, b []uint64) []uint64 {
		return func(a, b []uint64) []uint64 { return refMulRows(a, b, dim) }
	}
	scalar := func(e *Engine, oa, ob *Open) []uint64 { return e.MulScalar(oa, ob) }
	var cases []productCase[uint64]
	cases = append(cases,
		productCase[uint64]{"MulElem/edges", ea, eb, mulElem, refMulElem[uint64]},
		productCase[uint64]{"MulElem/random", randWords(rng, 200), randWords(rng, 200), mulElem, refMulElem[uint64]},
		productCase[uint64]{"MulElem/one", []uint64{1<<63 + 5}, []uint64{1<<63 - 7}, mulElem, refMulElem[uint64]},
		// One opening in several products: a² and a·b from the same masks.
		productCase[uint64]{"MulElem/reused", ringEdges, slices.Clone(ringEdges),
			func(e *Engine, oa, ob *Open) []uint64 { return append(e.MulElem(oa, oa), e.MulElem(oa, ob)...) },
			func(a, b []uint64) []uint64 { return append(refMulElem(a, a), refMulElem(a, b)...) }},
	)
	for _, s := range []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 + 1, rng.Uint64()} {
		v := append(slices.Clone(ringEdges), randWords(rng, 20)...)
		cases = append(cases, productCase[uint64]{fmt.Sprintf("MulScalar/%#x", s), []uint64{s}, v, scalar, refMulScalar[uint64]})
	}
	for _, sh := range []struct{ blocks, dim int }{{5, 7}, {1, 1}, {8, 1}, {1, 16}, {3, 64}} {
		n := sh.blocks * sh.dim
		cases = append(cases,
			productCase[uint64]{fmt.Sprintf("Dot/per-block/%dx%d", sh.blocks, sh.dim), randWords(rng, n), randWords(rng, n), dot(sh.dim), refDotDim(sh.dim)},
			productCase[uint64]{fmt.Sprintf("Dot/shared/%dx%d", sh.blocks, sh.dim), randWords(rng, n), randWords(rng, sh.dim), dot(sh.dim), refDotDim(sh.dim)},
		)
	}
	// Dot on the edge words: 16 blocks of length 16.
	cases = append(cases, productCase[uint64]{"Dot/edges", ea, eb, dot(16), refDotDim(16)})
	for _, sh := range []struct{ mats, dim int }{{1, 1}, {1, 5}, {4, 6}, {10, 20}} {
		n := sh.mats * sh.dim * sh.dim
		cases = append(cases, productCase[uint64]{fmt.Sprintf("MatVec/%dx%d", sh.mats, sh.dim), randWords(rng, n), randWords(rng, sh.dim), matVec(sh.dim), refMatVecDim(sh.dim)})
	}
	for _, sh := range []struct{ blocks, dim int }{{1, 1}, {1, 4}, {3, 5}} {
		n := sh.blocks * sh.dim
		cases = append(cases, productCase[uint64]{fmt.Sprintf("Outer/%dx%d", sh.blocks, sh.dim), randWords(rng, n), randWords(rng, n), outer(sh.dim), refOuterDim(sh.dim)})
	}
	cases = append(cases, productCase[uint64]{"Outer/edges", ringEdges, slices.Clone(ringEdges), outer(16), refOuterDim(16)})
	for _, sh := range []struct{ blocks, dim int }{{4, 3}, {1, 6}} {
		cases = append(cases,
			productCase[uint64]{fmt.Sprintf("MulRows/per-block/%dx%d", sh.blocks, sh.dim), randWords(rng, sh.blocks), randWords(rng, sh.blocks*sh.dim), mulRows(sh.dim), refMulRowsDim(sh.dim)},
			productCase[uint64]{fmt.Sprintf("MulRows/shared/%dx%d", sh.blocks, sh.dim), randWords(rng, sh.blocks), randWords(rng, sh.dim), mulRows(sh.dim), refMulRowsDim(sh.dim)},
		)
	}
	return cases
}

// TestRingProducts checks MulElem, MulScalar, Dot, MatVec, Outer and
// MulRows without truncation: Beaver products are exact in Z/2^64, so the
// shares must reconstruct the uint64 products, wraps included, after one
// round in which each party sends both operands' masked words.
func TestRingProducts(t *testing.T) {
	for _, P := range partyCounts {
		for ci, c := range ringProductCases() {
			t.Run(partiesName(P)+"/"+c.name, func(t *testing.T) {
				engines, dealer := testEngines(t, P, 16, uint64(100*P+ci))
				got := reconstruct(runComputation(t, engines, dealer, product(c.a, c.b, c.op, false)))
				want := c.ref(c.a, c.b)
				if len(got) != len(want) {
					t.Fatalf("%d results, want %d", len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("element %d: %#x, want %#x", i, got[i], want[i])
					}
				}
				st := engines[0].Stats()
				if st.Rounds != 1 {
					t.Errorf("%d rounds, want 1", st.Rounds)
				}
				if w := int64(len(c.a) + len(c.b)); st.WordsSent != w {
					t.Errorf("sent %d words, want %d", st.WordsSent, w)
				}
			})
		}
	}
}

// fixedInputs returns n reals k/2^16 with |k| < 2^bits·2^16: exactly
// representable at 16 fractional bits.
func fixedInputs(rng *rand.Rand, n int, bits int) []float64 {
	out := make([]float64, n)
	lim := int64(1) << (bits + 16)
	for i := range out {
		out[i] = math.Ldexp(float64(rng.Int64N(2*lim+1)-lim), -16)
	}
	return out
}

// TestFixedProducts checks the product primitives followed by TruncStart at
// 16 fractional bits, against float64: negative values, zero, and products
// of magnitude up to 2^20 (2^52 in the ring before truncation; larger
// inputs would overflow the ring). The error must stay under one unit (see
// truncUnits).
func TestFixedProducts(t *testing.T) {
	const frac = 16
	fx := Fixed{frac}
	rng := rand.New(rand.NewPCG(3, 4))
	unit := math.Ldexp(1, -frac)
	edgeA := []float64{0, 5, -3.5, 1.5, -1024, 1024, 1 << 20, -(1 << 20), 1 << 20, unit, -unit, 1 - unit, -0.5, 1 << 10, -(1 << 10)}
	edgeB := []float64{7, 0, 0, -2.25, 1024, 1024, 1, 1, -(1 - unit), unit, 1, 1 - unit, -0.5, -(1 << 10), -(1 << 10)}
	type fcase = productCase[float64]
	cases := []fcase{
		{"MulElem/edges", edgeA, edgeB,
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, refMulElem[float64]},
		{"MulElem/random", fixedInputs(rng, 64, 10), fixedInputs(rng, 64, 10),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, refMulElem[float64]},
		{"MulElem/small", fixedInputs(rng, 64, 0), fixedInputs(rng, 64, 0),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, refMulElem[float64]},
		{"MulScalar", []float64{-3.25}, fixedInputs(rng, 32, 10),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulScalar(oa, ob) }, refMulScalar[float64]},
		{"Dot/per-block", fixedInputs(rng, 40, 8), fixedInputs(rng, 40, 8),
			func(e *Engine, oa, ob *Open) []uint64 { return e.Dot(oa, ob, 8) },
			func(a, b []float64) []float64 { return refDot(a, b, 8) }},
		{"Dot/shared", fixedInputs(rng, 40, 8), fixedInputs(rng, 8, 8),
			func(e *Engine, oa, ob *Open) []uint64 { return e.Dot(oa, ob, 8) },
			func(a, b []float64) []float64 { return refDot(a, b, 8) }},
		{"MatVec", fixedInputs(rng, 3*25, 8), fixedInputs(rng, 5, 8),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MatVec(oa, ob, 5) },
			func(a, b []float64) []float64 { return refMatVec(a, b, 5) }},
		{"Outer", fixedInputs(rng, 12, 10), fixedInputs(rng, 12, 10),
			func(e *Engine, oa, ob *Open) []uint64 { return e.Outer(oa, ob, 4) },
			func(a, b []float64) []float64 { return refOuter(a, b, 4) }},
		{"MulRows", fixedInputs(rng, 3, 10), fixedInputs(rng, 12, 10),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulRows(oa, ob, 4) },
			func(a, b []float64) []float64 { return refMulRows(a, b, 4) }},
	}
	for _, P := range partyCounts {
		for ci, c := range cases {
			t.Run(partiesName(P)+"/"+c.name, func(t *testing.T) {
				engines, dealer := testEngines(t, P, frac, uint64(200*P+ci))
				shares := runComputation(t, engines, dealer, product(fx.EncodeAll(c.a), fx.EncodeAll(c.b), c.op, true))
				got := fx.DecodeAll(reconstruct(shares))
				want := c.ref(c.a, c.b) // exact: every product is below 2^53 units
				tol := truncUnits * unit
				for i := range want {
					if d := math.Abs(got[i] - want[i]); !(d <= tol) {
						t.Errorf("element %d: %.8g, want %.8g (off by %.3g units, bound %g)", i, got[i], want[i], d/unit, truncUnits)
					}
				}
				if r := engines[0].Stats().Rounds; r != 2 {
					t.Errorf("%d rounds, want 2 (the product's, the truncation's)", r)
				}
			})
		}
	}
}

// TestShiftStart divides integers by 2^l for several l: the result must be
// ⌊x/2^l⌋ or ⌊x/2^l⌋ + 1, in one round, up to the bound |x| < 2^62.
func TestShiftStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, P := range partyCounts {
		for _, l := range []uint{1, 7, 16, 23, 40, 62} {
			t.Run(fmt.Sprintf("%s/l=%d", partiesName(P), l), func(t *testing.T) {
				xs := []int64{0, 1, -1, 2, -2, 1 << 40, -(1 << 40), TruncBound, -TruncBound, 1 << 61, -(1 << 61)}
				if l < 40 {
					xs = append(xs, 1<<l, -(1 << l), 1<<l-1, -(1<<l - 1), 1<<l+1, 3<<l)
				}
				for range 50 {
					xs = append(xs, rng.Int64N(1<<41)-1<<40)
				}
				in := make([]uint64, len(xs))
				for i, x := range xs {
					in[i] = uint64(x)
				}
				engines, dealer := testEngines(t, P, 16, uint64(300*P)+uint64(l))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					x := shareOf(e, in)
					var tr *Trunc
					var out []uint64
					p := e.NewProc(func() bool {
						tr = e.ShiftStart(x, l)
						return true
					}, func() bool {
						if !tr.Ready() {
							panic("shift not ready after its round")
						}
						out = tr.Result()
						return true
					})
					return []*Proc{p}, func() []uint64 { return out }
				})
				got := reconstruct(shares)
				for i, x := range xs {
					if fl := x >> l; int64(got[i]) != fl && int64(got[i]) != fl+1 {
						t.Errorf("%d >> %d = %d, want %d or %d", x, l, int64(got[i]), fl, fl+1)
					}
				}
				if r := engines[0].Stats().Rounds; r != 1 {
					t.Errorf("%d rounds, want 1", r)
				}
			})
		}
	}
}

// TestShareReconstructs shares an input from every owner; non-owners pass
// nil (Share reads x on the owner only), and the dealer gets zeros.
func TestShareReconstructs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, P := range partyCounts {
		for owner := range P {
			t.Run(fmt.Sprintf("%s/owner=%d", partiesName(P), owner), func(t *testing.T) {
				x := append(slices.Clone(ringEdges), randWords(rng, 32)...)
				engines, dealer := testEngines(t, P, 16, uint64(400*P+owner))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var in []uint64
					if e.Party() == owner {
						in = x
					}
					s := e.Share(owner, in, len(x))
					if e.IsDealer() && slices.ContainsFunc(s, func(v uint64) bool { return v != 0 }) {
						t.Errorf("the dealer got a nonzero share")
					}
					return nil, func() []uint64 { return s }
				})
				if got := reconstruct(shares); !slices.Equal(got, x) {
					t.Errorf("shares reconstruct %x, want %x", got, x)
				}
				for p, s := range shares {
					if slices.Equal(s, x) {
						t.Errorf("party %d's share is the input itself", p)
					}
				}
				if r := engines[0].Stats().Rounds; r != 0 {
					t.Errorf("sharing took %d rounds, want none", r)
				}
			})
		}
	}
}

// TestPublicAndAddPublic checks the shares of public values and of shares
// plus public values.
func TestPublicAndAddPublic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			x := randWords(rng, 24)
			k := append(slices.Clone(ringEdges), randWords(rng, 8)...)
			engines, dealer := testEngines(t, P, 16, uint64(500+P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				pub := e.Public(k)
				sum := e.AddPublic(shareOf(e, x), k)
				return nil, func() []uint64 { return append(pub, sum...) }
			})
			got := reconstruct(shares)
			if !slices.Equal(got[:len(k)], k) {
				t.Errorf("Public reconstructs %x, want %x", got[:len(k)], k)
			}
			for i := range x {
				if want := x[i] + k[i]; got[len(k)+i] != want {
					t.Errorf("AddPublic element %d: %#x, want %#x", i, got[len(k)+i], want)
				}
			}
			for p := 1; p < P; p++ {
				if slices.ContainsFunc(shares[p][:len(k)], func(v uint64) bool { return v != 0 }) {
					t.Errorf("party %d holds a nonzero share of a public value", p)
				}
			}
		})
	}
}

// TestChiSquareDetects makes sure the uniformity statistic rejects what it
// should: a constant, and words confined to half the range.
func TestChiSquareDetects(t *testing.T) {
	constant := make([]uint64, uniformSamples)
	if chi := chiSquareTop4(constant); chi <= chiSquare999 {
		t.Errorf("χ² of a constant = %.1f, not above %.1f", chi, chiSquare999)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	half := randWords(rng, uniformSamples)
	for i := range half {
		half[i] >>= 1
	}
	if chi := chiSquareTop4(half); chi <= chiSquare999 {
		t.Errorf("χ² of words below 2^63 = %.1f, not above %.1f", chi, chiSquare999)
	}
	if chi := chiSquareTop4(randWords(rng, uniformSamples)); chi > chiSquare999 {
		t.Errorf("χ² of uniform words = %.1f, above %.1f", chi, chiSquare999)
	}
}

// TestShareUniform checks that party 1's share of a constant input is
// uniform, whether party 0 or party 1 owns the input: χ² of its top four
// bits over 4096 samples, threshold at the 0.999 quantile.
func TestShareUniform(t *testing.T) {
	fx := Fixed{16}
	const calls = 4
	for _, P := range partyCounts {
		for _, owner := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/owner=%d", partiesName(P), owner), func(t *testing.T) {
				x := repeat(fx.Encode(3.25), uniformSamples/calls)
				engines, dealer := testEngines(t, P, 16, uint64(600*P+owner))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var all []uint64
					for range calls { // samples from several calls, too
						all = append(all, e.Share(owner, x, len(x))...)
					}
					return nil, func() []uint64 { return all }
				})
				if chi := chiSquareTop4(shares[1]); chi > chiSquare999 {
					t.Errorf("party 1's shares: χ² = %.1f > %.1f", chi, chiSquare999)
				}
				for i, v := range reconstruct(shares) {
					if v != x[0] {
						t.Fatalf("sample %d reconstructs %#x, want %#x", i, v, x[0])
					}
				}
			})
		}
	}
}

// TestOpeningsUniform checks that what a party sees of an opening is
// uniform: the Value of a Mask opening of a constant vector, and of a
// MaskBinary one. Each party sees the same Value, and Value plus the
// parties' mask shares (sum, or XOR) is the input.
func TestOpeningsUniform(t *testing.T) {
	for _, P := range partyCounts {
		for _, bin := range []bool{false, true} {
			name := "Mask"
			if bin {
				name = "MaskBinary"
			}
			t.Run(partiesName(P)+"/"+name, func(t *testing.T) {
				x := repeat(0x0123456789abcdef, uniformSamples)
				engines, dealer := testEngines(t, P, 16, uint64(700*P)+uint64(len(name)))
				opens := make([]*Open, P+1) // the dealer's last
				runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var s []uint64
					if bin {
						s = sharesFor(e, xorShares(x, P, math.MaxUint64, 13))
					} else {
						s = shareOf(e, x)
					}
					i := e.Party()
					if e.IsDealer() {
						i = P
					}
					p := e.NewProc(func() bool {
						if bin {
							opens[i] = e.MaskBinary(s)
						} else {
							opens[i] = e.Mask(s)
						}
						return true
					})
					return []*Proc{p}, func() []uint64 { return nil }
				})
				v := opens[0].Value
				if chi := chiSquareTop4(v); chi > chiSquare999 {
					t.Errorf("opened values: χ² = %.1f > %.1f", chi, chiSquare999)
				}
				masks := make([][]uint64, P)
				for p := range P {
					if !slices.Equal(opens[p].Value, v) {
						t.Errorf("party %d saw another opened value than party 0", p)
					}
					masks[p] = opens[p].mask
				}
				m := reconstruct(masks)
				if bin {
					m = xorAll(masks)
				}
				if !slices.Equal(m, opens[P].mask) {
					t.Errorf("the parties' mask shares do not combine to the dealer's mask")
				}
				for i := range x {
					got := v[i] + m[i]
					if bin {
						got = v[i] ^ m[i]
					}
					if got != x[i] {
						t.Fatalf("element %d: value and mask give %#x, want %#x", i, got, x[i])
					}
				}
			})
		}
	}
}

// TestAndWords checks AndStart/AndResult on random 64-bit words (two ANDs
// share the round) and NotBit.
func TestAndWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 15))
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			x := append([]uint64{0, math.MaxUint64, 0, math.MaxUint64, 0xf0f0}, randWords(rng, 100)...)
			y := append([]uint64{0, 0, math.MaxUint64, math.MaxUint64, 0xff00}, randWords(rng, 100)...)
			z := randWords(rng, len(x))
			xs, ys, zs := xorShares(x, P, math.MaxUint64, 16), xorShares(y, P, math.MaxUint64, 17), xorShares(z, P, math.MaxUint64, 18)
			engines, dealer := testEngines(t, P, 16, uint64(800+P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				a, b, c := sharesFor(e, xs), sharesFor(e, ys), sharesFor(e, zs)
				var g1, g2 *And
				var out []uint64
				p := e.NewProc(func() bool {
					g1, g2 = e.AndStart(a, b), e.AndStart(a, c)
					return true
				}, func() bool {
					out = append(e.AndResult(g1), e.AndResult(g2)...)
					out = append(out, e.NotBit(a)...)
					out = append(out, Xor(a, b)...)
					return true
				})
				return []*Proc{p}, func() []uint64 { return out }
			})
			got := xorAll(shares)
			n := len(x)
			for i := range x {
				if got[i] != x[i]&y[i] {
					t.Errorf("%#x AND %#x = %#x, want %#x", x[i], y[i], got[i], x[i]&y[i])
				}
				if got[n+i] != x[i]&z[i] {
					t.Errorf("%#x AND %#x = %#x, want %#x", x[i], z[i], got[n+i], x[i]&z[i])
				}
				if got[2*n+i] != x[i]^1 {
					t.Errorf("NotBit(%#x) = %#x, want %#x", x[i], got[2*n+i], x[i]^1)
				}
				if got[3*n+i] != x[i]^y[i] {
					t.Errorf("%#x XOR %#x = %#x", x[i], y[i], got[3*n+i])
				}
			}
			if r := engines[0].Stats().Rounds; r != 1 {
				t.Errorf("two ANDs took %d rounds, want 1", r)
			}
		})
	}
}

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

// mixed is a computation of several Procs merged into one program: products,
// a sign, an argmax, a reciprocal and an exponential.
func mixed(fx Fixed) computation {
	a := fx.EncodeAll([]float64{1.5, -2.25, 0, 7})
	b := fx.EncodeAll([]float64{-3, 0.5, 9, 0.125})
	d := fx.EncodeAll([]float64{1, 1.25, 1.75, 2})
	scores := fx.EncodeAll([]float64{0.5, -1, 2, 1.5, 0})
	return func(e *Engine) ([]*Proc, func() []uint64) {
		var prod, sign, am, rec, ex []uint64
		xa, xb := shareOf(e, a), shareOf(e, b)
		procs := []*Proc{
			e.MulFixed(xa, xb, &prod),
			e.LTZ(Sub(xa, xb), &sign),
			e.ArgMax(shareOf(e, scores), e.DealtPermutation(len(scores)), &am),
			e.Reciprocal(shareOf(e, d), 1, 2, 2, &rec),
			e.Exp(xa, 4, &ex),
		}
		return procs, func() []uint64 { return slices.Concat(prod, sign, am, rec, ex) }
	}
}

// run is a run of a computation with everything recorded.
type run struct {
	outs  [][]uint64 // each party's output shares
	corr  []uint64   // the dealer's corrections
	sent  [][]uint64 // each party's payload words, round after round
	err   error      // the first failure of a party's Advance
	errAt int        // that party
	left  int        // party 0's unused correction words
}

// runDealer runs c on the dealer and returns its corrections.
func runDealer(t testing.TB, dealer *Engine, c computation) []uint64 {
	t.Helper()
	procs, _ := c(dealer)
	g := dealer.NewProgram()
	for _, p := range procs {
		g.Go(p)
	}
	for {
		done, err := g.Advance()
		if err != nil {
			t.Fatalf("dealer: %v", err)
		}
		if done {
			return dealer.TakeCorrections()
		}
		if err := dealer.Complete(nil); err != nil {
			t.Fatal(err)
		}
	}
}

// advanceSafely is g.Advance with a panic turned into an error.
func advanceSafely(g *Program) (done bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("Advance panicked: %v", r)
		}
	}()
	return g.Advance()
}

// runRecorded runs c like runComputation, but hands party 0 the dealer's
// corrections through edit (unchanged if nil), records every payload, and
// stops at the first party whose Advance fails instead of failing the test.
func runRecorded(t testing.TB, engines []*Engine, dealer *Engine, c computation, edit func([]uint64) []uint64) run {
	t.Helper()
	var r run
	r.corr = runDealer(t, dealer, c)
	corr := slices.Clone(r.corr)
	if edit != nil {
		corr = edit(corr)
	}
	engines[0].SetCorrections(corr)
	progs := make([]*Program, len(engines))
	outs := make([]func() []uint64, len(engines))
	r.sent = make([][]uint64, len(engines))
	for i, e := range engines {
		procs, out := c(e)
		progs[i], outs[i] = e.NewProgram(), out
		for _, p := range procs {
			progs[i].Go(p)
		}
	}
	for {
		dones := 0
		for i, g := range progs {
			done, err := advanceSafely(g)
			if err != nil {
				r.err, r.errAt = err, i
				return r
			}
			if done {
				dones++
			}
		}
		if dones == len(progs) {
			break
		}
		if dones != 0 {
			t.Fatalf("parties out of step: %d of %d finished", dones, len(progs))
		}
		pls := make([]Payload, len(engines))
		for i, e := range engines {
			pls[i] = e.Outgoing()
			r.sent[i] = append(append(r.sent[i], pls[i].Arith...), pls[i].Binary...)
		}
		for _, e := range engines {
			if err := e.Complete(pls); err != nil {
				t.Fatal(err)
			}
		}
	}
	r.left = engines[0].CorrectionsLeft()
	r.outs = make([][]uint64, len(engines))
	for i, o := range outs {
		r.outs[i] = o()
	}
	return r
}

// TestDeterminism runs the same computation twice from the same seeds: the
// shares, every word sent and the dealer's corrections must be identical,
// and party 0 must use the corrections exactly. Other seeds give other
// shares of the same results.
func TestDeterminism(t *testing.T) {
	fx := Fixed{16}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			var runs []run
			for _, seed := range []uint64{77, 77, 78} {
				engines, dealer := testEngines(t, P, 16, seed)
				r := runRecorded(t, engines, dealer, mixed(fx), nil)
				if r.err != nil {
					t.Fatalf("party %d: %v", r.errAt, r.err)
				}
				if r.left != 0 {
					t.Errorf("party 0 left %d correction words unused", r.left)
				}
				runs = append(runs, r)
			}
			a, b, c := runs[0], runs[1], runs[2]
			if !slices.Equal(a.corr, b.corr) {
				t.Errorf("the dealer's corrections differ between runs from the same seeds")
			}
			for p := range P {
				if !slices.Equal(a.outs[p], b.outs[p]) {
					t.Errorf("party %d's shares differ between runs from the same seeds", p)
				}
				if !slices.Equal(a.sent[p], b.sent[p]) {
					t.Errorf("party %d's payloads differ between runs from the same seeds", p)
				}
				if slices.Equal(a.outs[p], c.outs[p]) {
					t.Errorf("party %d's shares are the same from other seeds", p)
				}
			}
			// The exact outputs (sign and one-hot) agree across seeds.
			ra, rc := reconstruct(a.outs), reconstruct(c.outs)
			if !slices.Equal(ra[4:13], rc[4:13]) {
				t.Errorf("sign and argmax differ across seeds: %v vs %v", ra[4:13], rc[4:13])
			}
			if want := []uint64{0, 1, 1, 0, 0, 0, 1, 0, 0}; !slices.Equal(ra[4:13], want) {
				t.Errorf("sign and argmax %v, want %v", ra[4:13], want)
			}
		})
	}
}

// TestCorrectionCounts checks that the dealer makes exactly one correction
// word per output word of a product (the AND of binary words, the random
// bit of B2A) and two per truncated word (the shares of r′ and r₆₃), so
// nothing a party 0 receives is wasted.
func TestCorrectionCounts(t *testing.T) {
	cases := []struct {
		name   string
		na, nb int
		op     productOp
		want   func(P int) int
	}{
		{"MulElem", 9, 9, func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, func(int) int { return 9 }},
		{"MulScalar", 1, 9, func(e *Engine, oa, ob *Open) []uint64 { return e.MulScalar(oa, ob) }, func(int) int { return 9 }},
		{"Dot", 12, 12, func(e *Engine, oa, ob *Open) []uint64 { return e.Dot(oa, ob, 4) }, func(int) int { return 3 }},
		{"MatVec", 2 * 16, 4, func(e *Engine, oa, ob *Open) []uint64 { return e.MatVec(oa, ob, 4) }, func(int) int { return 8 }},
		{"Outer", 6, 6, func(e *Engine, oa, ob *Open) []uint64 { return e.Outer(oa, ob, 3) }, func(int) int { return 18 }},
		{"MulRows", 2, 6, func(e *Engine, oa, ob *Open) []uint64 { return e.MulRows(oa, ob, 3) }, func(int) int { return 6 }},
		{"MulElem+Trunc", 9, 9, func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, func(int) int { return 9 + 2*9 }},
	}
	for _, P := range partyCounts {
		for ci, c := range cases {
			t.Run(partiesName(P)+"/"+c.name, func(t *testing.T) {
				engines, dealer := testEngines(t, P, 16, uint64(1400*P+ci))
				rng := rand.New(rand.NewPCG(uint64(ci), 26))
				comp := product(randWords(rng, c.na), randWords(rng, c.nb), c.op, c.name == "MulElem+Trunc")
				r := runRecorded(t, engines, dealer, comp, nil)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if len(r.corr) != c.want(P) {
					t.Errorf("the dealer made %d correction words, want %d", len(r.corr), c.want(P))
				}
				if r.left != 0 {
					t.Errorf("party 0 left %d correction words unused", r.left)
				}
			})
		}
		t.Run(partiesName(P)+"/And+B2A", func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, uint64(1450*P))
			bs := xorShares([]uint64{1, 0, 1, 1, 0}, P, 1, 27)
			r := runRecorded(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				x := sharesFor(e, bs)
				var g *And
				var a, out []uint64
				p := e.NewProc(func() bool {
					g = e.AndStart(x, x)
					return true
				}, func() bool {
					a = e.AndResult(g)
					return true
				}, Later(func() *Proc { return e.B2A(a, &out) }))
				return []*Proc{p}, func() []uint64 { return out }
			}, nil)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if len(r.corr) != 10 {
				t.Errorf("the dealer made %d correction words, want 5 for the AND and 5 for B2A", len(r.corr))
			}
			if got := reconstruct(r.outs); !slices.Equal(got, []uint64{1, 0, 1, 1, 0}) {
				t.Errorf("B2A(x AND x) = %v", got)
			}
		})
	}
}

// TestShortCorrections gives party 0 fewer corrections than the dealer made:
// Program.Advance must return the error (and Err report it) instead of
// panicking or computing with missing words. One extra word is no error for
// Advance, but CorrectionsLeft shows it.
func TestShortCorrections(t *testing.T) {
	fx := Fixed{16}
	comps := []struct {
		name string
		c    computation
	}{
		{"MulElem", product(fx.EncodeAll([]float64{1, 2, 3}), fx.EncodeAll([]float64{4, 5, 6}),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MulElem(oa, ob) }, true)},
		{"LTZ", func(e *Engine) ([]*Proc, func() []uint64) {
			var out []uint64
			return []*Proc{e.LTZ(shareOf(e, []uint64{5, math.MaxUint64}), &out)}, func() []uint64 { return out }
		}},
		{"ArgMax", argMaxComputation(fx, []float64{1, 3, 2, 0})},
		{"Reciprocal", func(e *Engine) ([]*Proc, func() []uint64) {
			var out []uint64
			return []*Proc{e.Reciprocal(shareOf(e, fx.EncodeAll([]float64{1.5})), 1, 2, 3, &out)}, func() []uint64 { return out }
		}},
		{"mixed", mixed(fx)},
	}
	edits := []struct {
		name string
		edit func([]uint64) []uint64
		ok   bool // Advance succeeds
		left int  // then: the unused words
	}{
		{"one-short", func(c []uint64) []uint64 { return c[:len(c)-1] }, false, 0},
		{"half", func(c []uint64) []uint64 { return c[:len(c)/2] }, false, 0},
		{"empty", func(c []uint64) []uint64 { return c[:0] }, false, 0},
		{"nil", func([]uint64) []uint64 { return nil }, false, 0},
		{"one-extra", func(c []uint64) []uint64 { return append(c, 42) }, true, 1},
	}
	for _, P := range partyCounts {
		for ci, c := range comps {
			for _, ed := range edits {
				t.Run(partiesName(P)+"/"+c.name+"/"+ed.name, func(t *testing.T) {
					engines, dealer := testEngines(t, P, 16, uint64(1500*P+ci))
					r := runRecorded(t, engines, dealer, c.c, ed.edit)
					if ed.ok {
						if r.err != nil {
							t.Fatalf("party %d: %v", r.errAt, r.err)
						}
						if r.left != ed.left {
							t.Errorf("CorrectionsLeft = %d, want %d", r.left, ed.left)
						}
						return
					}
					if r.err == nil {
						t.Fatalf("the computation ran to its end with %d correction words missing", len(r.corr))
					}
					if r.errAt != 0 || !errors.Is(r.err, errCorrections) {
						t.Errorf("party %d: %v; want party 0: %v", r.errAt, r.err, errCorrections)
					}
					if !errors.Is(engines[0].Err(), errCorrections) {
						t.Errorf("Err() = %v, want %v", engines[0].Err(), errCorrections)
					}
				})
			}
		}
	}
}

// benchComputation runs c on fresh engines b.N times and reports the rounds
// and words party 0 sends per computation. Each iteration is the whole
// computation: the dealer's run and every party's, Complete included.
func benchComputation(b *testing.B, parties int, frac uint, c computation) {
	engines, dealer := testEngines(b, parties, frac, 1)
	ops := 0
	b.ReportAllocs()
	for b.Loop() {
		runComputation(b, engines, dealer, c)
		ops++
	}
	st := engines[0].Stats()
	b.ReportMetric(float64(st.Rounds)/float64(ops), "rounds/op")
	b.ReportMetric(float64(st.WordsSent)/float64(ops), "words/op")
}

// BenchmarkMatVecP2 is 10 fixed-point 20×20 matrices times a vector for two
// parties: one round for the products, one for the truncation.
func BenchmarkMatVecP2(b *testing.B) {
	const dim, mats = 20, 10
	fx := Fixed{16}
	rng := rand.New(rand.NewPCG(28, 29))
	m, v := fx.EncodeAll(fixedInputs(rng, mats*dim*dim, 4)), fx.EncodeAll(fixedInputs(rng, dim, 4))
	benchComputation(b, 2, 16, product(m, v, func(e *Engine, om, ov *Open) []uint64 { return e.MatVec(om, ov, dim) }, true))
}

// BenchmarkArgMax10P2 is the argmax of 10 arms for two parties.
func BenchmarkArgMax10P2(b *testing.B) {
	fx := Fixed{16}
	benchComputation(b, 2, 16, argMaxComputation(fx, []float64{0.1, 0.7, -0.3, 0.69, 0.2, 0, 0.5, -1, 0.65, 0.3}))
}

// BenchmarkReciprocalP2 is 1/d for 10 values in [1, 2], three iterations,
// for two parties.
func BenchmarkReciprocalP2(b *testing.B) {
	fx := Fixed{20}
	d := fx.EncodeAll([]float64{1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 2})
	benchComputation(b, 2, 20, func(e *Engine) ([]*Proc, func() []uint64) {
		var out []uint64
		return []*Proc{e.Reciprocal(shareOf(e, d), 1, 2, 3, &out)}, func() []uint64 { return out }
	})
}

// BenchmarkArgMax100P2 is the argmax of 100 scores for two parties.
func BenchmarkArgMax100P2(b *testing.B) {
	fx := Fixed{16}
	scores := make([]float64, 100)
	for i := range scores {
		scores[i] = float64((i*37)%100) / 100
	}
	benchComputation(b, 2, 16, argMaxComputation(fx, scores))
}
