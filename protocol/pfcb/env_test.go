package pfcb

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// envOf is agent a's simulated environment, drawing from crypto/rand.
func envOf(t testing.TB, a *agent) protocol.Environment {
	t.Helper()
	env, err := (Family{}).SimulatedEnvironment(protocol.RoleConfig{Self: a.cfg.Self, Assignment: a.cfg.Assignment,
		Params: a.p, Local: a.local, Rand: cryptoReader{}})
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// drive calls f (a tick, an advance) and then, as a driver does, answers
// every query the agent asks from env, in order, until it asks no more.
// The messages and results of the batches are dropped.
func drive(a *agent, env protocol.Environment, f func() error) error {
	if err := f(); err != nil {
		return err
	}
	for rd := a.Ready(); len(rd.Queries) > 0; rd = a.Ready() {
		for _, q := range rd.Queries {
			o, err := env.Answer(context.Background(), q)
			if err != nil {
				return err
			}
			if err := a.Answer(o); err != nil {
				return err
			}
		}
	}
	return nil
}

// agentOn is agent[self] of n with three producers (costs, capacities
// below); qualities nil means its environment is not simulated.
func agentOn(t testing.TB, p Params, n, self int, qualities []float64) *agent {
	t.Helper()
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("org%d", i)
	}
	a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent, Index: self},
		Assignment: protocol.Assignment{Roles: map[string][]string{RoleAgent: names}},
		Rand:       protocol.SeededRand(int64(self), protocol.Party{Role: RoleAgent, Index: self}), Clock: fixedClock{},
		Logger: slog.New(slog.DiscardHandler), Simulated: true},
		p, &AgentLocal{Qualities: qualities, Costs: []float64{0.2, 0.3, 0.9}, Capacities: []int{49, 10, 5}, Rate: SimulatedRate})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestAnswerIsValidated: an outcome the agent cannot use — the wrong
// number of qualities, one out of [0, 1] or not finite, the answer to
// another query — is refused, naming the round and the producer; a good
// one ends the round, k/units counting exactly k good units.
func TestAnswerIsValidated(t *testing.T) {
	p := fuzzParams()
	p.TLo, p.THi = 32, 32
	begin := func(t *testing.T) (*agent, protocol.Query) {
		a := agentOn(t, p, 2, 0, nil)
		if err := a.advance(1); err != nil {
			t.Fatal(err)
		}
		rd := a.Ready()
		if len(rd.Queries) != 1 {
			t.Fatalf("%d queries after a round's tick, want 1", len(rd.Queries))
		}
		q := rd.Queries[0]
		// Pure exploration: one unit of every producer, at step 0.
		if q.Kind != protocol.QueryProcure || q.Step != 0 || fmt.Sprint(q.Producers) != "[0 1 2]" || fmt.Sprint(q.Quantities) != "[1 1 1]" {
			t.Fatalf("query %+v, want a procurement of one unit from producers 0, 1, 2 at step 0", q)
		}
		return a, q
	}
	for _, tt := range []struct {
		name string
		o    func(q protocol.Query) protocol.Outcome
		want string
	}{
		{"too few", func(q protocol.Query) protocol.Outcome { return protocol.Outcome{ID: q.ID, Qualities: []float64{1, 0}} },
			"round 1 (step 0): the environment answered a procurement with a number of realized qualities other than one per producer"},
		{"too many", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID, Qualities: []float64{1, 0, 1, 1}}
		}, "round 1 (step 0): the environment answered a procurement with a number"},
		{"above 1", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID, Qualities: []float64{1, 1.5, 0}}
		}, "round 1 (step 0): the environment answered a realized quality that is not in [0, 1]"},
		{"negative", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID, Qualities: []float64{1, 0, -0.01}}
		}, "a realized quality that is not in [0, 1]"},
		{"NaN", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID, Qualities: []float64{math.NaN(), 0, 0}}
		}, "round 1 (step 0): the environment answered a realized quality that is not in [0, 1]"},
		{"infinite", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID, Qualities: []float64{0, math.Inf(1), 0}}
		}, "a realized quality that is not in [0, 1]"},
		{"another query", func(q protocol.Query) protocol.Outcome {
			return protocol.Outcome{ID: q.ID + 1, Qualities: []float64{0, 0, 0}}
		}, "round 1 (step 0): an answer to query 2, but the procurement asked is query 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, q := begin(t)
			err := a.Answer(tt.o(q))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			// The reason may reach the other agents: it names no answered
			// value and no producer procured from.
			for _, private := range []string{"1.5", "-0.01", "NaN", "Inf", "[0 1 2]", "producer 1", "producer 2"} {
				if strings.Contains(err.Error(), private) {
					t.Errorf("reason %q holds %q", err, private)
				}
			}
		})
	}
	a, q := begin(t)
	if err := a.Answer(protocol.Outcome{ID: q.ID, Qualities: []float64{1, 0, 0.5}}); err != nil {
		t.Fatal(err)
	}
	if a.asking || a.t != 1 || fmt.Sprint(a.Y) != "[1 0 0.5]" || fmt.Sprint(a.W) != "[1 1 1]" {
		t.Fatalf("after round 1: asking %v, t %d, Y %v, W %v", a.asking, a.t, a.Y, a.W)
	}
	if err := a.Answer(protocol.Outcome{ID: q.ID, Qualities: []float64{1, 0, 0.5}}); err == nil || !strings.Contains(err.Error(), "answered already") {
		t.Fatalf("a second answer: err = %v", err)
	}
	// 1/49 of 49 units, which floating point makes 0.9999999999999999
	// units, counts one good unit.
	a.l = []int{49, 0, 0}
	a.asked, a.units, a.asking, a.queries = []int{0}, []float64{49}, true, 7
	y := a.Y[0]
	if err := a.Answer(protocol.Outcome{ID: 7, Qualities: []float64{1.0 / 49}}); err != nil {
		t.Fatal(err)
	}
	if a.Y[0]-y != 1 {
		t.Fatalf("1/49 of 49 units counted %v good units, want 1", a.Y[0]-y)
	}
}

// rowsEnvironment answers a procurement at step s with row s of its
// qualities, as a replay file of one column per producer does.
type rowsEnvironment struct{ rows [][]float64 }

func (e rowsEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	if q.Kind != protocol.QueryProcure || q.Step < 0 || q.Step >= int64(len(e.rows)) {
		return protocol.Outcome{}, fmt.Errorf("query %+v", q)
	}
	o := protocol.Outcome{ID: q.ID}
	for _, i := range q.Producers {
		o.Qualities = append(o.Qualities, e.rows[q.Step][i])
	}
	return o, nil
}

func (rowsEnvironment) Close() error    { return nil }
func (rowsEnvironment) Immediate() bool { return false }

// runAgents runs agents to the end, each answered by its environment: a
// tick each, then their messages delivered (a topic message to every
// other agent), until every one has its result; it returns their reports
// and what they keep.
func runAgents(t *testing.T, agents []*agent, envs []protocol.Environment) (map[protocol.Party][]byte, []AgentOutcome) {
	t.Helper()
	reports := map[protocol.Party][]byte{}
	outs := make([]AgentOutcome, len(agents))
	var queue []protocol.Message
	take := func(j int) {
		for {
			rd := agents[j].Ready()
			for _, m := range rd.Messages {
				m.From = agents[j].cfg.Self
				queue = append(queue, m)
			}
			if rd.Result != nil {
				reports[agents[j].cfg.Self] = rd.Result.Report
				outs[j] = rd.Result.Local.(AgentOutcome)
			}
			if len(rd.Queries) == 0 {
				return
			}
			for _, q := range rd.Queries {
				o, err := envs[j].Answer(context.Background(), q)
				if err != nil {
					t.Fatal(err)
				}
				if err := agents[j].Answer(o); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for tick := 0; len(reports) < len(agents); tick++ {
		if tick > 100000 {
			t.Fatalf("%d of %d agents finished after %d ticks", len(reports), len(agents), tick)
		}
		for j, a := range agents {
			if err := a.Tick(); err != nil {
				t.Fatal(err)
			}
			take(j)
		}
		for len(queue) > 0 {
			m := queue[0]
			queue = queue[1:]
			for j, a := range agents {
				if j == m.From.Index || a.finished {
					continue
				}
				if err := a.Step(m); err != nil {
					t.Fatal(err)
				}
				take(j)
			}
		}
	}
	return reports, outs
}

// TestAgentsWithoutTrueQualities: agents whose environment is not
// simulated (here, rows of realized qualities, as a replay file gives
// them, fractions that are no multiple of 1/units among them) play every
// round, share, and report their realized revenue and no regret; in a
// session mixing them with an agent on its simulated environment, the
// regret is that agent's alone.
func TestAgentsWithoutTrueQualities(t *testing.T) {
	p := DefaultParams()
	p.Rounds, p.TLo, p.THi = 600, 100, 600 // communicates at rounds 128, 256, 512
	r := rand.New(rand.NewPCG(3, 4))
	rows := make([][]float64, p.Rounds)
	for s := range rows {
		rows[s] = []float64{r.Float64(), 0.9 * r.Float64(), r.Float64() / 3}
	}
	qualities := []float64{0.5, 0.45, 1.0 / 6}
	for _, simulated := range [][]bool{{false, false, false}, {true, false, false}} {
		t.Run(fmt.Sprint(simulated), func(t *testing.T) {
			const n = 3
			agents := make([]*agent, n)
			envs := make([]protocol.Environment, n)
			for j := range n {
				if simulated[j] {
					agents[j] = agentOn(t, p, n, j, qualities)
					envs[j] = envOf(t, agents[j])
				} else {
					agents[j] = agentOn(t, p, n, j, nil)
					envs[j] = rowsEnvironment{rows}
				}
			}
			reports, outs := runAgents(t, agents, envs)
			v, err := (Family{}).Combine(agents[0].cfg.Assignment, p, reports)
			if err != nil {
				t.Fatal(err)
			}
			res := v.(*Result)
			var unknown []string
			for j := range n {
				if !simulated[j] {
					unknown = append(unknown, protocol.Party{Role: RoleAgent, Index: j}.String())
				}
				if outs[j].Rounds != p.Rounds || (outs[j].Regret != nil) != simulated[j] || outs[j].Revenue == 0 {
					t.Errorf("agent[%d] keeps %+v", j, outs[j])
				}
				if res.Revenues[j] != outs[j].Revenue {
					t.Errorf("agent[%d] reports revenue %v and keeps %v", j, res.Revenues[j], outs[j].Revenue)
				}
			}
			if fmt.Sprint(res.RegretUnknown) != fmt.Sprint(unknown) || res.SharesOffered != int64(n*(n-1)*3*3) {
				t.Errorf("regret unknown for %v, want %v; %d shares offered", res.RegretUnknown, unknown, res.SharesOffered)
			}
			if simulated[0] {
				if res.RegretPerAgent != res.Regrets[0] || res.Regrets[0] <= 0 || len(res.Curve) == 0 || res.Regrets[1] != 0 {
					t.Errorf("regret %v per agent, %v, curve of %d points: want agent[0]'s alone", res.RegretPerAgent, res.Regrets, len(res.Curve))
				}
			} else if res.RegretPerAgent != 0 || res.TotalRegret != 0 || res.ConstraintViolations != 0 || len(res.Curve) != 0 {
				t.Errorf("no agent knows its regret, yet %+v", res)
			}
		})
	}
}

// TestDecodeLocalBySource: with its simulated environment an agent needs
// the true qualities; with another source it must not give them (its
// environment answers the realized ones), and keeps its costs,
// capacities and rate.
func TestDecodeLocalBySource(t *testing.T) {
	raw := func(withQualities bool) map[string]any {
		m := map[string]any{"costs": []any{0.2, 0.3}, "capacities": []any{int64(4), int64(5)}, "rate": 200.0}
		if withQualities {
			m["qualities"] = []any{0.5, 0.7}
		}
		return m
	}
	for _, tt := range []struct {
		source    string
		qualities bool
		want      string // "" for success
	}{
		{"", true, ""},
		{"simulated", true, ""},
		{"", false, "0 qualities; give one of each per producer"},
		{"exec", false, ""},
		{"replay", false, ""},
		{"http", true, "local.pfcb.agent.qualities: the agent's environment (source = \"http\") answers its procurements"},
	} {
		t.Run(fmt.Sprintf("%q %v", tt.source, tt.qualities), func(t *testing.T) {
			v, err := (Family{}).DecodeLocal(RoleAgent, &protocol.LocalTable{Key: protocol.LocalKey(Name, RoleAgent), Raw: raw(tt.qualities), Source: tt.source})
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			l := v.(*AgentLocal)
			if len(l.Costs) != 2 || len(l.Capacities) != 2 || l.Rate != 200 || (l.Qualities != nil) != tt.qualities {
				t.Fatalf("decoded %+v", l)
			}
		})
	}
}

// TestSimulatedProducers: the simulated environment answers each
// producer's realized quality, a whole number of good units out of those
// procured, around the true quality; it refuses what is no procurement.
func TestSimulatedProducers(t *testing.T) {
	env, err := (Family{}).SimulatedEnvironment(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Params: DefaultParams(),
		Local: &AgentLocal{Qualities: []float64{0.3, 1, 0}, Costs: []float64{1, 1, 1}, Capacities: []int{1, 1, 1}, Rate: 1},
		Rand:  protocol.SeededEnvironmentRand(1, protocol.Party{Role: RoleAgent})})
	if err != nil {
		t.Fatal(err)
	}
	if !env.Immediate() {
		t.Fatal("the simulated environment is not Immediate")
	}
	const draws = 2000
	sum := 0.0
	for i := range draws {
		o, err := env.Answer(context.Background(), protocol.Query{ID: uint64(i + 1), Kind: protocol.QueryProcure, Step: int64(i),
			Producers: []int{2, 0, 1}, Quantities: []float64{3, 7, 2}})
		if err != nil {
			t.Fatal(err)
		}
		if o.ID != uint64(i+1) || len(o.Qualities) != 3 || o.Qualities[0] != 0 || o.Qualities[2] != 1 {
			t.Fatalf("outcome %+v", o)
		}
		if k := o.Qualities[1] * 7; math.Abs(k-math.Round(k)) > 1e-9 {
			t.Fatalf("realized quality %v of 7 units", o.Qualities[1])
		}
		sum += o.Qualities[1]
	}
	// The mean of 2000 binomial fractions of 7 units at 0.3 has σ ≈ 0.0039.
	if mean := sum / draws; math.Abs(mean-0.3) > 0.02 {
		t.Errorf("mean realized quality %v, want about 0.3", mean)
	}
	for _, q := range []protocol.Query{
		{Kind: protocol.QueryPull, Arms: []int{0}},
		{Kind: protocol.QueryProcure, Producers: []int{3}, Quantities: []float64{1}},
		{Kind: protocol.QueryProcure, Producers: []int{0}, Quantities: []float64{1.5}},
		{Kind: protocol.QueryProcure, Producers: []int{0}, Quantities: []float64{0}},
		{Kind: protocol.QueryProcure, Producers: []int{0, 1}, Quantities: []float64{1}},
	} {
		if _, err := env.Answer(context.Background(), q); err == nil {
			t.Errorf("%+v answered", q)
		}
	}
	if _, err := (Family{}).SimulatedEnvironment(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Params: DefaultParams(),
		Local: &AgentLocal{Costs: []float64{1}, Capacities: []int{1}, Rate: 1}}); err == nil || !strings.Contains(err.Error(), "true qualities") {
		t.Errorf("an environment without qualities: err = %v", err)
	}
	if cols, steps := (Family{}).EnvironmentShape(RoleAgent, DefaultParams(), protocol.Assignment{}); cols != 0 || steps != DefaultParams().Rounds {
		t.Errorf("environment shape %d columns, %d steps", cols, steps)
	}
}
