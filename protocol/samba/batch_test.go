package samba

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/randsrc"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/proto"
)

func batchSpec(alg string, budget int64, batch int, arms []float64, seed int64) *protocol.Spec {
	s := testSpec(alg, budget, arms, seed)
	s.Params["batch"] = int64(batch)
	return s
}

// TestTheorem2Batched: Theorem 2 for batched sessions. For every algorithm,
// batch sizes that do and do not divide N − K = 1,496 (the last batch
// shorter: 1,496 = 187·8 = 14·100 + 96 = 1,000 + 496), SAMBA in simulation and the plaintext batched
// reference (Reference with params.batch) return the same cumulative reward
// and the same arm sequence, step for step; a round of each iteration costs
// 2K + 2n messages for a batch of n steps (K scores messages, n lists to
// comp, n lists of bits back, K bits messages), and 2K + 1 + n for UCB's,
// one list to comp and a list of bits a step back (batchShape).
func TestTheorem2Batched(t *testing.T) {
	const budget, k = 1500, 4
	arms := []float64{0.6, 0.5, 0.45, 0.2}
	for _, alg := range Algorithms() {
		for _, sched := range []struct {
			batch  int
			growth float64
		}{{8, 1}, {100, 1}, {MaxBatch, 1}, {1, 2}, {10, 1.5}} {
			batch := sched.batch
			for _, seed := range []int64{1, 2} {
				spec := batchSpec(alg.Name(), budget, batch, arms, seed)
				spec.Params["batch_growth"] = sched.growth
				res, sim := simulate(t, spec)
				if res.ReferenceCumulativeReward == nil || *res.ReferenceCumulativeReward != res.CumulativeReward || !*res.SameArmSequence {
					t.Errorf("%s B = %d seed %d: SAMBA %d, reference %v, same sequence %v", alg.Name(), batch, seed, res.CumulativeReward, res.ReferenceCumulativeReward, res.SameArmSequence)
				}
				var total int64
				for _, n := range res.Pulls {
					total += n
				}
				if total != budget {
					t.Errorf("%s B = %d: %d pulls for a budget of %d", alg.Name(), batch, total, budget)
				}
				p, err := (Family{}).ParseParams(spec.Params)
				if err != nil {
					t.Fatal(err)
				}
				var batches int64
				for t0 := uint64(k + 1); t0 <= budget; batches++ {
					n, _ := batchShape(p.(Params), alg, k, t0)
					t0 += uint64(n)
				}
				steps := int64(budget - k)
				lists := steps // of scores to comp: one a step
				if alg.Name() == "ucb" {
					lists = batches // one a batch
				}
				setup := int64(k + 1 + k + k + k + 1)
				if want := int64(alg.Iterations())*(2*k*batches+lists+steps) + setup; sim.Messages != want {
					t.Errorf("%s B = %d: %d messages, want %d", alg.Name(), batch, sim.Messages, want)
				}
			}
		}
	}
}

// TestBatchSchedule: the batches a schedule cuts — fixed, geometric from B
// with growth g up to MaxBatch — and the budget's cut of the last, as every
// role and the reference derive them.
func TestBatchSchedule(t *testing.T) {
	ucbAlg, _ := AlgorithmByName("ucb")
	thompson, _ := AlgorithmByName("thompson")
	for _, tt := range []struct {
		batch  int
		growth float64
		budget int64
		want   []int // the batches' steps, in order
	}{
		{1, 1, 10, []int{1, 1, 1, 1, 1, 1}},
		{4, 1, 14, []int{4, 4, 2}},
		{10, 2, 4 + 10 + 20 + 40 + 7, []int{10, 20, 40, 7}},
		{1, 3, 4 + 1 + 3 + 9 + 27, []int{1, 3, 9, 27}},
		{1, 1.5, 4 + 1 + 2 + 3 + 4 + 6, []int{1, 2, 3, 4, 6}}, // ⌈1.5⌉, ⌈2.25⌉, ⌈3.375⌉, ⌈5.06⌉ cut at 6
		{300, 2, 4 + 300 + 600 + 1000 + 1000 + 5, []int{300, 600, 1000, 1000, 5}},
	} {
		p := DefaultParams()
		p.Batch, p.BatchGrowth, p.Budget = tt.batch, tt.growth, tt.budget
		var got []int
		for t0 := uint64(5); t0 <= uint64(p.Budget); {
			n, m := batchShape(p, thompson, 4, t0)
			if n != m {
				t.Errorf("B = %d, g = %v: thompson's batch at %d has %d steps and %d lists", tt.batch, tt.growth, t0, n, m)
			}
			if _, m := batchShape(p, ucbAlg, 4, t0); m != 1 {
				t.Errorf("B = %d, g = %v: UCB's batch at %d has %d lists, want 1", tt.batch, tt.growth, t0, m)
			}
			got = append(got, n)
			t0 += uint64(n)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("B = %d, g = %v, N = %d: batches %v, want %v", tt.batch, tt.growth, tt.budget, got, tt.want)
		}
	}
	for _, c := range []struct {
		growth any
		want   string
	}{{0.5, "params.batch_growth: 0.5 is not in [1, 10]"}, {11.0, "params.batch_growth: 11"}, {math.NaN(), "params.batch_growth"}, {2.0, ""}} {
		_, err := (Family{}).ParseParams(map[string]any{"batch_growth": c.growth})
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("batch_growth %v: err = %v, want %q", c.growth, err, c.want)
		}
	}
}

// TestBatchedReferenceDecidesFromTheBatchStart: the batched reference is
// not the sequential algorithm — with a batch as long as the session, UCB
// never sees a reward after the initial pulls, and every step's score is
// the same (t is the batch's first step), so it pulls one arm throughout —
// and B = 1 is the sequential one.
func TestBatchedReferenceDecidesFromTheBatchStart(t *testing.T) {
	arms := []float64{0.6, 0.5, 0.45, 0.2}
	p := DefaultParams()
	p.Budget, p.PaillierBits = 1000, 512
	seq, seqPulls, err := Reference(p, arms, 3)
	if err != nil {
		t.Fatal(err)
	}
	p.Batch = 1000
	_, pulls, err := Reference(p, arms, 3)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int]int{}
	for _, i := range pulls[len(arms):] {
		counts[i]++
	}
	if len(counts) != 1 {
		t.Errorf("UCB in one batch pulled %d arms after the initial ones, want 1: %v", len(counts), counts)
	}
	p.Batch = 1
	again, againPulls, err := Reference(p, arms, 3)
	if err != nil {
		t.Fatal(err)
	}
	if again != seq || fmt.Sprint(againPulls) != fmt.Sprint(seqPulls) {
		t.Error("the reference with batch = 1 differs from the sequential one")
	}
}

// transcript runs a session by hand and returns the SHA-256 of every
// party's messages, recipient and bytes, in the order the party sent them
// (the order between parties depends on the driver's map iteration, each
// party's own does not).
func transcript(t *testing.T, raw map[string]any, arms []float64, seed int64) string {
	d := newDriverWith(t, raw, arms, seed)
	bySender := map[protocol.Party]hash.Hash{}
	d.tamper = func(m *protocol.Message) bool {
		h := bySender[m.From]
		if h == nil {
			h = sha256.New()
			bySender[m.From] = h
		}
		fmt.Fprintf(h, "%s:%d:", m.To, len(m.Body))
		h.Write(m.Body)
		return true
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for p, h := range bySender {
		lines = append(lines, fmt.Sprintf("%s %x", p, h.Sum(nil)))
	}
	sort.Strings(lines)
	all := sha256.New()
	for _, l := range lines {
		fmt.Fprintln(all, l)
	}
	return hex.EncodeToString(all.Sum(nil))
}

// TestBatchOneIsTheSequentialProtocol: params.batch = 1, given or not, is
// the paper's protocol byte for byte — the transcripts are those of the
// build before batches existed (wire 1.1.0), recorded from it — so that a
// session of B = 1 runs between this build and the previous one.
func TestBatchOneIsTheSequentialProtocol(t *testing.T) {
	arms := []float64{0.7, 0.4, 0.35}
	for _, c := range []struct {
		alg, want string
	}{
		{"ucb", goldenUCB},
		{"pursuit", goldenPursuit},
		{"epsilon_greedy", goldenEpsilon},
	} {
		for _, raw := range []map[string]any{
			{"algorithm": c.alg, "budget": int64(300), "paillier_bits": int64(512)},
			{"algorithm": c.alg, "budget": int64(300), "paillier_bits": int64(512), "batch": int64(1)},
		} {
			if got := transcript(t, raw, arms, 9); got != c.want {
				t.Errorf("%v: transcript %s, the sequential protocol's is %s", raw, got, c.want)
			}
		}
	}
}

// The transcripts of TestBatchOneIsTheSequentialProtocol, recorded with
// the build before params.batch (commit 6b3d8f4).
const (
	goldenUCB     = "b2df9171c72c6ed2e6756c701970449dc0f412d82f1096f7cca1c4e33a077f10"
	goldenPursuit = "3cb1ef5528c25e1d0adbdae3a9f46fccf499bc2c38108ab861fb7806d65bbd6c"
	goldenEpsilon = "d7e525278e5dc56fc938e6bb5a4ec88c0256e58df180c88c7a9bb2ba9e7be6b8"
)

// TestBatchedViews (Figure 7 for batched sessions): over a batch of B steps
// each role receives what it would over B sequential steps, no more. Comp
// receives every step's list on its own — or, for UCB, decided by the state
// alone, one list for the whole batch, from which it selects a position a
// step — permuted by its own σ_t and masked by its own mask, the position
// it selects (a list's first step's) uniform over the positions (χ²), the
// lists unlike unmasked scores; the controller handles envelopes sealed
// for comp or for the data owners only, each step's under that step's
// associated data; a data owner receives, besides the setup, one message a
// batch and iteration holding exactly the batch's bits, one a step, and no
// other data owner's score; the data customer one message.
func TestBatchedViews(t *testing.T) {
	const k, budget, batch = 4, 4000, 64
	for _, tt := range []struct {
		alg string
		// [lo, hi] holds the unmasked scores: UCB's lie in [0, 1 + √(2 ln 4000)]
		// ⊂ [0, 6], softmax's exp(μ̂/τ) in [1, exp(1/τ)], Pursuit's means
		// and probabilities in [0, 1].
		lo, hi float64
	}{{"ucb", 0, 6}, {"softmax", 1, math.Exp(1 / 0.06)}, {"pursuit", 0, 1}} {
		alg := tt.alg
		t.Run(alg, func(t *testing.T) {
			d := newDriverWith(t, map[string]any{"algorithm": alg, "budget": int64(budget), "paillier_bits": int64(512), "batch": int64(batch)},
				[]float64{0.9, 0.2, 0.2, 0.1}, 5)
			c := d.roles[compParty].(*comp)
			iters := c.alg.Iterations()
			positions := make([]int, k)
			lists := map[[2]uint64]int{} // (t, l) → lists comp saw
			rawLists := 0
			c.view = func(step uint64, l int, scores []float64, sel []int) {
				lists[[2]uint64{step, uint64(l)}]++
				if len(scores) != k {
					t.Errorf("comp saw %d scores at step %d, want K = %d", len(scores), step, k)
				}
				if n, m := batchShape(c.p, c.alg, c.k, c.t0); m < n && len(sel) != n || m == n && len(sel) != 1 {
					t.Errorf("comp selected %d positions from the list of step %d in a batch of %d steps and %d lists", len(sel), step, n, m)
				}
				if l == iters {
					positions[sel[0]]++
				}
				unmasked := true
				for _, v := range scores {
					if v < tt.lo || v > tt.hi {
						unmasked = false
					}
				}
				if unmasked {
					rawLists++
				}
			}
			bits := make([]int, k)     // bits each data owner received
			messages := make([]int, k) // bits messages each received
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
				if msg.GetScore() != nil || msg.GetBit() != nil {
					t.Errorf("a sequential %T in a batched session", msg.Kind)
				}
				if m.To == customerParty {
					toCustomer++
				}
				if m.To.Role == RoleOwner {
					switch b := msg.GetOwnerBits(); {
					case b != nil && m.From == controllerParty:
						messages[m.To.Index]++
						bits[m.To.Index] += len(b.Boxes)
						if want, _ := batchShape(c.p, c.alg, c.k, b.T); len(b.Boxes) != want {
							t.Errorf("data owner %d received %d bits for the batch at step %d, want %d", m.To.Index, len(b.Boxes), b.T, want)
						}
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
			steps := budget - k
			batches := (steps + batch - 1) / batch
			decisions := steps // the lists of an iteration: one a step
			if alg == "ucb" {
				decisions = batches // one a batch
			}
			if len(lists) != decisions*iters {
				t.Errorf("comp saw lists of %d steps and iterations, want %d", len(lists), decisions*iters)
			}
			for key, n := range lists {
				if n != 1 {
					t.Errorf("comp saw %d lists of step %d iteration %d, want 1", n, key[0], key[1])
				}
			}
			chi := 0.0
			for _, o := range positions {
				e := float64(decisions) / k
				chi += (float64(o) - e) * (float64(o) - e) / e
			}
			if chi > 16.27 { // 3 degrees of freedom, 0.001
				t.Errorf("comp's selected positions %v are not uniform (χ² = %.1f)", positions, chi)
			}
			if rawLists > decisions*iters/2 {
				t.Errorf("%d of comp's %d lists could be unmasked scores", rawLists, decisions*iters)
			}
			rounds := batches * iters
			for i := range k {
				if bits[i] != steps*iters || messages[i] != rounds {
					t.Errorf("data owner %d received %d bits in %d messages, want one a step and iteration (%d) in one message a batch and iteration (%d)", i, bits[i], messages[i], steps*iters, rounds)
				}
			}
			if toCustomer != 1 {
				t.Errorf("the data customer received %d messages, want 1", toCustomer)
			}
		})
	}
}

// TestBatchedUCBIsOneListABatch: in a batched UCB session comp opens one
// list a batch — at the batch's first step, the UCB scores of the state at
// the batch's start un-masked — where B sequential steps would show it B,
// and selects a position for each step of the batch, every one holding the
// list's largest score (the same one throughout when it is unique); every
// step of a batch pulls an arm whose UCB score at the batch's start is the
// largest. (With B lists a batch, one vector under B masks of bounded
// ranges, comp could estimate the vector's values: batch.go.)
func TestBatchedUCBIsOneListABatch(t *testing.T) {
	const k, budget, batch = 4, 4000, 64
	d := newDriverWith(t, map[string]any{"algorithm": "ucb", "budget": int64(budget), "paillier_bits": int64(512), "batch": int64(batch)},
		[]float64{0.9, 0.5, 0.45, 0.2}, 5)
	c := d.roles[compParty].(*comp)
	owners := make([]*dataOwner, k)
	for i := range owners {
		owners[i] = d.roles[protocol.Party{Role: RoleOwner, Index: i}].(*dataOwner)
	}
	ucbScores := func(step int64) []float64 {
		v := make([]float64, k)
		for i, o := range owners {
			v[i] = ucb{}.ComputeScore(&ScoreContext{T: step, K: k, S: o.sc.S, N: o.sc.N})
		}
		return v
	}
	best := map[uint64][]bool{} // a batch's first step → the arms of the largest UCB score
	var starts []uint64
	c.view = func(step uint64, l int, scores []float64, sel []int) {
		// Comp opens a batch's list while every data owner waits for the
		// batch's bits, at the batch's start state.
		t0 := owners[0].t
		starts = append(starts, step)
		if step != t0 {
			t.Errorf("comp opened a list of step %d in the batch that starts at step %d", step, t0)
		}
		if n, _ := batchShape(c.p, c.alg, c.k, t0); len(sel) != n {
			t.Errorf("comp selected %d positions from the list of the batch of %d steps at step %d", len(sel), n, t0)
		}
		m := maskFor(owners[0].alpha, step, l, false)
		un := make([]float64, len(scores))
		for j, v := range scores {
			un[j] = (v - m.b) / m.a
		}
		sort.Float64s(un)
		want := ucbScores(int64(t0))
		top := slices.Max(want)
		best[t0] = make([]bool, k)
		for i, v := range want {
			best[t0][i] = v == top
		}
		want = slices.Sorted(slices.Values(want))
		for j := range un {
			// Un-masking's rounding: masks scale by up to 2^±20.
			if math.Abs(un[j]-want[j]) > 1e-9 {
				t.Errorf("step %d: comp's list un-masked is %v, not the UCB scores at the batch's start: %v", step, un, want)
				break
			}
		}
		ties := 0
		for _, v := range scores {
			if v == slices.Max(scores) {
				ties++
			}
		}
		for j, pos := range sel {
			if scores[pos] != slices.Max(scores) {
				t.Errorf("the batch at step %d: comp selected position %d for its step %d, which does not hold the largest score", t0, pos, t0+uint64(j))
			}
			if ties == 1 && pos != sel[0] {
				t.Errorf("the batch at step %d: comp selected positions %d and %d with a unique largest score", t0, sel[0], pos)
			}
		}
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	steps := budget - k
	if len(starts) != (steps+batch-1)/batch {
		t.Errorf("comp opened %d lists for %d batches", len(starts), (steps+batch-1)/batch)
	}
	for i, o := range owners {
		for _, step := range o.pulls[1:] { // after the initial pull
			t0 := step - (step-k-1)%batch
			if !best[t0][i] {
				t.Errorf("data owner %d pulled at step %d, in the batch at step %d whose largest UCB scores are arms %v", i, step, t0, best[t0])
			}
		}
	}
}

// TestBatchedUCBBreaksTiesPerStep: where the batch's one list ties arms,
// comp draws each step's position among them on its own — uniformly (χ²
// over the draws of the first batch, where every arm ties: the same
// reward 0 from one pull each), so the batch pulls every tied arm rather
// than one of them throughout — and the plaintext reference makes the same
// draws: the same arm at every step (Theorem 2).
func TestBatchedUCBBreaksTiesPerStep(t *testing.T) {
	const k, batch, budget = 4, 400, 4 + 3*400
	arms := []float64{0, 0, 0, 0}
	raw := map[string]any{"algorithm": "ucb", "budget": int64(budget), "paillier_bits": int64(512), "batch": int64(batch)}
	d := newDriverWith(t, raw, arms, 7)
	c := d.roles[compParty].(*comp)
	var first []int
	c.view = func(step uint64, _ int, _ []float64, sel []int) {
		if step == k+1 {
			first = sel
		}
	}
	if err := d.run(); err != nil {
		t.Fatal(err)
	}
	counts := make([]int, k)
	for _, pos := range first {
		counts[pos]++
	}
	chi := 0.0
	for _, o := range counts {
		e := float64(batch) / k
		chi += (float64(o) - e) * (float64(o) - e) / e
	}
	if len(first) != batch || chi > 16.27 { // 3 degrees of freedom, 0.001
		t.Errorf("comp's %d positions in the first batch, where all %d arms tie: %v, not uniform (χ² = %.1f)", len(first), k, counts, chi)
	}
	pulls := make([]int, budget)
	for i := range k {
		for _, step := range d.roles[protocol.Party{Role: RoleOwner, Index: i}].(*dataOwner).pulls {
			pulls[step-1] = i
		}
	}
	p, err := (Family{}).ParseParams(raw)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := Reference(p.(Params), arms, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pulls, want) {
		t.Errorf("SAMBA pulled %v..., the reference %v...", pulls[:20], want[:20])
	}
}

// TestSelectSteps: comp's selection for the steps a list serves — one
// step, SelectArm (u drawn for a probability matching); several, the
// position of a unique largest score at each, nothing drawn, or a draw a
// step among tied largest scores, every tied position drawn.
func TestSelectSteps(t *testing.T) {
	for _, tt := range []struct {
		name     string
		matching bool
		v        []float64
		steps    int
		allowed  []int // the positions a step may take
		draws    bool  // whether the source moves
	}{
		{"one step, argmax", false, []float64{1, 3, 3, 2}, 1, []int{1}, false},
		{"one step, matching", true, []float64{1, 3, 3, 2}, 1, []int{0, 1, 2, 3}, true},
		{"a unique largest", false, []float64{1, 3, 2.5, 2}, 50, []int{1}, false},
		{"two tied", false, []float64{1, 3, 2, 3}, 50, []int{1, 3}, true},
		{"all tied", false, []float64{0, 0, 0, 0}, 50, []int{0, 1, 2, 3}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := randsrc.New(rand.NewChaCha8([32]byte{1}))
			sel := make([]int, tt.steps)
			selectSteps(tt.matching, tt.v, r, make([]int, 0, len(tt.v)), sel)
			seen := map[int]bool{}
			for _, pos := range sel {
				if !slices.Contains(tt.allowed, pos) {
					t.Errorf("selected %d, not one of %v", pos, tt.allowed)
				}
				seen[pos] = true
			}
			if tt.steps > 1 && len(seen) != len(tt.allowed) {
				t.Errorf("%d steps selected %v, want every one of %v", tt.steps, sel, tt.allowed)
			}
			fresh := randsrc.New(rand.NewChaCha8([32]byte{1}))
			if moved := r.Uint64() != fresh.Uint64(); moved != tt.draws {
				t.Errorf("the source moved: %v, want %v", moved, tt.draws)
			}
		})
	}
}

// TestBatchParams: params.batch is validated, and its errors name it.
func TestBatchParams(t *testing.T) {
	for _, c := range []struct {
		raw  map[string]any
		want string // "" if valid
	}{
		{map[string]any{"batch": int64(0)}, "params.batch: 0 is out of range [1, 1000]"},
		{map[string]any{"batch": int64(-3)}, "params.batch"},
		{map[string]any{"batch": int64(MaxBatch + 1)}, "params.batch: 1001 is out of range"},
		{map[string]any{"batch": int64(200), "budget": int64(100)}, "params.batch: 200 is more than params.budget 100"},
		{map[string]any{"batch": 2.5}, "batch"},
		{map[string]any{"batch": int64(100), "budget": int64(100)}, ""},
		{map[string]any{"batch": int64(MaxBatch)}, ""},
	} {
		p, err := (Family{}).ParseParams(c.raw)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.raw, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: err = %v, want %q", c.raw, err, c.want)
		}
		_ = p
	}
	if p, _ := (Family{}).ParseParams(nil); p.(Params).Batch != 1 {
		t.Errorf("default batch %d, want 1", p.(Params).Batch)
	}
}

// TestBatchedMessagesStaySmall: at the largest batch and the most data
// owners, every message of a round stays below the 64 KiB a driver steps
// where it reads it (protocol.Info.SmallMessages).
func TestBatchedMessagesStaySmall(t *testing.T) {
	const small = 64 << 10
	t0 := uint64(MaxBudget - MaxBatch)
	owner := batchMessageSize(fieldOwnerScores, stepHeadSize(t0, maxIterations)+MaxBatch*boxFieldSize(scoreBoxSize))
	bits := batchMessageSize(fieldOwnerBits, stepHeadSize(t0, maxIterations)+MaxBatch*boxFieldSize(bitBoxSize))
	comp := batchMessageSize(fieldScores, stepHeadSize(t0, maxIterations)+MaxOwners*boxFieldSize(scoreBoxSize))
	for what, n := range map[string]int{"a data owner's scores": owner, "a data owner's bits": bits, "a list to comp": comp} {
		if n > small {
			t.Errorf("%s: %d bytes, more than %d", what, n, small)
		}
	}
}

// TestWireVersions: the family speaks 1.3.0 (a bit a step of a batch of
// UCB), 1.2.0 (batches, one bit a batch of UCB) and 1.1.0. On 1.1.0 a
// session of params.batch = 1 runs as before — its messages are the same
// (TestBatchOneIsTheSequentialProtocol) — and a batched one is refused; on
// 1.2.0 a batched session runs unless its algorithm is UCB, whose data
// owners there take one bit a batch. Each refusal names params.batch (and
// the algorithm) and both versions: by ParseParams at the old version
// (which the initiator calls once it has chosen the version), and by
// NewRole for params parsed at 1.3.0.
func TestWireVersions(t *testing.T) {
	if got := protocol.WireVersions(Family{}); fmt.Sprint(got) != "[1.3.0 1.2.0 1.1.0]" {
		t.Fatalf("wire versions %v", got)
	}
	s := newFuzzSession(t)
	for _, c := range []struct {
		wire  string
		alg   string
		batch int64
		want  string // "" if the role starts
	}{
		{"1.1.0", "ucb", 1, ""},
		{"1.1.0", "thompson", 4, "params.batch: 4 needs SAMBA wire 1.2.0, and this session runs on 1.1.0"},
		{"1.1.0", "ucb", 4, "params.batch: 4 needs SAMBA wire 1.2.0, and this session runs on 1.1.0"},
		{"1.2.0", "ucb", 1, ""},
		{"1.2.0", "thompson", 4, ""},
		{"1.2.0", "pursuit", 4, ""},
		{"1.2.0", "ucb", 4, "params.batch: 4 with params.algorithm = ucb needs SAMBA wire 1.3.0 (a bit a step of each batch), and this session runs on 1.2.0"},
	} {
		old, ok := protocol.AtWireVersion(Family{}, c.wire)
		if !ok || protocol.WireVersion(old) != c.wire {
			t.Fatalf("at %s: %v %v", c.wire, old, ok)
		}
		raw := map[string]any{"algorithm": c.alg, "budget": int64(20), "paillier_bits": int64(512), "batch": c.batch}
		if _, err := old.ParseParams(raw); (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s batch %d: ParseParams at %s: err = %v, want %q", c.alg, c.batch, c.wire, err, c.want)
		}
		p, err := (Family{}).ParseParams(raw)
		if err != nil {
			t.Fatal(err)
		}
		cfg := s.config(controllerParty)
		cfg.Params = p
		_, err = old.NewRole(cfg)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s batch %d at %s: err = %v, want %q", c.alg, c.batch, c.wire, err, c.want)
		}
		if _, err := (Family{}).NewRole(cfg); err != nil {
			t.Errorf("%s batch %d at 1.3.0: %v", c.alg, c.batch, err)
		}
	}
}

// replayAtNextBatch keeps the boxes of the batch at step 4 and puts them
// in the batch at step 14 (batches of 10 after K = 3), reporting whether it
// rewrote b.
func replayAtNextBatch(b *sambapb.Batch, saved *[][]byte) bool {
	if b == nil {
		return false
	}
	if b.T == 4 && *saved == nil {
		*saved = b.Boxes
	}
	if b.T == 14 && *saved != nil {
		b.Boxes = *saved
		return true
	}
	return false
}

// TestBatchedTampering: within a batch each envelope is bound to its own
// step — a data owner's scores of two steps swapped, a bit of one step
// moved to another, a score copied across data owners in a step's list,
// and a batch replayed at the next; in a batch of UCB, with one list of
// scores, each step's bits still bound to their step — and the session
// stops with an error naming it.
func TestBatchedTampering(t *testing.T) {
	for _, tt := range []struct {
		name    string
		alg     string // "" for thompson: a list a step
		rewrite func(msg *sambapb.Message, saved *[][]byte) bool
		want    string
	}{
		{"two steps' scores swapped in a data owner's batch", "", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetOwnerScores(); b != nil && b.T == 14 {
				b.Boxes[0], b.Boxes[1] = b.Boxes[1], b.Boxes[0]
				return true
			}
			return false
		}, "does not open"},
		{"a step's bit moved to another step", "", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetOwnerBits(); b != nil && b.T == 24 {
				b.Boxes[3] = b.Boxes[2]
				return true
			}
			return false
		}, "does not open"},
		{"a data owner's score copied into another's place in a step's list", "", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetScores(); b != nil && b.T == 15 {
				b.Boxes[2] = b.Boxes[0]
				return true
			}
			return false
		}, "same envelope"},
		{"a data owner's batch replayed at the next", "", func(msg *sambapb.Message, saved *[][]byte) bool {
			return replayAtNextBatch(msg.GetOwnerScores(), saved)
		}, "does not open"},
		{"UCB: a data owner's one score of a batch replayed at the next", "ucb", func(msg *sambapb.Message, saved *[][]byte) bool {
			return replayAtNextBatch(msg.GetOwnerScores(), saved)
		}, "does not open"},
		{"UCB: a data owner's bits of a batch replayed at the next", "ucb", func(msg *sambapb.Message, saved *[][]byte) bool { return replayAtNextBatch(msg.GetOwnerBits(), saved) }, "does not open"},
		{"UCB: two steps' bits swapped in a data owner's batch", "ucb", func(msg *sambapb.Message, _ *[][]byte) bool {
			if b := msg.GetOwnerBits(); b != nil && b.T == 14 {
				b.Boxes[0], b.Boxes[1] = b.Boxes[1], b.Boxes[0]
				return true
			}
			return false
		}, "does not open"},
		{"UCB: comp's bits of a batch's first step returned for its second", "ucb", func(msg *sambapb.Message, saved *[][]byte) bool {
			b := msg.GetBits()
			switch {
			case b != nil && b.T == 14:
				*saved = b.Boxes
			case b != nil && b.T == 15 && *saved != nil:
				b.Boxes = *saved
				return true
			}
			return false
		}, "does not open"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			alg := tt.alg
			if alg == "" {
				alg = "thompson"
			}
			d := newDriverWith(t, map[string]any{"algorithm": alg, "budget": int64(100), "paillier_bits": int64(512), "batch": int64(10)},
				[]float64{0.5, 0.4, 0.3}, 1)
			var saved [][]byte
			d.tamper = func(m *protocol.Message) bool {
				var msg sambapb.Message
				proto.Unmarshal(m.Body, &msg)
				if tt.rewrite(&msg, &saved) {
					m.Body, _ = proto.Marshal(&msg)
				}
				return true
			}
			if err := d.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one saying %q", err, tt.want)
			}
		})
	}
}
