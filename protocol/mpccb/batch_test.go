package mpccb

import (
	"math"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// runPrograms runs the dealer's program alone, hands its corrections to
// party 0, then runs the parties' programs in lock step, one round at a
// time; seen, unless nil, receives every round's payload of every party.
func runPrograms(tb testing.TB, dl *learner, dealer *mpc.Program, ls []*learner, progs []*mpc.Program, seen func(from int, pl mpc.Payload)) {
	tb.Helper()
	for {
		done, err := dealer.Advance()
		if err != nil {
			tb.Fatalf("dealer: %v", err)
		}
		if done {
			break
		}
		dl.e.Complete(nil)
	}
	ls[0].e.SetCorrections(dl.e.TakeCorrections())
	for {
		dones := 0
		for i, g := range progs {
			done, err := g.Advance()
			if err != nil {
				tb.Fatalf("party %d: %v", i, err)
			}
			if done {
				dones++
			}
		}
		if dones == len(progs) {
			break
		}
		if dones != 0 {
			tb.Fatalf("parties out of step: %d of %d finished", dones, len(progs))
		}
		pls := make([]mpc.Payload, len(ls))
		for i, l := range ls {
			pls[i] = l.e.Outgoing()
			if seen != nil {
				seen(i, pls[i])
			}
		}
		for _, l := range ls {
			if err := l.e.Complete(pls); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if left := ls[0].e.CorrectionsLeft(); left != 0 {
		tb.Fatalf("%d of the dealer's correction words unused", left)
	}
}

// TestBatchedLearnerMatchesReference runs the private batched learner in
// memory (learner.stepBatch: the Newton–Schulz refresh, the B scorings and
// argmaxes side by side, one update) against the plaintext batched
// algorithm with the same refresh (nsReference), step for step, and
// counts a batch's rounds: 15 + levels + 4k at P = 2, k = ⌈log₂ B⌉ + 3,
// whatever B, where levels is the argmaxes' AND tree's (TreeFewestWords:
// 1 at 4 arms, 2 at 10) — or, from B = 200, 10 + 8⌈log₂|A|⌉ + 4k with the
// argmaxes' tournament (TreeTournament: 26 + 4k at 4 arms).
//
// The two B = 400 cases run 2,000 steps at 11 fractional bits, where the
// refresh's start 2/(2+B)·W_a⁻¹ falls below a unit unless W_a⁻¹ is held
// scaled by 2^refreshShift: scaled, the arms are the reference's (1,990 of
// 2,000 when written); unscaled, they are not (1,266).
//
// Its first case, and the scaled B = 400 case (the argmaxes in a tournament),
// also check a feature party's view of a batch, as TestViews
// does a session's: the words party 1 receives from party 0, the openings of
// W_a, b_a, the B contexts and reward rows and every intermediate product,
// look uniform (χ² on their top four bits).
func TestBatchedLearnerMatchesReference(t *testing.T) {
	var views uniformity
	defer views.check(t)
	for _, c := range []struct {
		name      string
		P, arms   int
		eps       float64
		batch     int
		steps     int
		rounds    int64
		wantAgree int // in percent; negative: at most -wantAgree
		seen      func(int, mpc.Payload)
		L         int  // precision_bits; 20 if 0
		unscaled  bool // hold W_a⁻¹ unscaled (refreshShift 0)
	}{
		{"P=2 B=10", 2, 4, 0.1, 10, 200, 16 + 4*7, 99, views.see, 0, false},
		{"P=2 B=50, the last batch shorter", 2, 4, 0.1, 50, 230, 16 + 4*9, 99, nil, 0, false},
		{"P=2 B=10 10 arms", 2, 10, 0.1, 10, 40, 17 + 4*7, 95, nil, 0, false},
		{"P=3 B=16 explore always", 3, 6, 1, 16, 96, 0, 100, nil, 0, false},
		{"P=2 B=400 L=11", 2, 4, 0.1, 400, 2000, 26 + 4*12, 98, views.see, 11, false},
		{"P=2 B=400 L=11 unscaled", 2, 4, 0.1, 400, 2000, 26 + 4*12, -85, nil, 11, true},
		{"P=3 B=200 10 arms", 3, 10, 0.1, 200, 400, 0, 98, nil, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			P := c.P
			p := DefaultParams()
			p.Arms, p.Dimensions, p.Epsilon, p.PrecisionBits = c.arms, 6, c.eps, 20
			if c.L != 0 {
				p.PrecisionBits = c.L
			}
			p.Steps, p.Batch = int64(c.steps), c.batch
			xs, rs := toyData(c.steps, p.Arms, p.Dimensions, 3)
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
			ls := make([]*learner, P)
			for i := range P {
				pairs := make([]mpc.Seed, P)
				for q := range pairs {
					pairs[q] = mpc.Seed{byte(min(i, q)), byte(max(i, q)), 42}
				}
				e, err := mpc.NewParty(cfg, i, seeds[i], pairs)
				if err != nil {
					t.Fatal(err)
				}
				ls[i] = newLearner(e, p)
			}
			dl := newLearner(dealer, p)
			if c.unscaled {
				for _, l := range append(ls, dl) {
					l.shift = 0
					l.winv = l.e.Public(identities(p.Arms, p.Dimensions, l.e.Fixed().One()))
				}
			}
			ref := newNS(p, sampler, batchIterations(c.batch), c.batch)
			fx := mpc.Fixed{Frac: uint(p.PrecisionBits)}
			agree := 0
			var privReward, refReward float64
			for s := 0; s < c.steps; s += c.batch {
				e := min(s+c.batch, c.steps)
				n := e - s
				arms := make([][]uint64, n)
				rt := make([]uint64, n)
				for j := range arms {
					arms[j] = make([]uint64, p.Arms)
				}
				before := ls[0].e.Stats().Rounds
				inputs := func(l *learner) ([][]uint64, [][]uint64) {
					xsh, rsh := make([][]uint64, n), make([][]uint64, n)
					for j := range n {
						enc := fx.EncodeAll(xs[s+j])
						xsh[j] = make([]uint64, p.Dimensions)
						for owner := range P {
							lo, hi := owner*p.Dimensions/P, (owner+1)*p.Dimensions/P
							copy(xsh[j][lo:hi], l.e.Share(owner, enc[lo:hi], hi-lo))
						}
						rsh[j] = l.e.Share(0, fx.EncodeAll(rs[s+j]), p.Arms)
					}
					return xsh, rsh
				}
				dx, drr := inputs(dl)
				dprog := dl.stepBatch(dx, drr, c.batch, batchOutputs{})
				progs := make([]*mpc.Program, P)
				for i, l := range ls {
					x, rr := inputs(l)
					progs[i] = l.stepBatch(x, rr, c.batch, batchOutputs{
						arm: func(j int, oh []uint64) {
							for a, v := range oh {
								arms[j][a] += v
							}
						},
						reward: func(j int, sh uint64) { rt[j] += sh },
					})
				}
				runPrograms(t, dl, dprog, ls, progs, c.seen)
				if r := ls[0].e.Stats().Rounds - before; c.rounds != 0 && int64(r) != c.rounds {
					t.Errorf("batch at step %d: %d rounds, want %d", s, r, c.rounds)
				}
				refArms, refGot := ref.batch(xs[s:e], rs[s:e])
				for j := range n {
					a := -1
					for i, v := range arms[j] {
						if v == 1 {
							a = i
						} else if v != 0 {
							t.Fatalf("step %d: one-hot %v", s+j, arms[j])
						}
					}
					if a == refArms[j] {
						agree++
					}
					privReward += fx.Decode(rt[j])
					refReward += refGot[j]
					if a >= 0 && math.Abs(fx.Decode(rt[j])-rs[s+j][a]) > 1e-3 {
						t.Errorf("step %d: r_t %v, but arm %d pays %v", s+j, fx.Decode(rt[j]), a, rs[s+j][a])
					}
				}
			}
			t.Logf("agreement %d/%d, reward %.0f vs %.0f", agree, c.steps, privReward, refReward)
			if c.wantAgree < 0 {
				if agree > -c.steps*c.wantAgree/100 {
					t.Errorf("unscaled, the private batched learner still chose the reference's arm in %d of %d steps: the case tests nothing", agree, c.steps)
				}
			} else if agree < c.steps*c.wantAgree/100 {
				t.Errorf("the private batched learner chose the reference's arm in %d of %d steps", agree, c.steps)
			}
		})
	}
}

// uniformity counts the top four bits of the arithmetic words party 0
// sends party 1.
type uniformity struct {
	buckets [16]int
	words   int
}

func (u *uniformity) see(from int, pl mpc.Payload) {
	if from != 0 {
		return
	}
	for _, w := range pl.Arith {
		u.buckets[w>>60]++
		u.words++
	}
}

func (u *uniformity) check(t *testing.T) {
	t.Helper()
	if u.words < 10000 {
		t.Fatalf("only %d words seen", u.words)
	}
	exp := float64(u.words) / 16
	var chi float64
	for _, c := range u.buckets {
		d := float64(c) - exp
		chi += d * d / exp
	}
	t.Logf("party 1's view: %d words, χ² = %.1f", u.words, chi)
	if chi > 37.7 { // χ² with 15 degrees of freedom, 0.999 quantile
		t.Errorf("the openings party 1 received are not uniform: χ² = %.1f over %d words", chi, u.words)
	}
}

// TestBatchedSession runs a batched session's roles in memory — the
// messages the daemons exchange, delivered in the order they are sent —
// on toy data, and checks p′'s arms against the plaintext batched
// algorithm (Reference.StepBatch, in batches of B, drawing the dealer's
// samples): every arm when every step explores (ε = 1: the arms are the
// dealer's draws, so any slip in the batches' order of samples shows), and
// nearly every arm otherwise. It also counts the messages: p′ and p″ one
// per feature party and step, the dealer one acknowledgement per batch
// (and the check's), and every round numbered by its batch.
func TestBatchedSession(t *testing.T) {
	for _, c := range []struct {
		name       string
		P, batch   int
		steps      int64
		eps        float64
		wantAgree  int // in percent
		wantRounds int // a full batch's, at P = 2; 0: not checked
	}{
		// B = 40: a batch needs more rows than p″ asks its environment
		// for at once (rowsAhead).
		{"P=2 B=40, the last batch shorter", 2, 40, 90, 0.1, 95, 16 + 4*9},
		{"P=3 B=7 explore always", 3, 7, 28, 1, 100, 0},
		{"P=2 B=100 above T: one batch", 2, 100, 30, 1, 100, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Arms, p.Dimensions, p.Steps, p.Window, p.Epsilon, p.Batch = 4, 6, c.steps, 2, c.eps, c.batch
			xs, rs := toyData(int(p.Steps), p.Arms, p.Dimensions, 5)
			s := newMemSessionData(t, p, c.P, xs, rs)
			rounds := map[uint64]uint32{} // the largest round seen of each batch
			acks, toPuller, toReceiver := 0, 0, 0
			errs := map[protocol.Party]error{}
			for len(s.queue) > 0 {
				m, err := s.deliver()
				if err != nil {
					errs[m.To] = err
					break
				}
				var msg mpccbpb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatal(err)
				}
				switch k := msg.Kind.(type) {
				case *mpccbpb.Message_Ack:
					acks++
				case *mpccbpb.Message_Arm:
					toPuller++
				case *mpccbpb.Message_Reward:
					toReceiver++
				case *mpccbpb.Message_Round:
					if k.Round.Step > 0 {
						rounds[k.Round.Step] = max(rounds[k.Round.Step], k.Round.Round+1)
					}
				}
			}
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			units := int((p.Steps + int64(p.Batch) - 1) / int64(p.Batch))
			if acks != units+1 || toPuller != c.P*int(p.Steps) || toReceiver != c.P*int(p.Steps) {
				t.Errorf("%d acknowledgements, %d arm shares, %d reward shares; want %d, %d, %d",
					acks, toPuller, toReceiver, units+1, c.P*int(p.Steps), c.P*int(p.Steps))
			}
			if len(rounds) != units {
				t.Errorf("rounds of %d batches, want %d", len(rounds), units)
			}
			if c.wantRounds != 0 && int(rounds[1]) != c.wantRounds {
				t.Errorf("the first batch took %d rounds, want %d", rounds[1], c.wantRounds)
			}
			pu := s.roles[protocol.Party{Role: RolePuller}].(*puller)
			if len(pu.arms) != int(p.Steps) {
				t.Fatalf("p′ has %d arms of %d steps", len(pu.arms), p.Steps)
			}
			_, sampler, err := dealerSeeds(rand.NewChaCha8([32]byte{0, 1}), c.P) // the dealer's cfg.Rand in newMemSessionData
			if err != nil {
				t.Fatal(err)
			}
			ref := NewReference(p, sampler)
			agree := 0
			for lo := 0; lo < int(p.Steps); lo += c.batch {
				hi := min(lo+c.batch, int(p.Steps))
				arms, _ := ref.StepBatch(xs[lo:hi], rs[lo:hi])
				for j, a := range arms {
					if int(pu.arms[lo+j]) == a {
						agree++
					}
				}
			}
			seq, seqAgree := NewReference(p, sampler), 0
			for t, x := range xs {
				if a, _ := seq.Step(x, rs[t]); int(pu.arms[t]) == a {
					seqAgree++
				}
			}
			t.Logf("agreement %d/%d (with the sequential algorithm: %d)", agree, p.Steps, seqAgree)
			if agree < int(p.Steps)*c.wantAgree/100 {
				t.Errorf("p′'s arms are the batched reference's in %d of %d steps, want %d %%", agree, p.Steps, c.wantAgree)
			}
			// Exploring at every step, the arms are the dealer's draws
			// whatever the model; otherwise the batches must show.
			if c.eps < 1 && seqAgree >= agree {
				t.Errorf("p′'s arms are the sequential algorithm's in %d steps, the batched one's in %d: the session did not run in batches", seqAgree, agree)
			}
		})
	}
}

// TestRefreshShift checks refreshShift against its two conditions: 2^s at
// least (2 + B)/2, so that the refresh's start keeps W_a⁻¹'s fractional
// bits, unless the fixed-point range forbids it — 2L + s + 1 +
// log₂(1 + T)/2 ≤ 61, the bound of the refresh's truncated products.
func TestRefreshShift(t *testing.T) {
	room := func(L int, steps int64) float64 { return 61 - 2*float64(L) - 1 - math.Log2(1+float64(steps))/2 }
	for _, c := range []struct {
		batch int
		L     int
		steps int64
		want  uint
	}{
		{2, 20, 10_000, 1},
		{10, 20, 10_000, 3},
		{100, 20, 60_000, 6},
		{1000, 20, 60_000, 9},
		{1000, 20, 10_000_000, 8}, // the range binds
		{1000, 24, 60_000, 4},
		{1000, 24, 10_000_000, 0},
		{100, 8, 10_000_000, 6},
	} {
		p := DefaultParams()
		p.Batch, p.PrecisionBits, p.Steps = c.batch, c.L, c.steps
		s := refreshShift(p)
		if s != c.want {
			t.Errorf("B = %d, L = %d, T = %d: shift %d, want %d", c.batch, c.L, c.steps, s, c.want)
		}
		if r := room(c.L, c.steps); float64(s) > r {
			t.Errorf("B = %d, L = %d, T = %d: shift %d exceeds the range's room %.2f", c.batch, c.L, c.steps, s, r)
		}
		if full := math.Ldexp(1, int(s)) >= float64(2+c.batch)/2; !full && float64(s)+2 <= room(c.L, c.steps) {
			t.Errorf("B = %d, L = %d, T = %d: 2^%d < (2 + B)/2 though the range has room for more", c.batch, c.L, c.steps, s)
		}
	}
}
