package mpccb

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/bandit-node/bandit-node/privacy/mpc"
)

// benchLearners returns P parties' learners and the dealer's for p.
func benchLearners(b testing.TB, p Params, P int) (*learner, []*learner) {
	var seeds []mpc.Seed
	for i := range P {
		seeds = append(seeds, mpc.Seed{byte(i + 1)})
	}
	cfg := mpc.Config{Parties: P, Frac: uint(p.PrecisionBits)}
	dealer, err := mpc.NewDealer(cfg, seeds)
	if err != nil {
		b.Fatal(err)
	}
	dealer.SetSampler(mpc.NewPRG(mpc.Seed{9}))
	ls := make([]*learner, P)
	for i := range ls {
		pairs := make([]mpc.Seed, P)
		for q := range pairs {
			pairs[q] = mpc.Seed{byte(min(i, q)), byte(max(i, q))}
		}
		e, err := mpc.NewParty(cfg, i, seeds[i], pairs)
		if err != nil {
			b.Fatal(err)
		}
		ls[i] = newLearner(e, p)
	}
	return newLearner(dealer, p), ls
}

// privateStep runs one step of the learner on every party and the dealer,
// in this process, exchanging the rounds' payloads in memory. inputs gives
// a party's shares of the context and of the reward row; outputs what the
// step reveals at that party.
func privateStep(tb testing.TB, dl *learner, ls []*learner, inputs func(l *learner) (x, rr []uint64), outputs stepOutputs) {
	tb.Helper()
	g := dl.step(make([]uint64, dl.dim), make([]uint64, dl.arms), stepOutputs{})
	progs := make([]*mpc.Program, len(ls))
	for i, l := range ls {
		x, rr := inputs(l)
		progs[i] = l.step(x, rr, outputs)
	}
	runPrograms(tb, dl, g, ls, progs, nil)
}

// sharedByParty0 shares x and row from party 0, as privateStep's inputs.
func sharedByParty0(x, row []float64) func(l *learner) ([]uint64, []uint64) {
	return func(l *learner) ([]uint64, []uint64) {
		fx := l.e.Fixed()
		return l.e.Share(0, fx.EncodeAll(x), len(x)), l.e.Share(0, fx.EncodeAll(row), len(row))
	}
}

// BenchmarkPrivateStep is one step of Algorithm 1 on shares, all parties
// and the dealer in one goroutine, no network: the compute cost of a step.
func BenchmarkPrivateStep(b *testing.B) {
	for _, c := range []struct {
		name       string
		arms, pars int
		wire       string
	}{{"A10_P2", 10, 2, ""}, {"A10_P3", 10, 3, ""}, {"A50_P2", 50, 2, ""}, {"A100_P2", 100, 2, ""},
		{"A10_P2_wire1.1.0", 10, 2, wireV110}, {"A100_P2_wire1.1.0", 100, 2, wireV110}} {
		b.Run(c.name, func(b *testing.B) {
			p := DefaultParams()
			p.Arms, p.wire = c.arms, c.wire
			xs, rs := toyData(256, p.Arms, p.Dimensions, 1)
			dl, ls := benchLearners(b, p, c.pars)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				privateStep(b, dl, ls, sharedByParty0(xs[i%len(xs)], rs[i%len(rs)]), stepOutputs{})
			}
			b.ReportMetric(float64(ls[0].e.Stats().Rounds)/float64(b.N), "rounds/step")
			b.ReportMetric(float64(ls[0].e.Stats().WordsSent)/float64(b.N), "words/step")
		})
	}
}

// TestPrivateStepAllocates: once the engines have recycled a step's words
// (mpc.Engine.Recycle), a private step — two parties and the dealer, |A| =
// 10 — allocates a few hundred KB at most (166 KB when this was written;
// 4.3 MB before the engine reused its words), so a session's memory does not
// grow with its length and its speed does not hang on the collector's target.
func TestPrivateStepAllocates(t *testing.T) {
	const maxBytesPerStep = 1 << 20
	p := DefaultParams()
	xs, rs := toyData(64, p.Arms, p.Dimensions, 1)
	dl, ls := benchLearners(t, p, 2)
	step := func(i int) { privateStep(t, dl, ls, sharedByParty0(xs[i%len(xs)], rs[i%len(rs)]), stepOutputs{}) }
	for i := range 3 { // the engines size their scratch words
		step(i)
	}
	const steps = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range steps {
		step(3 + i)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / steps; per > maxBytesPerStep {
		t.Errorf("a private step allocated %d bytes; want at most %d", per, maxBytesPerStep)
	}
}

// BenchmarkReferenceStep is one step of the plaintext reference (gonum):
// the baseline of the private learner's slowdown.
func BenchmarkReferenceStep(b *testing.B) {
	for _, arms := range []int{10, 100} {
		b.Run(map[int]string{10: "A10", 100: "A100"}[arms], func(b *testing.B) {
			p := DefaultParams()
			p.Arms = arms
			xs, rs := toyData(256, p.Arms, p.Dimensions, 1)
			r := NewReference(p, mpc.Seed{9})
			for i := 0; b.Loop(); i++ {
				r.Step(xs[i%len(xs)], rs[i%len(rs)])
			}
		})
	}
}

// BenchmarkPrivateBatch is one batch of the batched learner
// (learner.stepBatch) on shares, all parties and the dealer in one
// goroutine, no network, reported per step of the batch: the compute cost
// of a batched step, against BenchmarkPrivateStep's.
func BenchmarkPrivateBatch(b *testing.B) {
	for _, batch := range []int{10, 100} {
		b.Run(fmt.Sprintf("A10_P2_B%d", batch), func(b *testing.B) {
			p := DefaultParams()
			p.Batch = batch
			xs, rs := toyData(batch, p.Arms, p.Dimensions, 1)
			dl, ls := benchLearners(b, p, 2)
			shares := func(l *learner) ([][]uint64, [][]uint64) {
				xsh, rsh := make([][]uint64, batch), make([][]uint64, batch)
				for j := range batch {
					xsh[j], rsh[j] = sharedByParty0(xs[j], rs[j])(l)
				}
				return xsh, rsh
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				dx, drr := zeroInputs(p, batch)
				dprog := dl.unit(p, dx, drr, batchOutputs{})
				progs := make([]*mpc.Program, len(ls))
				for i, l := range ls {
					x, rr := shares(l)
					progs[i] = l.unit(p, x, rr, batchOutputs{})
				}
				runPrograms(b, dl, dprog, ls, progs, nil)
			}
			steps := float64(b.N * batch)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/steps, "ns/step")
			b.ReportMetric(float64(ls[0].e.Stats().WordsSent)/steps, "words/step")
		})
	}
}
