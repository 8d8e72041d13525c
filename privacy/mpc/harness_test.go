package mpc

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// computation builds, on one engine, the procs of a computation and a
// function that returns this engine's output shares once they have run.
type computation func(e *Engine) (procs []*Proc, output func() []uint64)

// testEngines returns the engines of parties computing parties and a dealer,
// with seeds drawn from seed.
func testEngines(t testing.TB, parties int, frac uint, seed uint64) ([]*Engine, *Engine) {
	t.Helper()
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 7})
	rs := func() Seed {
		var s Seed
		rng.Read(s[:])
		return s
	}
	cfg := Config{Parties: parties, Frac: frac}
	dealerSeeds := make([]Seed, parties)
	for p := range dealerSeeds {
		dealerSeeds[p] = rs()
	}
	pair := make([][]Seed, parties)
	for p := range pair {
		pair[p] = make([]Seed, parties)
	}
	for p := range parties {
		for q := p + 1; q < parties; q++ {
			s := rs()
			pair[p][q], pair[q][p] = s, s
		}
	}
	engines := make([]*Engine, parties)
	for p := range engines {
		e, err := NewParty(cfg, p, dealerSeeds[p], pair[p])
		if err != nil {
			t.Fatal(err)
		}
		engines[p] = e
	}
	d, err := NewDealer(cfg, dealerSeeds)
	if err != nil {
		t.Fatal(err)
	}
	d.SetSampler(NewPRG(rs()))
	return engines, d
}

// runComputation runs c on the dealer, then on every party in lock step,
// and returns each party's output shares.
func runComputation(t testing.TB, engines []*Engine, dealer *Engine, c computation) [][]uint64 {
	t.Helper()
	dprocs, _ := c(dealer)
	dg := dealer.NewProgram()
	for _, p := range dprocs {
		dg.Go(p)
	}
	for {
		done, err := dg.Advance()
		if err != nil {
			t.Fatalf("dealer: %v", err)
		}
		if done {
			break
		}
		if err := dealer.Complete(nil); err != nil {
			t.Fatal(err)
		}
	}
	engines[0].SetCorrections(dealer.TakeCorrections())
	progs := make([]*Program, len(engines))
	outs := make([]func() []uint64, len(engines))
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
			done, err := g.Advance()
			if err != nil {
				t.Fatalf("party %d: %v", i, err)
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
		}
		for _, e := range engines {
			if err := e.Complete(pls); err != nil {
				t.Fatal(err)
			}
		}
	}
	if left := engines[0].CorrectionsLeft(); left != 0 {
		t.Fatalf("party 0 left %d correction words unused", left)
	}
	res := make([][]uint64, len(engines))
	for i, o := range outs {
		res[i] = o()
	}
	return res
}

// reconstruct sums shares.
func reconstruct(shares [][]uint64) []uint64 {
	out := make([]uint64, len(shares[0]))
	for _, s := range shares {
		for i, v := range s {
			out[i] += v
		}
	}
	return out
}

// shareInputs gives each engine its share of x, contributed by party 0.
func shareOf(e *Engine, x []uint64) []uint64 { return e.Share(0, x, len(x)) }

// overMaskedPairs is the computation that opens each pair (ys[j], xs[j]),
// shared by party 0, under masks in one round and then applies op to the
// openings: the shape of SumOuter's and WeightedGram's tests.
func overMaskedPairs(ys, xs [][]uint64, op func(e *Engine, oy, ox []*Open) []uint64) computation {
	return func(e *Engine) ([]*Proc, func() []uint64) {
		oy, ox := make([]*Open, len(ys)), make([]*Open, len(xs))
		var out []uint64
		return []*Proc{e.NewProc(func() bool {
			for j := range ys {
				oy[j], ox[j] = e.Mask(shareOf(e, ys[j])), e.Mask(shareOf(e, xs[j]))
			}
			return true
		}, func() bool {
			out = op(e, oy, ox)
			return true
		})}, func() []uint64 { return out }
	}
}

// checkExact fails t at the first word of got that is not want's.
func checkExact(t *testing.T, got, want []uint64) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: %#x, want %#x", i, got[i], want[i])
		}
	}
}

func partiesName(p int) string { return fmt.Sprintf("P=%d", p) }

// repeat returns n copies of v.
func repeat(v uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
