package mpc

import (
	"fmt"
	"math"
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
		vo := 0
		if len(v) != dim { // a vector per matrix
			vo = r / dim * dim
		}
		for i := range dim {
			out[r] += m[r*dim+i] * v[vo+i]
		}
	}
	return out
}

func refMatMul[T uint64 | float64](a, b []T, dim int) []T {
	sq := dim * dim
	out := make([]T, len(a))
	for k := range len(a) / sq {
		bo := k * sq
		if len(b) == sq {
			bo = 0
		}
		for i := range dim {
			for j := range dim {
				for l := range dim {
					out[k*sq+i*dim+j] += a[k*sq+i*dim+l] * b[bo+l*dim+j]
				}
			}
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
	matMul := func(dim int) productOp {
		return func(e *Engine, oa, ob *Open) []uint64 { return e.MatMul(oa, ob, dim) }
	}
	refMatMulDim := func(dim int) func(a, b []uint64) []uint64 {
		return func(a, b []uint64) []uint64 { return refMatMul(a, b, dim) }
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
		cases = append(cases, productCase[uint64]{fmt.Sprintf("MatVec/%dx%d", sh.mats, sh.dim), randWords(rng, n), randWords(rng, sh.dim), matVec(sh.dim), refMatVecDim(sh.dim)},
			productCase[uint64]{fmt.Sprintf("MatVec/%dx%d, a vector each", sh.mats, sh.dim), randWords(rng, n), randWords(rng, sh.mats*sh.dim), matVec(sh.dim), refMatVecDim(sh.dim)})
	}
	for _, sh := range []struct{ mats, dim int }{{1, 1}, {1, 5}, {4, 6}, {3, 16}} {
		n := sh.mats * sh.dim * sh.dim
		cases = append(cases,
			productCase[uint64]{fmt.Sprintf("MatMul/per-matrix/%dx%d", sh.mats, sh.dim), randWords(rng, n), randWords(rng, n), matMul(sh.dim), refMatMulDim(sh.dim)},
			productCase[uint64]{fmt.Sprintf("MatMul/shared/%dx%d", sh.mats, sh.dim), randWords(rng, n), randWords(rng, sh.dim*sh.dim), matMul(sh.dim), refMatMulDim(sh.dim)})
	}
	cases = append(cases, productCase[uint64]{"MatMul/edges", ringEdges, slices.Clone(ringEdges), matMul(4), refMatMulDim(4)})
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
		{"MatMul", fixedInputs(rng, 3*25, 8), fixedInputs(rng, 3*25, 8),
			func(e *Engine, oa, ob *Open) []uint64 { return e.MatMul(oa, ob, 5) },
			func(a, b []float64) []float64 { return refMatMul(a, b, 5) }},
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

// TestSumOuter checks SumOuter over the ring against the plaintext sum of
// outer products, for 2, 3 and 5 parties, square (m = n = 4) and of one
// row (m = 1, as a batch's rewards times its contexts): exact in Z/2^64,
// one round, and one dealt word per output however many pairs are summed
// (the dealer's corrections of n pairs are those of one).
func TestSumOuter(t *testing.T) {
	const rows, dim = 3, 4
	for _, P := range partyCounts {
		for _, c := range []struct{ m, n int }{{1, 1}, {1, 7}, {dim, 1}, {dim, 7}} {
			m, n := c.m, c.n
			t.Run(fmt.Sprintf("%s/%d×%d, %d pairs", partiesName(P), m, dim, n), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(P), uint64(n)))
				ys, xs := make([][]uint64, n), make([][]uint64, n)
				want := make([]uint64, rows*m*dim)
				for j := range n {
					ys[j], xs[j] = randWords(rng, rows*m), randWords(rng, dim)
					for k := range rows {
						for i := range m {
							for l := range dim {
								want[(k*m+i)*dim+l] += ys[j][k*m+i] * xs[j][l]
							}
						}
					}
				}
				comp := overMaskedPairs(ys, xs, func(e *Engine, oy, ox []*Open) []uint64 {
					return e.SumOuter(oy, ox, rows, m, dim)
				})
				engines, dealer := testEngines(t, P, 16, uint64(10*P+n))
				checkExact(t, reconstruct(runComputation(t, engines, dealer, comp)), want)
				if st := engines[0].Stats(); st.Rounds != 1 {
					t.Errorf("%d rounds, want 1", st.Rounds)
				}
				r := runRecorded(t, engines, dealer, comp, nil)
				if r.err != nil {
					t.Fatal(r.err)
				}
				if len(r.corr) != rows*m*dim {
					t.Errorf("%d correction words for %d pairs, want %d (one an output)", len(r.corr), n, rows*m*dim)
				}
			})
		}
	}
}
