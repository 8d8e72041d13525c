package mpc

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

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
