package mpc

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFusedProducts checks that every product taking a truncation's result
// fused (Trunc.Open), alone, scaled, shifted or added, equals the same
// product on the result opened again with Mask — exactly, as both multiply
// the same shared values — and that SharesOf gives back the result.
func TestFusedProducts(t *testing.T) {
	const dim = 3
	fx := Fixed{16}
	rng := rand.New(rand.NewPCG(5, 6))
	vals := func(n int) []uint64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = rng.Float64()*4 - 2
		}
		return fx.EncodeAll(out)
	}
	// The operands: m (2 matrices), a and b (2 blocks), v (one block), s
	// (one scalar a block), k (one scalar).
	ins := [][]uint64{vals(2 * dim * dim), vals(2 * dim), vals(2 * dim), vals(dim), vals(2), vals(1)}
	const M, A, B, V, S, K = 0, 1, 2, 3, 4, 5
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, 70+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var ts []*Trunc
				var fused, plain []*Open
				var fusedOut, plainOut [][]uint64
				p := e.NewProc(func() bool {
					for _, x := range ins {
						// x·2^L truncated by L: x or x + 1 ulp, shared.
						ts = append(ts, e.TruncStart(Scale(shareOf(e, x), fx.One())))
					}
					return true
				}, func() bool {
					for _, tr := range ts {
						fused = append(fused, tr.Open())
						plain = append(plain, e.Mask(tr.Result()))
					}
					// A composite: 3a + b + 5 (shifted, scaled, added).
					fused = append(fused, AddOpen(fused[A].Times(3), fused[B]).Plus([]uint64{5}))
					plain = append(plain, e.Mask(e.AddConst(Add(Scale(ts[A].Result(), 3), ts[B].Result()), 5)))
					return true
				}, func() bool {
					ops := func(x, y func(int) *Open) [][]uint64 {
						return [][]uint64{
							e.MulElem(x(A), y(B)),
							e.MulElem(x(6), y(A)),
							e.MulScalar(x(K), y(A)),
							e.Dot(x(A), y(B), dim),
							e.Dot(x(A), y(V), dim),
							e.MatVec(x(M), y(V), dim),
							e.MatVec(x(M), y(A), dim),
							e.Outer(x(A), y(B), dim),
							e.MatMul(x(M), y(M), dim),
							e.MulRows(x(S), y(A), dim),
							e.MulRows(x(S), y(V), dim),
						}
					}
					f := func(i int) *Open { return fused[i] }
					pl := func(i int) *Open { return plain[i] }
					fusedOut = slices.Concat(ops(f, f), ops(f, pl), ops(pl, f))
					plainOut = slices.Concat(ops(pl, pl), ops(pl, pl), ops(pl, pl))
					for i := range ts {
						fusedOut = append(fusedOut, e.SharesOf(fused[i]))
						plainOut = append(plainOut, ts[i].Result())
					}
					return true
				})
				return []*Proc{p}, func() []uint64 {
					return append(slices.Concat(fusedOut...), slices.Concat(plainOut...)...)
				}
			})
			got := reconstruct(shares)
			f, p := got[:len(got)/2], got[len(got)/2:]
			for i := range f {
				if f[i] != p[i] {
					t.Fatalf("word %d: fused %d, opened again %d", i, int64(f[i]), int64(p[i]))
				}
			}
			if r := engines[0].Stats().Rounds; r != 2 {
				t.Errorf("%d rounds, want 2 (the truncation, the plain openings)", r)
			}
		})
	}
}

// TestReciprocalOpen checks the fused reciprocal's values and its rounds,
// 1 + iters.
func TestReciprocalOpen(t *testing.T) {
	fx := Fixed{20}
	ds := []float64{1, 1.1, 1.5, 1.99, 2, 1.333}
	for _, P := range partyCounts {
		for _, iters := range []int{1, 3} {
			t.Run(partiesName(P), func(t *testing.T) {
				engines, dealer := testEngines(t, P, 20, 80+uint64(P))
				shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
					var od, out *Open
					p := e.NewProc(func() bool {
						od = e.Mask(shareOf(e, fx.EncodeAll(ds)))
						return true
					}, Later(func() *Proc { return e.ReciprocalOpen(od, 1, 2, iters, &out) }))
					return []*Proc{p}, func() []uint64 { return e.SharesOf(out) }
				})
				got := fx.DecodeAll(reconstruct(shares))
				_, _, e0 := ReciprocalGuessBits(1, 2, guessBits)
				if e0 > 1.0/16 {
					t.Fatalf("the rounded guess's error is %g, above 1/16", e0)
				}
				tol := math.Pow(e0, math.Pow(2, float64(iters))) + 1e-5
				for i, d := range ds {
					if math.Abs(got[i]*d-1) > tol {
						t.Errorf("%d iterations: 1/%g = %g, want %g", iters, d, got[i], 1/d)
					}
				}
				if r, want := engines[0].Stats().Rounds, 1+1+iters; r != want {
					t.Errorf("%d rounds, want %d (the opening of d, 1 + %d)", r, want, iters)
				}
			})
		}
	}
}

// TestMany checks products of many factors, bits and arithmetic, with the
// dealer's factors, against their plain values.
func TestMany(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 40
	bits := make([]uint64, n)
	ints := make([]uint64, n)
	for i := range bits {
		bits[i] = uint64(rng.IntN(4) / 3) // mostly zeros, some ones
		if i%5 != 0 {
			bits[i] = 1 // and groups of ones
		}
		ints[i] = uint64(rng.IntN(7)) - 3
	}
	var groups [][]int
	for i := 0; i < n; {
		size := 1 + len(groups)%7
		var g []int
		for j := i; j < min(i+size, n); j++ {
			g = append(g, j)
		}
		groups = append(groups, g)
		i += size
	}
	factor := func(f []uint64) {
		for i := range f {
			f[i] = uint64(i) + 2
		}
	}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, 90+uint64(P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var and, mul *Many
				var out []uint64
				p := e.NewProc(func() bool {
					// Bit 0 of arithmetic shares is a binary sharing of
					// bit 0 of their sum.
					and = e.AndManyStart(e.Share(0, bits, n), groups)
					mul = e.MulManyStart(shareOf(e, ints), groups)
					return true
				}, func() bool {
					out = append(e.ManyResult(and, factor), e.ManyResult(mul, nil)...)
					return true
				})
				return []*Proc{p}, func() []uint64 { return out }
			})
			got := reconstruct(shares)
			for gi, g := range groups {
				wantAnd, wantMul := uint64(gi)+2, uint64(1)
				for _, i := range g {
					wantAnd *= bits[i]
					wantMul *= ints[i]
				}
				if got[gi] != wantAnd || got[len(groups)+gi] != wantMul {
					t.Errorf("group %v: AND·f %d, product %d; want %d, %d", g, got[gi], int64(got[len(groups)+gi]), wantAnd, int64(wantMul))
				}
			}
			if r := engines[0].Stats().Rounds; r != 1 {
				t.Errorf("%d rounds, want 1", r)
			}
		})
	}
}

// TestArgMaxOr checks the one-round-AND argmax: the argmax when the dealer's
// y is 0, its alternative when y is 1, and 6 + the tree's levels rounds for
// two parties.
func TestArgMaxOr(t *testing.T) {
	fx := Fixed{16}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, P := range partyCounts {
		for _, c := range []struct {
			n    int
			tree Tree
		}{{2, TreeFewestRounds}, {4, TreeFewestRounds}, {10, TreeFewestRounds}, {30, TreeFewestRounds}, {9, TreeFewestWords}, {10, TreeFewestWords}, {30, TreeFewestWords},
			{2, TreeTournament}, {3, TreeTournament}, {9, TreeTournament}, {10, TreeTournament}, {30, TreeTournament}} {
			n, tree := c.n, c.tree
			for _, y := range []uint64{0, 1} {
				scores := make([]float64, n)
				for i := range scores {
					scores[i] = float64(rng.IntN(2*n)) / 4 // ties
				}
				alt := (n / 3) % n
				t.Run(partiesName(P), func(t *testing.T) {
					run := func(tree Tree) ([]uint64, int) {
						engines, dealer := testEngines(t, P, 16, 100+uint64(P))
						shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
							var out []uint64
							return []*Proc{e.ArgMaxOr(shareOf(e, fx.EncodeAll(scores)), e.DealtPermutation(n), tree, func(z []uint64) uint64 {
								z[alt] = 1
								return y
							}, &out)}, func() []uint64 { return out }
						})
						return reconstruct(shares), engines[0].Stats().Rounds
					}
					got, rounds := run(tree)
					at := -1
					for i, v := range got {
						if v == 1 && at < 0 {
							at = i
						} else if v != 0 {
							t.Fatalf("n = %d: one-hot %v", n, got)
						}
					}
					best := slices.Max(scores)
					switch {
					case at < 0:
						t.Fatalf("n = %d: one-hot %v", n, got)
					case y == 1 && at != alt:
						t.Errorf("n = %d, y = 1: arm %d, want the alternative %d", n, at, alt)
					case y == 0 && scores[at] != best:
						t.Errorf("n = %d, y = 0: arm %d scores %g, the best %g", n, at, scores[at], best)
					}
					if tree != TreeFewestRounds {
						// The same keys (the same γ): the same arm, ties included.
						if want, _ := run(TreeFewestRounds); !slices.Equal(got, want) {
							t.Errorf("n = %d: one-hot %v, TreeFewestRounds' %v", n, got, want)
						}
					}
					if P == 2 {
						want := 6 + len(treeFanIns(n, n-1, tree))
						if tree == TreeTournament {
							want = tournamentRounds(n)
						}
						if rounds != want {
							t.Errorf("n = %d: %d rounds, want %d", n, rounds, want)
						}
					}
				})
			}
		}
	}
}

// TestTournamentWords counts what an argmax of 10 arms costs with each
// tree — the dealer's correction words and the words party 0 sends — and
// checks that the tournament's are the fewest, by the margins that make it
// the batches' tree (at most a third of TreeFewestWords' either way).
func TestTournamentWords(t *testing.T) {
	const n = 10
	fx := Fixed{16}
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = float64(i%4) / 2
	}
	comp := func(tree Tree) computation {
		return func(e *Engine) ([]*Proc, func() []uint64) {
			var out []uint64
			return []*Proc{e.ArgMaxOr(shareOf(e, fx.EncodeAll(scores)), e.DealtPermutation(n), tree, func(z []uint64) uint64 {
				z[0] = 1
				return 0
			}, &out)}, func() []uint64 { return out }
		}
	}
	type cost struct{ dealer, sent int }
	costs := map[Tree]cost{}
	for _, tree := range []Tree{TreeFewestRounds, TreeFewestWords, TreeTournament} {
		engines, dealer := testEngines(t, 2, 16, 5)
		r := runRecorded(t, engines, dealer, comp(tree), nil)
		if r.err != nil {
			t.Fatal(r.err)
		}
		sent := len(r.sent[0])
		costs[tree] = cost{len(r.corr), sent}
		t.Logf("tree %d: %d dealer's words, party 0 sends %d", tree, len(r.corr), sent)
	}
	tw, fw := costs[TreeTournament], costs[TreeFewestWords]
	if 3*tw.dealer > fw.dealer || 3*tw.sent > fw.sent {
		t.Errorf("the tournament costs %+v, TreeFewestWords %+v: want at most a third of either", tw, fw)
	}
}

// TestTreeFanIns pins the AND tree's levels with TreeFewestRounds: one for
// up to 11 arms, and the two-input tree's (8 for 256 arms) when the
// dealer's words allow no more.
func TestTreeFanIns(t *testing.T) {
	for _, c := range []struct{ n, levels int }{{2, 1}, {3, 1}, {10, 1}, {11, 1}, {12, 2}, {20, 2}, {50, 2}, {100, 3}, {256, 8}} {
		fs := treeFanIns(c.n, c.n-1, TreeFewestRounds)
		if len(fs) != c.levels {
			t.Errorf("%d arms: fan-ins %v, want %d levels", c.n, fs, c.levels)
		}
		words, w := 0, c.n-1
		for _, f := range fs {
			if f > maxFanIn {
				t.Errorf("%d arms: fan-in %d above %d", c.n, f, maxFanIn)
			}
			g := (w + f - 1) / f
			words += c.n * g << f
			w = g
		}
		if w != 1 || (words > c.n*maxTreeWordsPerRow && fs[0] > 2) {
			t.Errorf("%d arms: fan-ins %v leave %d inputs, %d words", c.n, fs, w, words)
		}
	}
}

// TestTreeFewestWords pins TreeFewestWords' fan-ins and checks that no
// fan-in deals fewer words, and that it never deals more than
// TreeFewestRounds.
func TestTreeFewestWords(t *testing.T) {
	words := func(n int, fs []int) int {
		total, w := 0, n-1
		for _, f := range fs {
			g := (w + f - 1) / f
			total += n * g << f
			w = g
		}
		if w != 1 {
			t.Fatalf("%d arms: fan-ins %v leave %d inputs", n, fs, w)
		}
		return total
	}
	for _, c := range []struct {
		n    int
		want []int
	}{{2, []int{1}}, {4, []int{3}}, {9, []int{2, 2, 2}}, {10, []int{3, 3}}, {11, []int{2, 2, 2, 2}}, {28, []int{3, 3, 3}}, {100, []int{3, 3, 3, 3, 3}}} {
		fs := treeFanIns(c.n, c.n-1, TreeFewestWords)
		if !slices.Equal(fs, c.want) {
			t.Errorf("%d arms: fan-ins %v, want %v", c.n, fs, c.want)
		}
		got := words(c.n, fs)
		for f := 2; f <= min(maxFanIn, c.n-1); f++ {
			var each []int
			for w := c.n - 1; w > 1; w = (w + f - 1) / f {
				each = append(each, f)
			}
			if w := words(c.n, each); w < got {
				t.Errorf("%d arms: fan-in %d deals %d words, fewer than the pick's %d", c.n, f, w, got)
			}
		}
		if r := words(c.n, treeFanIns(c.n, c.n-1, TreeFewestRounds)); got > r {
			t.Errorf("%d arms: %d words, more than TreeFewestRounds' %d", c.n, got, r)
		}
	}
}

// TestMSBMerged checks the merged sign against the values' top bits, with
// as many words as TestMSBAndLTZ, and its rounds: one fewer than MSB's.
func TestMSBMerged(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			xs := signValues(rng)
			engines, dealer := testEngines(t, P, 16, uint64(950*P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var out []uint64
				return []*Proc{e.MSBMerged(shareOf(e, xs), &out)}, func() []uint64 { return out }
			})
			got := xorAll(shares)
			for i, x := range xs {
				if want := x >> 63; got[i] != want {
					t.Errorf("MSBMerged(%d) = %#x, want %d", int64(x), got[i], want)
				}
			}
			if r, want := engines[0].Stats().Rounds, 6+csaRounds(P); r != want {
				t.Errorf("%d rounds, want %d", r, want)
			}
		})
	}
}

// TestAndN checks ANDs of two to five words against their plain values.
func TestAndN(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	const n = 16
	var groups [][][]uint64
	for k := 2; k <= 5; k++ {
		var fs [][]uint64
		for range k {
			f := make([]uint64, n)
			for i := range f {
				a, b := rng.Uint64(), rng.Uint64()
				f[i] = a | b // denser, so ANDs keep bits
			}
			fs = append(fs, f)
		}
		groups = append(groups, fs)
	}
	for _, P := range partyCounts {
		t.Run(partiesName(P), func(t *testing.T) {
			engines, dealer := testEngines(t, P, 16, uint64(960*P))
			shares := runComputation(t, engines, dealer, func(e *Engine) ([]*Proc, func() []uint64) {
				var g *AndN
				var out []uint64
				p := e.NewProc(func() bool {
					var shared [][][]uint64
					for _, fs := range groups {
						var s [][]uint64
						for _, f := range fs {
							s = append(s, e.PublicBinary(f))
						}
						shared = append(shared, s)
					}
					g = e.AndNStart(shared)
					return true
				}, func() bool {
					out = slices.Concat(e.AndNResult(g)...)
					return true
				})
				return []*Proc{p}, func() []uint64 { return out }
			})
			got := xorAll(shares)
			for gi, fs := range groups {
				for i := range n {
					want := ^uint64(0)
					for _, f := range fs {
						want &= f[i]
					}
					if got[gi*n+i] != want {
						t.Fatalf("group of %d, word %d: %#x, want %#x", len(fs), i, got[gi*n+i], want)
					}
				}
			}
		})
	}
}
