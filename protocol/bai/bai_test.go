package bai

import (
	"context"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/privacy"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"github.com/bandit-node/bandit-node/protocol/sim"
	"google.golang.org/protobuf/proto"
)

func TestThresholdAndEtaXi(t *testing.T) {
	tests := []struct {
		name  string
		p     Params
		k     int
		wantM int
	}{
		{"dp_mase δ=0.05 β=0.5 (Prop. 4.2)", Params{Algorithm: AlgDPMASE, Delta: 0.05, Beta: 0.5}, 10, 5},
		{"Féraud ξ=0: η enters M", Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0}, 10, 29},
		{"ξ=0.05: η_ξ=0.841 enters M", Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0.05}, 10, 18},
		{"ξ=0.1: η_ξ=0.742", Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0.1}, 10, 11},
		{"central votes not", Params{Algorithm: AlgCentral, Delta: 0.05}, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Threshold(tt.k); got != tt.wantM {
				t.Errorf("M = %d, want %d", got, tt.wantM)
			}
		})
	}
	if got := EtaXi(0.9, 0.05, 10); math.Abs(got-0.84133) > 1e-4 {
		t.Errorf("η_ξ = %v, want 0.84133 (Proposition 5.1)", got)
	}
	if got := EtaXi(0.9, 0.3, 10); got != 0 {
		t.Errorf("η_ξ = %v, want 0 when (1−ξ)^{K−1} ≤ 1−η", got)
	}
	// With ξ = 0 the corrected Proposition 5.2 is η^M, at most δ.
	if got := Prop52Bound(0.9, 0, 29); math.Abs(got-math.Pow(0.9, 29)) > 1e-12 || got > 0.05 {
		t.Errorf("Prop52Bound(ξ=0) = %v, want 0.9^29 = %v ≤ δ", got, math.Pow(0.9, 29))
	}
	// Corruption only makes failure less likely.
	if a, b := Prop52Bound(0.84, 0.05, 18), math.Pow(0.84, 18); a > b {
		t.Errorf("Prop52Bound with corruption %v exceeds η_ξ^M = %v", a, b)
	}
}

func TestParamsErrorsNameTheKey(t *testing.T) {
	tests := []struct {
		raw  map[string]any
		want string
	}{
		{map[string]any{"algorithm": "bogus"}, "params.algorithm"},
		{map[string]any{"algorithm": "dp_mase", "epsilon": -1.0}, "params.epsilon"},
		{map[string]any{"algorithm": "dp_mase", "beta": 1.0}, "params.beta"},
		{map[string]any{"eta": 1.5}, "params.eta"},
		{map[string]any{"xi": 1.0}, "params.xi"},
		{map[string]any{"delta": 0.0}, "params.delta"},
		{map[string]any{"arms": int64(1)}, "params.arms"},
		{map[string]any{"reward_min": 2.0}, "params.reward_min"},
		{map[string]any{"epsilom": 0.1}, "unknown key params.epsilom"},
	}
	for _, tt := range tests {
		_, err := Family{}.ParseParams(tt.raw)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: err = %v, want %q", tt.raw, err, tt.want)
		}
	}
}

// TestAccuracy: the returned arm is the best arm in at least 1−δ of 100 runs
// of each private algorithm (Propositions 4.2 and 5.2).
func TestAccuracy(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("200 simulations, single-threaded: too slow under -short or -race (.ci/run runs it without -race)")
	}
	for _, c := range []struct {
		alg    string
		agents int
	}{{AlgDPMASE, 8}, {AlgCorrupted, 24}} {
		t.Run(c.alg, func(t *testing.T) {
			correct := 0
			const runs = 100
			for seed := range int64(runs) {
				res, _ := simulate(t, problem1Spec(t, c.alg, c.agents, seed+1))
				if res.Correct != nil && *res.Correct {
					correct++
				}
			}
			if float64(correct) < (1-0.05)*runs {
				t.Errorf("%s found the best arm in %d of %d runs, want at least 95", c.alg, correct, runs)
			}
		})
	}
}

func TestSimulationIsDeterministicAndCountsSteps(t *testing.T) {
	for _, alg := range []string{AlgDPMASE, AlgCorrupted, AlgCentral, AlgIndependent} {
		a, simA := simulate(t, problem1Spec(t, alg, 32, 7))
		b, _ := simulate(t, problem1Spec(t, alg, 32, 7))
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs of one seed differ", alg)
		}
		if a.BestArm == nil || a.Correct == nil {
			t.Errorf("%s: no answer: %s", alg, a.NoAnswer)
			continue
		}
		// Every global step is one agent's interaction.
		if alg != AlgIndependent && a.SampleComplexity != simA.Steps {
			t.Errorf("%s: sample complexity %d, but the simulator took %d steps", alg, a.SampleComplexity, simA.Steps)
		}
	}
}

func TestBudgetRunsOut(t *testing.T) {
	spec := problem1Spec(t, AlgCorrupted, 32, 1)
	spec.Params["budget"] = int64(500)
	res, sim := simulate(t, spec)
	if res.BestArm != nil || !strings.Contains(res.NoAnswer, "budget of 500") || sim.Steps != 500 {
		t.Errorf("result %+v after %d steps, want no answer because the budget ran out", res, sim.Steps)
	}
}

// TestWireCarriesOnlyVotesAndEliminations records every message of a
// simulated session: agents send the coordinator nothing but votes (an arm
// index) and, last, one empty stop notice; the coordinator publishes nothing
// but cumulative eliminations, one announcement per global elimination; and
// every vote counted was sent.
func TestWireCarriesOnlyVotesAndEliminations(t *testing.T) {
	for _, alg := range []string{AlgDPMASE, AlgCorrupted} {
		t.Run(alg, func(t *testing.T) {
			var votes, announcements int64
			var last []uint32
			stopped := map[protocol.Party]bool{}
			observe := func(m protocol.Message) {
				if stopped[m.From] {
					t.Errorf("%v sent after its stop notice", m)
				}
				var msg baipb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatalf("undecodable message %v", m)
				}
				switch k := msg.Kind.(type) {
				case *baipb.Message_Vote:
					if m.From.Role != RoleAgent || m.To != coordinatorParty || m.Topic {
						t.Errorf("vote %v not from an agent to the coordinator", m)
					}
					if len(m.Body) > 4 {
						t.Errorf("a vote of %d bytes carries more than an arm index", len(m.Body))
					}
					votes++
				case *baipb.Message_Stopped:
					if m.From.Role != RoleAgent || m.To != coordinatorParty || m.Topic || len(m.Body) > 2 {
						t.Errorf("stop notice %v is not an empty message from an agent to the coordinator", m)
					}
					stopped[m.From] = true
				case *baipb.Message_Eliminated:
					if m.From != coordinatorParty || !m.Topic {
						t.Errorf("announcement %v not published by the coordinator", m)
					}
					if m.To.Index == 0 { // count each publication once
						announcements++
						last = k.Eliminated.Arms
					}
				default:
					t.Errorf("message of another kind on the wire: %v", m)
				}
			}
			reg, _ := protocol.NewRegistry(Family{})
			out, err := sim.Run(context.Background(), reg, problem1Spec(t, alg, 24, 3), sim.Options{OnMessage: observe})
			if err != nil {
				t.Fatal(err)
			}
			res := out.Result.(*Result)
			if announcements != int64(len(res.EliminationOrder)) || !reflect.DeepEqual(last, res.EliminationOrder) {
				t.Errorf("%d announcements ending with %v, want %d ending with %v", announcements, last, len(res.EliminationOrder), res.EliminationOrder)
			}
			if votes < res.Votes || votes == 0 {
				t.Errorf("%d votes sent, but the coordinator counted %d", votes, res.Votes)
			}
			if len(stopped) == 0 {
				t.Error("no agent sent a stop notice")
			}
		})
	}
}

// TestDPMASEVotesAreDifferentiallyPrivate measures Proposition 4.1 on one
// epoch: the distribution of the set of arms an agent votes against changes
// by at most a factor e^ε between two reward datasets that differ in one
// reward. The noise is the secure sampler of real sessions. A mechanism with
// a tenth of the noise must fail the same test, which shows it can fail.
func TestDPMASEVotesAreDifferentiallyPrivate(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("statistical test, single-threaded: too slow under -short or -race (.ci/run runs it without -race)")
	}
	const eps, trials = 0.5, 40000
	a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Rand: cryptoReader{}, Logger: slog.New(slog.DiscardHandler)},
		Params{Algorithm: AlgDPMASE, Delta: 0.05, Epsilon: eps, Beta: 0.5, RewardMax: 1},
		&AgentLocal{Env: Environment{Reward: RewardBernoulli, Arms: []float64{0.5, 0.5, 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	r := float64(a.epochLen)
	thr := 2 * (math.Sqrt(math.Log(8*3/a.p.Beta)/(2*r)) + math.Log(4*3/a.p.Beta)/(eps*r))
	// One epoch of R rounds: arm 0 leads, arm 1 sits half a reward below the
	// elimination threshold, arm 2 far below; the neighbour has one more 1 for
	// arm 1, which puts it half a reward above.
	arm1 := (0.6-thr)*r - 0.5
	votes := func(arm1Sum float64) map[string]float64 {
		counts := map[string]float64{}
		for range trials {
			a.sums = []float64{0.6 * r, arm1Sum, 0.1 * r}
			out, err := a.dpLocalElimination()
			if err != nil {
				t.Fatal(err)
			}
			key := ""
			for _, k := range out {
				key += string(rune('0' + k))
			}
			counts[key]++
		}
		return counts
	}
	worstRatio := func() float64 {
		d, dn := votes(arm1), votes(arm1+1)
		worst := 1.0
		for key, c := range d {
			if cn := dn[key]; c >= 1500 && cn >= 1500 { // frequent enough to estimate
				worst = math.Max(worst, math.Max(c/cn, cn/c))
			}
		}
		return worst
	}
	// Sampling error on counts ≥ 1500 is a few percent.
	if w := worstRatio(); w > math.Exp(eps)*1.1 {
		t.Errorf("vote distributions differ by a factor %.3f between neighbouring datasets, more than e^ε = %.3f", w, math.Exp(eps))
	}
	// The same test on an agent whose noise is 8× too small must fail.
	a.noise = weakNoise{}
	if w := worstRatio(); w <= math.Exp(eps)*1.1 {
		t.Errorf("the test did not notice an eighth of the noise (factor %.3f): it cannot fail", w)
	}
}

// weakNoise is the secure sampler with an eighth of the noise it should add.
type weakNoise struct{}

func (weakNoise) Laplace(x, sensitivity, epsilon float64) (float64, error) {
	return privacy.SecureNoise{}.Laplace(x, sensitivity, 8*epsilon)
}

func (weakNoise) Gaussian(x, sigma float64) (float64, error) {
	return privacy.SecureNoise{}.Gaussian(x, sigma/8)
}

// cryptoReader is crypto/rand for tests that use the secure sampler.
type cryptoReader struct{}

func (cryptoReader) Read(b []byte) (int, error) { return cryptoRandRead(b) }

// TestLateAgentLearnsEveryElimination: announcements are cumulative, so an
// agent that missed some (it joined the topic late, or was disconnected)
// learns every earlier elimination from the next one it receives.
func TestLateAgentLearnsEveryElimination(t *testing.T) {
	a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Rand: cryptoReader{}, Clock: zeroClock{}, Logger: slog.New(slog.DiscardHandler)},
		Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0.05, RewardMax: 1},
		&AgentLocal{Env: Environment{Reward: RewardBernoulli, Arms: []float64{0.7, 0.5, 0.3, 0.1}}})
	if err != nil {
		t.Fatal(err)
	}
	ann := func(arms []uint32, decided bool) protocol.Message {
		body, _ := proto.Marshal(&baipb.Message{Kind: &baipb.Message_Eliminated{Eliminated: &baipb.Eliminated{Arms: arms, Decided: decided}}})
		return protocol.Message{From: coordinatorParty, Topic: true, Body: body}
	}
	// It missed the announcements of arms 3 and 2; the third names both.
	if err := a.Step(ann([]uint32{3, 2, 1}, false)); err != nil {
		t.Fatal(err)
	}
	a.sync()
	if a.nActive != 1 || !a.active[0] {
		t.Fatalf("after the cumulative announcement the agent keeps %v, want only arm 0", a.active)
	}
	if !a.finished {
		t.Error("an agent left with one arm did not stop")
	}
	// A forged or corrupt announcement is refused.
	b, _ := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Rand: cryptoReader{}, Logger: slog.New(slog.DiscardHandler)},
		Params{Algorithm: AlgCorrupted, Delta: 0.05, Eta: 0.9, Xi: 0.05, RewardMax: 1},
		&AgentLocal{Env: Environment{Reward: RewardBernoulli, Arms: []float64{0.7, 0.5}}})
	if err := b.Step(ann([]uint32{7}, false)); err == nil {
		t.Error("an announcement of arm 7 of 2 was accepted")
	}
	other := ann([]uint32{1}, false)
	other.From = protocol.Party{Role: RoleAgent, Index: 3}
	if err := b.Step(other); err == nil {
		t.Error("an announcement from an agent was accepted")
	}
}

type zeroClock struct{}

func (zeroClock) Now() time.Time { return time.Time{} }
