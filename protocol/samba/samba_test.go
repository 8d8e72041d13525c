package samba

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"github.com/bandit-node/bandit-node/protocol/sim"
	"google.golang.org/protobuf/proto"
)

func testSpec(alg string, budget int64, arms []float64, seed int64) *protocol.Spec {
	a := make([]any, len(arms))
	for i, m := range arms {
		a[i] = m
	}
	return &protocol.Spec{Protocol: Name,
		Params:     map[string]any{"algorithm": alg, "budget": budget, "paillier_bits": int64(512)},
		Simulation: map[string]any{"arms": a, "seed": seed}}
}

func simulate(t testing.TB, s *protocol.Spec) (*Result, *sim.Result) {
	t.Helper()
	reg, err := protocol.NewRegistry(Family{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), reg, s, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Result.(*Result), res
}

// TestTheorem2 (§5.2): for every algorithm and several seeds, SAMBA in
// simulation — full cryptography — and the standard algorithm consuming the
// same randomness return the same cumulative reward and the same sequence
// of pulled arms.
func TestTheorem2(t *testing.T) {
	for _, alg := range Algorithms() {
		for _, seed := range []int64{1, 2, 3} {
			res, sim := simulate(t, testSpec(alg.Name(), 1500, []float64{0.6, 0.5, 0.45, 0.2}, seed))
			// Figure 8(d) in a simulation: the simulator's time per role.
			for _, role := range []string{RoleOwner, RoleComp, RoleController} {
				if got := res.Costs[role].BusySeconds; got <= 0 || got != sim.RoleSeconds[role] {
					t.Errorf("%s: %s busy %v s, the simulator measured %v s", alg.Name(), role, got, sim.RoleSeconds[role])
				}
			}
			if res.ReferenceCumulativeReward == nil || *res.ReferenceCumulativeReward != res.CumulativeReward || !*res.SameArmSequence {
				t.Errorf("%s seed %d: SAMBA %d, reference %v, same sequence %v", alg.Name(), seed, res.CumulativeReward, res.ReferenceCumulativeReward, res.SameArmSequence)
			}
			var total int64
			for _, n := range res.Pulls {
				total += n
			}
			if total != 1500 {
				t.Errorf("%s: %d pulls for a budget of 1500", alg.Name(), total)
			}
			// Theorem 4: 2K+2 messages per step and iteration, no more.
			k := int64(4)
			setup := k + 1 + k + k + k + 1 // public keys, seeds, AES keys, sums, total
			if want := (1500-k)*int64(alg.Iterations())*(2*k+2) + setup; sim.Messages != want {
				t.Errorf("%s: %d messages, want %d", alg.Name(), sim.Messages, want)
			}
			// K Paillier encryptions, K−1 multiplications, 1 decryption.
			if c := res.Costs; c[RoleOwner].PaillierOps != k || c[RoleCustomer].PaillierOps != 1 {
				t.Errorf("%s: Paillier operations %+v", alg.Name(), c)
			}
		}
	}
}

// driver runs a session's roles by hand over a sim.Network, so a test can
// look inside the roles and tamper with messages.
type driver struct {
	t       testing.TB
	net     *sim.Network
	roles   map[protocol.Party]protocol.Role
	envs    map[protocol.Party]protocol.Environment // the data owners' arms
	done    map[protocol.Party]bool
	tamper  func(m *protocol.Message) bool // may rewrite m; false drops it
	tick    bool                           // tick every role after every message
	results map[protocol.Party]*protocol.Result
}

func newDriver(t testing.TB, alg string, budget int64, arms []float64, seed int64) *driver {
	t.Helper()
	return newDriverWith(t, map[string]any{"algorithm": alg, "budget": budget, "paillier_bits": int64(512)}, arms, seed)
}

// newDriverWith is newDriver with the session's raw params.
func newDriverWith(t testing.TB, raw map[string]any, arms []float64, seed int64) *driver {
	t.Helper()
	f := Family{}
	params, err := f.ParseParams(raw)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := f.PrepareSimulation(map[string]any{"arms": toAny(arms)}, protocol.Assignment{}, params)
	if err != nil {
		t.Fatal(err)
	}
	a, locals := prep.Assignment, prep.Local
	d := &driver{t: t, net: sim.NewNetwork(a.Parties(), 0, time.Unix(0, 0)), roles: map[protocol.Party]protocol.Role{},
		envs: map[protocol.Party]protocol.Environment{}, done: map[protocol.Party]bool{}, results: map[protocol.Party]*protocol.Result{}}
	for _, p := range a.Parties() {
		cfg := protocol.RoleConfig{SessionID: "test", Self: p, Assignment: a, Params: params, Local: locals[p],
			Rand: protocol.SeededRand(seed, p), Clock: fixedClock{}, Logger: slog.New(slog.DiscardHandler), Simulated: true}
		r, err := f.NewRole(cfg)
		if err != nil {
			t.Fatal(err)
		}
		d.roles[p] = r
		cfg.Rand = protocol.SeededEnvironmentRand(seed, p)
		if d.envs[p], err = f.SimulatedEnvironment(cfg); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func toAny(xs []float64) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Unix(0, 0) }

// run drives the session to its end or to the first error.
func (d *driver) run() error {
	for p, r := range d.roles {
		if err := r.Start(); err != nil {
			return err
		}
		d.flush(p)
	}
	for {
		m, ok := d.net.Next()
		if !ok {
			return nil
		}
		if d.done[m.To] {
			continue
		}
		if err := d.roles[m.To].Step(m); err != nil {
			return err
		}
		d.flush(m.To)
		if !d.tick {
			continue
		}
		for p, r := range d.roles {
			if d.done[p] {
				continue
			}
			if err := r.Tick(); err != nil {
				return err
			}
			d.flush(p)
		}
	}
}

func (d *driver) flush(p protocol.Party) {
	rd := d.roles[p].Ready()
	for _, q := range rd.Queries {
		o, err := d.envs[p].Answer(context.Background(), q)
		if err != nil {
			d.t.Fatal(err)
		}
		if err := d.roles[p].(protocol.Asker).Answer(o); err != nil {
			d.t.Fatal(err)
		}
	}
	if len(rd.Queries) > 0 {
		defer d.flush(p) // what the answers made the role do, after this batch
	}
	for _, m := range rd.Messages {
		m.From = p
		if d.tamper != nil && !d.tamper(&m) {
			continue
		}
		if err := d.net.Endpoint(p).Send(context.Background(), m); err != nil {
			d.t.Fatal(err)
		}
	}
	if rd.Result != nil {
		d.done[p] = true
		d.results[p] = rd.Result
	}
}

// TestViews (Figure 7): what each role sees, for an argmax algorithm
// (UCB: comp sees scores under a random positive affine map) and a
// probability-matching one (softmax: under a random multiplier). Comp sees
// permuted masked scores only, and the position of the pulled arm in comp's
// view is uniform over the positions even though one arm is pulled almost
// always (chi-square); the controller sees only envelopes sealed for comp or
// for the data owners (it never holds the AES key); a data owner receives
// only the setup and one sealed bit a step and iteration, never another
// owner's score; the data customer receives one message, the encrypted
// total, and learns the cumulative reward alone.
func TestViews(t *testing.T) {
	tests := []struct {
		alg string
		// raw reports whether comp's view of a step could be the unmasked
		// scores: UCB's lie in [0, 1 + √(2 ln 4000)] ⊂ [0, 6], softmax's
		// exp(μ̂/τ) in [1, exp(1/τ)] (τ = 0.06). Unmasked, every step's
		// would; masked, about a quarter of the steps fall in those ranges
		// by chance (the mask's scale 2^x is near 1 now and then).
		raw func(scores []float64) bool
	}{
		{"ucb", func(scores []float64) bool {
			for _, v := range scores {
				if v < 0 || v > 6 {
					return false
				}
			}
			return true
		}},
		{"softmax", func(scores []float64) bool {
			for _, v := range scores {
				if v < 1 || v > math.Exp(1/0.06) {
					return false
				}
			}
			return true
		}},
	}
	for _, tt := range tests {
		t.Run(tt.alg, func(t *testing.T) {
			const k, budget = 4, 4000
			d := newDriver(t, tt.alg, budget, []float64{0.9, 0.2, 0.2, 0.1}, 5)
			c := d.roles[compParty].(*comp)
			positions := make([]int, k)
			rawSteps := 0
			c.view = func(_ uint64, _ int, scores []float64, sel []int) {
				if len(sel) != 1 {
					t.Errorf("comp selected %d positions from a list of a sequential session, want 1", len(sel))
				}
				positions[sel[0]]++
				if tt.raw(scores) {
					rawSteps++
				}
			}
			toOwner := make([]int, k) // bits each data owner received
			toCustomer := 0
			checkSealed := sealChecker(t, d)
			d.tamper = func(m *protocol.Message) bool {
				var msg sambapb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatal(err)
				}
				if m.To == controllerParty || m.From == controllerParty {
					if msg.GetAesKey() != nil {
						t.Error("the AES key went through the controller")
					}
					checkSealed(&msg)
				}
				if m.To == customerParty {
					toCustomer++
				}
				if m.To.Role == RoleOwner {
					switch {
					case msg.GetBit() != nil && m.From == controllerParty:
						toOwner[m.To.Index]++
					case msg.GetSeeds() != nil && m.From == controllerParty, msg.GetAesKey() != nil && m.From == compParty,
						msg.GetPublicKey() != nil && m.From == customerParty:
					default:
						t.Errorf("data owner %d received %T from %s", m.To.Index, msg.Kind, m.From)
					}
				}
				return true
			}
			if err := d.run(); err != nil {
				t.Fatal(err)
			}
			// Chi-square of comp's selected positions against uniform, 3
			// degrees of freedom: 16.27 is the 0.001 critical value.
			n := float64(budget - k)
			chi := 0.0
			for _, o := range positions {
				e := n / k
				chi += (float64(o) - e) * (float64(o) - e) / e
			}
			if chi > 16.27 {
				t.Errorf("comp's selected positions %v are not uniform (χ² = %.1f)", positions, chi)
			}
			if rawSteps > (budget-k)/2 {
				t.Errorf("in %d of %d steps comp's scores could be the unmasked ones", rawSteps, budget-k)
			}
			for i, bits := range toOwner {
				if bits != budget-k {
					t.Errorf("data owner %d received %d bits, want one a step (%d)", i, bits, budget-k)
				}
			}
			// The public key goes the other way; the data customer receives
			// the controller's product of the encrypted sums alone.
			if toCustomer != 1 {
				t.Errorf("the data customer received %d messages, want 1 (the encrypted total)", toCustomer)
			}
			dc := d.results[customerParty].Local.(CustomerOutcome)
			var sum int64
			for i := range k {
				sum += d.results[protocol.Party{Role: RoleOwner, Index: i}].Local.(OwnerOutcome).Sum
			}
			if dc.CumulativeReward != sum {
				t.Errorf("the data customer decrypted %d, the data owners' sums add up to %d", dc.CumulativeReward, sum)
			}
		})
	}
}

// sealChecker returns a check that fails t unless every score and bit in a
// message the controller sends or receives is an envelope that opens in the
// channel it belongs to (scores: data owner → comp; bits: comp → data
// owner) and not in the other, read with comp's key: the controller handles
// nothing it could read.
func sealChecker(t *testing.T, d *driver) func(msg *sambapb.Message) {
	scores, bits, err := channels(d.roles[compParty].(*comp).key, "test", 0) // comp draws its key when created
	if err != nil {
		t.Fatal(err)
	}
	open := func(own, other *privacy.Channel, what string, step uint64, iteration uint32, box []byte) {
		if keyEpoch(step) != 0 {
			t.Fatalf("a session of step %d: the check reads only key epoch 0", step)
		}
		if _, err := own.AppendOpen(nil, step, iteration, box); err != nil {
			t.Errorf("a %s of step %d the controller handled is not an envelope sealed for it: %v", what, step, err)
		}
		if _, err := other.AppendOpen(nil, step, iteration, box); err == nil {
			t.Errorf("a %s of step %d opens in the other direction's channel too", what, step)
		}
	}
	return func(msg *sambapb.Message) {
		t.Helper()
		if s := msg.GetScore(); s != nil {
			open(scores, bits, "score", s.T, s.L, s.Box)
		}
		if b := msg.GetScores(); b != nil {
			for _, box := range b.Boxes {
				open(scores, bits, "score", b.T, b.L, box)
			}
		}
		if b := msg.GetBit(); b != nil {
			open(bits, scores, "bit", b.T, b.L, b.Box)
		}
		if b := msg.GetBits(); b != nil {
			for _, box := range b.Boxes {
				open(bits, scores, "bit", b.T, b.L, box)
			}
		}
		// A batch's: step t+j's envelope at index j.
		if b := msg.GetOwnerScores(); b != nil {
			for j, box := range b.Boxes {
				open(scores, bits, "score", b.T+uint64(j), b.L, box)
			}
		}
		if b := msg.GetOwnerBits(); b != nil {
			for j, box := range b.Boxes {
				open(bits, scores, "bit", b.T+uint64(j), b.L, box)
			}
		}
	}
}

// TestTampering: a replayed, reordered or misrouted ciphertext does not open,
// and the session stops with an error naming it.
func TestTampering(t *testing.T) {
	tests := []struct {
		name string
		alg  string // ucb when empty
		// rewrite may change a message in flight, decoded; it reports
		// whether it did. saved lasts the whole session.
		rewrite func(msg *sambapb.Message, saved *[][]byte) bool
		want    string
	}{
		{"a data owner's score copied into another's place in the batch", "", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetScores(); b != nil && b.T == 15 {
				b.Boxes[2] = b.Boxes[0]
				return true
			}
			return false
		}, "same envelope"},
		{"reordered: a score of Pursuit's first iteration in the second's batch", "pursuit", func(msg *sambapb.Message, saved *[][]byte) bool {
			if b := msg.GetScores(); b != nil && b.T == 9 {
				if b.L == 1 {
					*saved = [][]byte{b.Boxes[1]}
				} else if *saved != nil {
					b.Boxes[1] = (*saved)[0]
					return true
				}
			}
			return false
		}, "does not open"},
		{"replayed score of an earlier step", "", func(msg *sambapb.Message, saved *[][]byte) bool {
			if b := msg.GetScores(); b != nil {
				if b.T == 10 {
					*saved = b.Boxes
				}
				if b.T == 11 && *saved != nil {
					b.Boxes[0] = (*saved)[0]
					return true
				}
			}
			return false
		}, "does not open"},
		{"a bit sent where a score belongs", "", func(msg *sambapb.Message, saved *[][]byte) bool {
			if b := msg.GetBit(); b != nil && b.T == 12 {
				*saved = [][]byte{b.Box}
			}
			if b := msg.GetScores(); b != nil && b.T == 13 && *saved != nil {
				b.Boxes[1] = (*saved)[0]
				return true
			}
			return false
		}, "does not open"},
		{"a flipped byte", "", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetBit(); b != nil && b.T == 20 {
				b.Box[len(b.Box)-1] ^= 1
				return true
			}
			return false
		}, "does not open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alg := tt.alg
			if alg == "" {
				alg = "ucb"
			}
			d := newDriver(t, alg, 100, []float64{0.5, 0.4, 0.3}, 1)
			var saved [][]byte
			d.tamper = func(m *protocol.Message) bool {
				var msg sambapb.Message
				proto.Unmarshal(m.Body, &msg)
				if tt.rewrite(&msg, &saved) {
					m.Body, _ = proto.Marshal(&msg)
				}
				return true
			}
			err := d.run()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestMinTau: at the smallest temperature allowed, the largest masked
// softmax scores of the most data owners still add up to a finite number.
func TestMinTau(t *testing.T) {
	if sum := float64(MaxOwners) * math.Exp2(20) * math.Exp(1/minTau); math.IsInf(sum, 0) {
		t.Errorf("τ = %v: the scores overflow", minTau)
	}
}

func TestParamsErrors(t *testing.T) {
	for _, c := range []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"algorithm": "exp3"}, "params.algorithm"},
		{map[string]any{"budget": int64(0)}, "params.budget"},
		{map[string]any{"epsilon": 2.0}, "params.epsilon"},
		{map[string]any{"tau": 0.0}, "params.tau"},
		{map[string]any{"tau": 0.001}, "softmax's exp(μ/τ) would overflow"},
		{map[string]any{"paillier_bits": int64(100)}, "params.paillier_bits"},
		{map[string]any{"epsilon_schedule": "sqrt"}, "params.epsilon_schedule"},
	} {
		if _, err := (Family{}).ParseParams(c.raw); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.raw, err, c.want)
		}
	}
}

func TestSelectArm(t *testing.T) {
	if got := SelectArm(false, []float64{1, 3, 3, 2}, 0); got != 1 {
		t.Errorf("argmax breaks ties by the first position: got %d", got)
	}
	v := []float64{1, 1, 2}
	for _, c := range []struct {
		u    float64
		want int
	}{{0, 0}, {0.24, 0}, {0.26, 1}, {0.51, 2}, {0.999, 2}} {
		if got := SelectArm(true, v, c.u); got != c.want {
			t.Errorf("matching u=%v: got %d, want %d", c.u, got, c.want)
		}
	}
	// A mask keeps the argmax and the proportions.
	alpha, err := newSeedPRF([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	m := maskFor(alpha, 7, 1, false)
	if !(m.a > 0) || m.apply(1) <= m.apply(0.999) {
		t.Errorf("argmax mask %+v is not strictly increasing", m)
	}
	pm := maskFor(alpha, 7, 2, true)
	if pm.b != 0 || math.Abs(pm.apply(2)/pm.apply(1)-2) > 1e-15 {
		t.Errorf("matching mask %+v does not keep proportions", pm)
	}
}

// TestProgress: the controller reports the steps done, so the daemon can show
// progress and tell a long session from a stuck one.
func TestProgress(t *testing.T) {
	var last protocol.Progress
	reg, _ := protocol.NewRegistry(Family{})
	_, err := sim.Run(context.Background(), reg, testSpec("ucb", 1000, []float64{0.5, 0.4}, 1),
		sim.Options{OnProgress: func(p protocol.Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if last.Step != 1000 || last.Total != 1000 {
		t.Errorf("last progress %+v, want 1000 of 1000", last)
	}
}

// TestRolesIgnoreTick backs Info.MessageDriven, which lets a daemon leave SAMBA's
// roles unticked: ticking every role after every message changes nothing,
// neither a message nor a report, for any algorithm.
func TestRolesIgnoreTick(t *testing.T) {
	arms := []float64{0.7, 0.5, 0.4}
	for _, alg := range Algorithms() {
		var runs [2]*driver
		for i, tick := range []bool{false, true} {
			d := newDriver(t, alg.Name(), 300, arms, 7)
			d.tick = tick
			if err := d.run(); err != nil {
				t.Fatalf("%s, ticked %v: %v", alg.Name(), tick, err)
			}
			runs[i] = d
		}
		plain, ticked := runs[0], runs[1]
		if len(ticked.results) != len(plain.results) || len(plain.results) != len(plain.roles) {
			t.Fatalf("%s: %d of %d parties finished unticked, %d ticked", alg.Name(), len(plain.results), len(plain.roles), len(ticked.results))
		}
		for p, r := range plain.results {
			if !bytes.Equal(r.Report, ticked.results[p].Report) {
				t.Errorf("%s: %s reports %x unticked, %x ticked", alg.Name(), p, r.Report, ticked.results[p].Report)
			}
		}
		pm, pb := plain.net.Stats()
		tm, tb := ticked.net.Stats()
		if pm != tm || pb != tb {
			t.Errorf("%s: %d messages (%d bytes) unticked, %d (%d bytes) ticked", alg.Name(), pm, pb, tm, tb)
		}
	}
}

// TestCombineStepsTime: the controller's steps time becomes steps_seconds
// and ms_per_step; a negative one, or one from another role, is left out
// (a diagnostic must not cost the session its result).
func TestCombineStepsTime(t *testing.T) {
	f := Family{}
	params, err := f.ParseParams(map[string]any{"algorithm": "ucb", "budget": int64(1002)})
	if err != nil {
		t.Fatal(err)
	}
	prep, err := f.PrepareSimulation(map[string]any{"arms": toAny([]float64{0.5, 0.4})}, protocol.Assignment{}, params)
	if err != nil {
		t.Fatal(err)
	}
	a := prep.Assignment
	for _, c := range []struct {
		name    string
		who     protocol.Party
		ns      int64
		seconds float64
		ms      float64
	}{
		{name: "controller", who: controllerParty, ns: 2e9, seconds: 2, ms: 2},
		{name: "none", who: controllerParty},
		{name: "negative", who: controllerParty, ns: -1},
		{name: "comp", who: compParty, ns: 2e9},
	} {
		t.Run(c.name, func(t *testing.T) {
			reports := map[protocol.Party][]byte{}
			for _, p := range a.Parties() {
				r := &sambapb.Report{}
				if p == customerParty {
					r.HasReward, r.CumulativeReward = true, 7
				}
				if p == c.who {
					r.StepsNs = c.ns
				}
				reports[p], _ = proto.Marshal(r)
			}
			out, err := f.Combine(a, params, reports)
			if err != nil {
				t.Fatal(err)
			}
			if res := out.(*Result); res.StepsSeconds != c.seconds || res.MsPerStep != c.ms {
				t.Errorf("steps_seconds %v, ms_per_step %v; want %v, %v", res.StepsSeconds, res.MsPerStep, c.seconds, c.ms)
			}
		})
	}
}

// TestPublicKeySize: a data customer's public key whose modulus is not the
// size the session agreed on (params.paillier_bits, which a node's policy
// may bound from below) stops the session at the first party that gets it.
func TestPublicKeySize(t *testing.T) {
	small, err := privacy.GenerateKey(protocol.SeededRand(3, customerParty), 768)
	if err != nil {
		t.Fatal(err)
	}
	n, err := small.PublicKey.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	d := newDriver(t, "ucb", 100, []float64{0.5, 0.4, 0.3}, 1)
	d.tamper = func(m *protocol.Message) bool {
		var msg sambapb.Message
		proto.Unmarshal(m.Body, &msg)
		if k := msg.GetPublicKey(); k != nil {
			k.N = n
			m.Body, _ = proto.Marshal(&msg)
		}
		return true
	}
	const want = "the data customer's public key has a 768-bit modulus, but the session's params.paillier_bits is 512"
	if err := d.run(); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want one saying %q", err, want)
	}
}
