package mpccb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/experiment"

	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
)

// Table 1: the operations of Algorithm 1 timed in plaintext and on secret
// shares.

// opRig is P computing engines and the dealer's, in one process: a
// computation runs on the dealer first (its corrections go to party 0),
// then on the parties in lock step, each round's payloads handed over in
// memory.
type opRig struct {
	parties []*mpc.Engine
	dealer  *mpc.Engine
}

func newOpRig(parties int, frac uint, seed uint64) (*opRig, error) {
	rng := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), 'o', 'p', 's'})
	next := func() mpc.Seed {
		var s mpc.Seed
		rng.Read(s[:])
		return s
	}
	cfg := mpc.Config{Parties: parties, Frac: frac}
	dealerSeeds := make([]mpc.Seed, parties)
	for p := range dealerSeeds {
		dealerSeeds[p] = next()
	}
	pair := make([][]mpc.Seed, parties)
	for p := range pair {
		pair[p] = make([]mpc.Seed, parties)
	}
	for p := range parties {
		for q := p + 1; q < parties; q++ {
			s := next()
			pair[p][q], pair[q][p] = s, s
		}
	}
	g := &opRig{}
	for p := range parties {
		e, err := mpc.NewParty(cfg, p, dealerSeeds[p], pair[p])
		if err != nil {
			return nil, err
		}
		g.parties = append(g.parties, e)
	}
	d, err := mpc.NewDealer(cfg, dealerSeeds)
	if err != nil {
		return nil, err
	}
	d.SetSampler(mpc.NewPRG(next()))
	g.dealer = d
	return g, nil
}

// engines returns the parties' engines and then the dealer's.
func (g *opRig) engines() []*mpc.Engine { return append(slices.Clone(g.parties), g.dealer) }

// share returns every engine's share of x, contributed by party 0 (the
// dealer's is zeros), in the order of engines.
func (g *opRig) share(x []uint64) [][]uint64 {
	var out [][]uint64
	for _, e := range g.engines() {
		out = append(out, e.Share(0, x, len(x)))
	}
	return out
}

// opComputation builds, on engine i of engines(), the procs of a
// computation and a function returning that engine's output shares.
type opComputation func(i int, e *mpc.Engine) (procs []*mpc.Proc, output func() []uint64)

// run runs c once and returns the computing parties' output shares.
func (g *opRig) run(c opComputation) ([][]uint64, error) {
	dprocs, _ := c(len(g.parties), g.dealer)
	dg := g.dealer.NewProgram()
	for _, p := range dprocs {
		dg.Go(p)
	}
	for {
		done, err := dg.Advance()
		if err != nil {
			return nil, fmt.Errorf("dealer: %w", err)
		}
		if done {
			break
		}
		if err := g.dealer.Complete(nil); err != nil {
			return nil, err
		}
	}
	g.parties[0].SetCorrections(g.dealer.TakeCorrections())
	progs := make([]*mpc.Program, len(g.parties))
	outs := make([]func() []uint64, len(g.parties))
	for i, e := range g.parties {
		procs, out := c(i, e)
		progs[i], outs[i] = e.NewProgram(), out
		for _, p := range procs {
			progs[i].Go(p)
		}
	}
	pls := make([]mpc.Payload, len(g.parties))
	for {
		dones := 0
		for i, pg := range progs {
			done, err := pg.Advance()
			if err != nil {
				return nil, fmt.Errorf("party %d: %w", i, err)
			}
			if done {
				dones++
			}
		}
		if dones == len(progs) {
			break
		}
		if dones != 0 {
			return nil, fmt.Errorf("parties out of step: %d of %d finished", dones, len(progs))
		}
		for i, e := range g.parties {
			pls[i] = e.Outgoing()
		}
		for _, e := range g.parties {
			if err := e.Complete(pls); err != nil {
				return nil, err
			}
		}
	}
	if left := g.parties[0].CorrectionsLeft(); left != 0 {
		return nil, fmt.Errorf("party 0 left %d correction words unused", left)
	}
	res := make([][]uint64, len(outs))
	for i, out := range outs {
		res[i] = out()
	}
	return res, nil
}

// perOp runs f until at least least has passed and returns the mean time
// per call in nanoseconds.
func perOp(least time.Duration, f func() error) (float64, error) {
	n := 1
	for {
		t0 := time.Now()
		for range n {
			if err := f(); err != nil {
				return 0, err
			}
		}
		el := time.Since(t0)
		if el >= least {
			return float64(el.Nanoseconds()) / float64(n), nil
		}
		grow := 100
		if el > 0 {
			grow = max(2, min(100, int(1.2*float64(least)/float64(el))+1))
		}
		n *= grow
	}
}

// decodeSum reconstructs and decodes fixed-point shares.
func decodeSum(fx mpc.Fixed, shares [][]uint64) []float64 {
	sum := make([]uint64, len(shares[0]))
	for _, s := range shares {
		for i, v := range s {
			sum[i] += v
		}
	}
	return fx.DecodeAll(sum)
}

// measureOps times Table 1's operations on |A| = 100 values for P = 2, and
// a matrix–vector product of Algorithm 1's size (W_a⁻¹x for every arm).
// Each private operation is first checked against plaintext.
func measureOps(least time.Duration, contexts [][]float64) ([]Op, error) {
	const n, dim, parties = 100, mpccbDims, 2
	rig, err := newOpRig(parties, mpccbPrecision, 1)
	if err != nil {
		return nil, err
	}
	fx := mpc.Fixed{Frac: mpccbPrecision}
	rng := rand.New(rand.NewPCG(5, 17))
	uniform := func(k int, lo, hi float64) []float64 {
		out := make([]float64, k)
		for i := range out {
			out[i] = lo + (hi-lo)*rng.Float64()
		}
		return out
	}
	a, bb, d, scores := uniform(n, -1, 1), uniform(n, -1, 1), uniform(n, 1, 2), uniform(n, -1, 1)
	w, x := uniform(n*dim*dim, -1, 1), contexts[0]
	sa, sb, sd, ss := rig.share(fx.EncodeAll(a)), rig.share(fx.EncodeAll(bb)), rig.share(fx.EncodeAll(d)), rig.share(fx.EncodeAll(scores))
	sw, sx := rig.share(fx.EncodeAll(w)), rig.share(fx.EncodeAll(x))
	c := make([]float64, n)
	cw := make([]float64, n*dim)
	var sink int

	type opDef struct {
		name, size, paper string
		plain             func()
		private           opComputation
		check             func(out []float64) error
	}
	near := func(want []float64, tol float64) func([]float64) error {
		return func(got []float64) error {
			for i := range want {
				if math.Abs(got[i]-want[i]) > tol {
					return fmt.Errorf("element %d: %v, want %v", i, got[i], want[i])
				}
			}
			return nil
		}
	}
	prod, recip, mv := make([]float64, n), make([]float64, n), make([]float64, n*dim)
	for i := range n {
		prod[i], recip[i] = a[i]*bb[i], 1/d[i]
		for r := range dim {
			for k := range dim {
				mv[i*dim+r] += w[(i*dim+r)*dim+k] * x[k]
			}
		}
	}
	best := 0
	for i, v := range scores {
		if v > scores[best] {
			best = i
		}
	}
	defs := []opDef{
		{name: "multiplication (fixed point)", size: fmt.Sprintf("%d values", n), paper: "2, 380×",
			plain: func() {
				for i := range c {
					c[i] = a[i] * bb[i]
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.MulFixed(sa[i], sb[i], &out)}, func() []uint64 { return out }
			}, check: near(prod, 1e-5)},
		{name: fmt.Sprintf("reciprocal (%d Newton–Raphson iterations)", mpccbIters), size: fmt.Sprintf("%d values in [1, 2]", n), paper: "30, 6,000×",
			plain: func() {
				for i := range c {
					c[i] = 1 / d[i]
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.Reciprocal(sd[i], 1, 2, mpccbIters, &out)}, func() []uint64 { return out }
			}, check: near(recip, 1e-4)},
		{name: "argmax (one-hot, random tie-break)", size: fmt.Sprintf("|A| = %d", n), paper: "O(P + log₂|A|), 34,000×",
			plain: func() {
				k := 0
				for i, v := range scores {
					if v > scores[k] {
						k = i
					}
				}
				sink += k
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var out []uint64
				return []*mpc.Proc{e.ArgMax(ss[i], e.DealtPermutation(n), &out)}, func() []uint64 { return out }
			}, check: func(got []float64) error {
				for i, v := range got {
					// The one-hot is in integers, not fixed point.
					want := 0.0
					if i == best {
						want = 1
					}
					if math.Abs(v*float64(fx.One())-want) > 1e-9 {
						return fmt.Errorf("arm %d: %v, want the one-hot of arm %d", i, v*float64(fx.One()), best)
					}
				}
				return nil
			}},
		{name: "matrix–vector W_a⁻¹x, every arm", size: fmt.Sprintf("%d × %d×%d", n, dim, dim), paper: "—",
			plain: func() {
				for i := range n {
					for r := range dim {
						var s float64
						row := w[(i*dim+r)*dim : (i*dim+r+1)*dim]
						for k, v := range row {
							s += v * x[k]
						}
						cw[i*dim+r] = s
					}
				}
			},
			private: func(i int, e *mpc.Engine) ([]*mpc.Proc, func() []uint64) {
				var ow, ox *mpc.Open
				var t *mpc.Trunc
				var out []uint64
				p := e.NewProc(func() bool {
					ow, ox = e.Mask(sw[i]), e.Mask(sx[i])
					return true
				}, func() bool {
					t = e.TruncStart(e.MatVec(ow, ox, dim))
					return true
				}, func() bool {
					out = t.Result()
					return true
				})
				return []*mpc.Proc{p}, func() []uint64 { return out }
			}, check: near(mv, 1e-4)},
	}
	// Addition is local: every engine adds its shares, nothing is opened.
	plainAdd, err := perOp(least, func() error {
		for i := range c {
			c[i] = a[i] + bb[i]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	privAdd, err := perOp(least, func() error {
		for i := range rig.engines() {
			_ = mpc.Add(sa[i], sb[i])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ops := []Op{{Operation: "addition", Size: fmt.Sprintf("%d values", n), Rounds: 0, PlainNs: plainAdd, PrivateNs: privAdd, Paper: "0, 11×"}}
	for _, def := range defs {
		out, err := rig.run(def.private)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def.name, err)
		}
		if err := def.check(decodeSum(fx, out)); err != nil {
			return nil, fmt.Errorf("%s is wrong: %w", def.name, err)
		}
		plain, err := perOp(least, func() error { def.plain(); return nil })
		if err != nil {
			return nil, err
		}
		r0 := rig.parties[0].Stats().Rounds
		calls := 0
		priv, err := perOp(least, func() error {
			calls++
			_, err := rig.run(def.private)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", def.name, err)
		}
		rounds := float64(rig.parties[0].Stats().Rounds-r0) / float64(calls)
		ops = append(ops, Op{Operation: def.name, Size: def.size, Rounds: rounds, PlainNs: plain, PrivateNs: priv, Paper: def.paper})
	}
	_ = sink
	return ops, nil
}

// stepPlain is the plaintext reference's time per Step at |A| = Arms.
type stepPlain struct {
	Arms int     `json:"arms"`
	Ns   float64 `json:"ns"`
}

// measureStepPlain times the plaintext reference's Step for Table 1's
// whole-step rows: at |A| = 10 always, and at |A| = 100 where the timing
// runs (timing, one per point) have a P = 2 point at |A| = 100.
func measureStepPlain(timing []Session, all, contexts, rewards [][]float64, least time.Duration) ([]stepPlain, error) {
	type row struct {
		arms                  int
		contexts, rewardTable [][]float64
	}
	// The data set does not change the work.
	rows := []row{{10, contexts, rewards}}
	if _, ok := timingAt(timing, 100, 2); ok {
		// Timing only: the rewards do not change the reference's work.
		zero := make([][]float64, len(all))
		flat := make([]float64, 100)
		for i := range zero {
			zero[i] = flat
		}
		rows = append(rows, row{100, all, zero})
	}
	var out []stepPlain
	for _, r := range rows {
		p := mpccb.DefaultParams()
		p.Epsilon, p.Arms, p.Dimensions, p.PrecisionBits, p.ReciprocalIterations = 0.1, r.arms, mpccbDims, mpccbPrecision, mpccbIters
		var seed mpc.Seed
		ref := mpccb.NewReference(p, seed)
		t := 0
		plain, err := perOp(least, func() error {
			ref.Step(r.contexts[t], r.rewardTable[t])
			t = (t + 1) % len(r.contexts)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, stepPlain{Arms: r.arms, Ns: plain})
	}
	return out, nil
}

// addStepRows adds Table 1's whole-step rows: the private learner's time
// per step from the simulations (all roles; the P = 2 timing runs at |A| =
// 10 and 100, or the reward runs' mean without a timing run at 10) against
// the plaintext reference's Step (plain, measureStepPlain's).
func addStepRows(rep *Report, plain []stepPlain) {
	reward, timing := splitRuns(rep.Runs)
	var ms, rounds []float64
	for _, r := range reward {
		ms, rounds = append(ms, r.MsPerStep), append(rounds, r.RoundsPerStep)
	}
	for _, p := range plain {
		var priv, rnd float64
		paper := "—"
		if r, ok := timingAt(timing, p.Arms, 2); ok {
			// Timed alone, unlike the reward runs.
			priv, rnd = r.MsPerStep, r.RoundsPerStep
		} else if p.Arms == 10 && len(ms) > 0 {
			priv, rnd = experiment.Summarize(ms).Mean, experiment.Summarize(rounds).Mean
		} else {
			continue
		}
		if p.Arms == 10 {
			paper = "—, ≈ 500×"
		}
		rep.Ops = append(rep.Ops, Op{Operation: "whole learner step", Size: fmt.Sprintf("|A| = %d", p.Arms), Rounds: rnd,
			PlainNs: p.Ns, PrivateNs: priv * 1e6, Paper: paper})
	}
}
