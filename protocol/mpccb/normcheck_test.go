package mpccb

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/privacy/mpc"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb/mpccbpb"
)

// runNormCheck runs the joint range check among P engines and the dealer
// in memory on the parties' q (q[p][t]), in rounds of at most frame words,
// and returns every party's bits, party 0's engine counts, the dealer's
// correction words, and the words each party sent in each round.
func runNormCheck(t *testing.T, q [][]uint64, steps int64, frame int) ([][]bool, mpc.Stats, int, [][][]uint64) {
	t.Helper()
	P := len(q)
	seeds := make([]mpc.Seed, P)
	for i := range seeds {
		seeds[i] = mpc.Seed{byte(i + 1), 7}
	}
	cfg := mpc.Config{Parties: P, Frac: 20}
	dl, err := mpc.NewDealer(cfg, seeds)
	if err != nil {
		t.Fatal(err)
	}
	var dealerBits []bool
	g := normCheck(dl, steps, nil, &dealerBits, frame)
	for {
		done, err := g.Advance()
		if err != nil {
			t.Fatalf("dealer: %v", err)
		}
		if done {
			break
		}
		if out := dl.Outgoing(); len(out.Arith)+len(out.Binary) > frame {
			t.Fatalf("the dealer's round opens %d words, beyond a frame of %d", len(out.Arith)+len(out.Binary), frame)
		}
		dl.Complete(nil)
	}
	corr := dl.TakeCorrections()
	for i, b := range dealerBits {
		if b {
			t.Fatalf("the dealer's bit %d is set: it must see nothing", i)
		}
	}
	es := make([]*mpc.Engine, P)
	progs := make([]*mpc.Program, P)
	bits := make([][]bool, P)
	for i := range es {
		pairs := make([]mpc.Seed, P)
		for j := range pairs {
			pairs[j] = mpc.Seed{byte(min(i, j)), byte(max(i, j)), 3}
		}
		if es[i], err = mpc.NewParty(cfg, i, seeds[i], pairs); err != nil {
			t.Fatal(err)
		}
		progs[i] = normCheck(es[i], steps, q[i], &bits[i], frame)
	}
	es[0].SetCorrections(corr)
	sent := make([][][]uint64, P)
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
		if dones == P {
			break
		}
		if dones != 0 {
			t.Fatalf("parties out of step: %d of %d finished", dones, P)
		}
		pls := make([]mpc.Payload, P)
		for i, e := range es {
			pls[i] = e.Outgoing()
			sent[i] = append(sent[i], append(append([]uint64{}, pls[i].Arith...), pls[i].Binary...))
		}
		for _, e := range es {
			if err := e.Complete(pls); err != nil {
				t.Fatal(err)
			}
		}
	}
	if left := es[0].CorrectionsLeft(); left != 0 {
		t.Fatalf("%d corrections unused", left)
	}
	return bits, es[0].Stats(), len(corr), sent
}

// TestNormCheckBits: the check's bits are [Σ_p q_{t,p} > 2^F + slack] for
// sums on both sides of the threshold and at it, for 2 to 7 parties, in
// one chunk and in many; and the rounds, words and corrections are the
// ones measureCheck states (docs/protocols/mpccb.md's cost, checkShape's bounds).
func TestNormCheckBits(t *testing.T) {
	const one = 1 << checkFrac
	c := uint64(one + checkSlack)
	for _, P := range []int{2, 3, 4, 5, 7} {
		for _, steps := range []int64{1, 70, 300} {
			narrowest := 2 // a frame of one word a chunk
			if P > 2 {
				narrowest = 2 * (P / 3) * (checkFrac + bits.Len(uint(P)) + 1)
			}
			for _, frame := range []int{maxMessageWords, 3 * narrowest, narrowest} {
				t.Run(fmt.Sprintf("P=%d,T=%d,frame=%d", P, steps, frame), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(P), uint64(steps)))
					q := make([][]uint64, P)
					for p := range q {
						q[p] = make([]uint64, steps)
					}
					want := make([]bool, steps)
					for tt := range steps {
						// The sum: at the threshold, one either side, the
						// extremes, or anywhere a part may reach.
						var sum uint64
						switch tt % 6 {
						case 0:
							sum = c
						case 1:
							sum = c + 1
						case 2:
							sum = c - 1
						case 3:
							sum = 0
						case 4:
							sum = uint64(P) * (one + 1)
						default:
							sum = rng.Uint64N(uint64(P)*(one+1) + 1)
						}
						want[tt] = sum > c
						// Split it into parts of at most 2^F + 1.
						left := sum
						for p := range P {
							room := uint64(P-1-p) * (one + 1) // what the later parts can take
							lo := uint64(0)
							if left > room {
								lo = left - room
							}
							hi := min(left, one+1)
							v := lo + rng.Uint64N(hi-lo+1)
							if p == P-1 {
								v = left
							}
							q[p][tt] = v
							left -= v
						}
					}
					bits, st, corr, _ := runNormCheck(t, q, steps, frame)
					for p := range P {
						for tt := range steps {
							if bits[p][tt] != want[tt] {
								var sum uint64
								for r := range P {
									sum += q[r][tt]
								}
								t.Fatalf("party %d, step %d: bit %v for a sum of %d against %d", p, tt+1, bits[p][tt], sum, c)
							}
						}
					}
					m := measureCheck(steps, P, frame)
					if st.Rounds != m.rounds || st.WordsSent != int64(m.words) || corr != m.corrections {
						t.Errorf("ran %d rounds, %d words, %d corrections; measureCheck says %d, %d, %d",
							st.Rounds, st.WordsSent, corr, m.rounds, m.words, m.corrections)
					}
				})
			}
		}
	}
}

// sessionOutcome runs a session in memory until no message is left, and
// returns the error of each role that failed (a failed role takes no more
// messages).
func sessionOutcome(s *memSession) map[protocol.Party]error {
	errs := map[protocol.Party]error{}
	for len(s.queue) > 0 {
		m := s.queue[0]
		s.queue = s.queue[1:]
		if errs[m.To] != nil {
			continue // an aborted role takes nothing more
		}
		if err := s.roles[m.To].Step(m); err != nil {
			errs[m.To] = err
			s.roles[m.To].Ready()
			continue
		}
		if err := s.ready(m.To); err != nil {
			errs[m.To] = err
		}
	}
	return errs
}

// TestJointNormRefused: P feature parties each hold parts of norm at most 1
// (each passes the per-party check), but in one step the parts add up to a
// context of norm √P — the Sherman–Morrison denominator would reach 1 + P,
// outside the reciprocal's [1, 2], and the session would learn garbage.
// The joint check refuses it at every feature party, naming the step,
// before step 1; a unit-norm dataset still runs to the end, and so does one
// at the edge of the slack.
func TestJointNormRefused(t *testing.T) {
	const bad = 3 // the step whose context is too long
	cases := []struct {
		name  string
		P     int
		edit  func(xs [][]float64, split [][2]int) // on unit-norm contexts
		wantT int64                                // the step named; 0: the session runs
	}{
		{"P=2 unit contexts", 2, nil, 0},
		{"P=2 joint norm √2", 2, func(xs [][]float64, split [][2]int) {
			for _, c := range split {
				clear(xs[bad-1][c[0]:c[1]])
				xs[bad-1][c[0]] = 1 // each part of norm 1
			}
		}, bad},
		{"P=2 last step slightly long", 2, func(xs [][]float64, split [][2]int) {
			x := xs[len(xs)-1]
			for i := range x {
				x[i] *= math.Sqrt(1 + 1e-3)
			}
		}, 6},
		{"P=2 within the slack", 2, func(xs [][]float64, split [][2]int) {
			for _, x := range xs {
				for i := range x {
					x[i] *= math.Sqrt(1 + 5e-7)
				}
			}
		}, 0},
		{"P=3 unit contexts", 3, nil, 0},
		{"P=3 joint norm √3", 3, func(xs [][]float64, split [][2]int) {
			for _, c := range split {
				clear(xs[bad-1][c[0]:c[1]])
				xs[bad-1][c[1]-1] = 1
			}
		}, bad},
		{"P=3 two parts of norm 1", 3, func(xs [][]float64, split [][2]int) {
			clear(xs[0])
			xs[0][split[0][0]], xs[0][split[2][0]] = 0.8, 0.8 // ‖x‖² = 1.28
		}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := DefaultParams()
			p.Arms, p.Dimensions, p.Steps, p.Window = 3, 6, 6, 2
			xs, rs := toyData(int(p.Steps), p.Arms, p.Dimensions, 11)
			if c.edit != nil {
				c.edit(xs, dataset.Split(p.Dimensions, c.P))
			}
			s := newMemSessionData(t, p, c.P, xs, rs)
			errs := sessionOutcome(s)
			for pt, r := range s.roles {
				f, ok := r.(*featureParty)
				if !ok {
					continue
				}
				if c.wantT == 0 {
					if errs[pt] != nil || !f.finished {
						t.Errorf("%s: the session did not run to its end: %v", pt, errs[pt])
					}
					continue
				}
				want := fmt.Sprintf("context of step %d (each feature party's answer to its context query of step %d; row %d of a features or replayed file) has a joint norm above 1 across the feature parties", c.wantT, c.wantT-1, c.wantT)
				if errs[pt] == nil || !strings.Contains(errs[pt].Error(), want) {
					t.Errorf("%s: %v, want %q", pt, errs[pt], want)
				}
				if f.step != 0 || f.learner == nil {
					t.Errorf("%s is at step %d (finished: %v); the refusal comes before step 1", pt, f.step, f.finished)
				}
			}
			for pt, err := range errs {
				if pt.Role != RoleFeature {
					t.Errorf("%s failed: %v", pt, err)
				}
			}
		})
	}
}

// TestNormCheckViews: what a feature party sends the others during the
// check is uniform even when every party's input is a constant (a leak of
// an input's bit planes would be words of all zeros or all ones): the
// masked openings and the shares of the revealed bits alike, round by
// round (the bits set in each round's words within six standard
// deviations of half), and over the whole check (the words' top four bits
// by χ²).
func TestNormCheckViews(t *testing.T) {
	const steps = 3000
	for _, P := range []int{2, 3} {
		q := make([][]uint64, P)
		for p := range q {
			q[p] = make([]uint64, steps)
			for i := range q[p] {
				q[p][i] = 1<<checkFrac/uint64(P) + uint64(p)
			}
		}
		_, _, _, sent := runNormCheck(t, q, steps, maxMessageWords)
		for p, rounds := range sent {
			var buckets [16]int
			var all int
			for r, words := range rounds {
				ones := 0
				for _, w := range words {
					buckets[w>>60]++
					ones += bits.OnesCount64(w)
				}
				n := float64(64 * len(words))
				if d := math.Abs(float64(ones) - n/2); d > 6*math.Sqrt(n)/2 {
					t.Errorf("P=%d: party %d's round %d: %d of %.0f bits set", P, p, r, ones, n)
				}
				all += len(words)
			}
			exp := float64(all) / 16
			var chi float64
			for _, c := range buckets {
				d := float64(c) - exp
				chi += d * d / exp
			}
			if chi > 37.7 { // χ² with 15 degrees of freedom, 0.999 quantile
				t.Errorf("P=%d: the words party %d sent are not uniform: χ² = %.1f over %d words", P, p, chi, all)
			}
		}
	}
}

// TestCheckComesFirst: step 0, the check, is acknowledged before any step's
// corrections go out, and inputs that name step 0 other than its
// corrections are refused.
func TestCheckComesFirst(t *testing.T) {
	p := DefaultParams()
	p.Arms, p.Dimensions, p.Steps, p.Window = 3, 4, 4, 2
	cases := []struct {
		name string
		from protocol.Party
		to   protocol.Party
		msg  *mpccbpb.Message
		want string
	}{
		{"step 1 acknowledged before the check", protocol.Party{Role: RoleFeature}, protocol.Party{Role: RoleDealer},
			&mpccbpb.Message{Kind: &mpccbpb.Message_Ack{Ack: &mpccbpb.Step{Step: 1}}}, "before the check's"},
		{"a reward row for step 0", protocol.Party{Role: RoleReceiver}, protocol.Party{Role: RoleFeature, Index: 1},
			&mpccbpb.Message{Kind: &mpccbpb.Message_RewardRow{RewardRow: &mpccbpb.Words{Step: 0, Words: make([]uint64, 3)}}}, "unexpected reward row for step 0"},
		{"corrections for step 0 beyond the check's", protocol.Party{Role: RoleDealer}, protocol.Party{Role: RoleFeature},
			&mpccbpb.Message{Kind: &mpccbpb.Message_Corrections{Corrections: &mpccbpb.Words{Step: 0, Words: []uint64{1}}}}, "a step uses"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newMemSession(t, p, 2)
			// Before any message: the dealer has sent step 0's corrections
			// only, and the parties have not begun.
			for _, m := range s.queue {
				var msg mpccbpb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatal(err)
				}
				if k, ok := msg.Kind.(*mpccbpb.Message_Corrections); ok && k.Corrections.Step != 0 {
					t.Fatalf("the dealer sent step %d's corrections before the check was acknowledged", k.Corrections.Step)
				}
			}
			// Deliver the target its corrections only, so party 0 holds
			// the check's in full and has not begun it.
			for _, m := range s.queue {
				var msg mpccbpb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatal(err)
				}
				if _, ok := msg.Kind.(*mpccbpb.Message_Corrections); ok && m.To == c.to {
					if err := s.roles[m.To].Step(m); err != nil {
						t.Fatal(err)
					}
				}
			}
			s.queue = nil
			m := encode(c.to, c.msg)
			m.From = c.from
			if err := s.roles[c.to].Step(m); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}
