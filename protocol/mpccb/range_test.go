package mpccb

import (
	"context"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/dataset"
	"github.com/bandit-node/bandit-node/protocol"
)

// rangeAssignment is the session of the range tests: two feature parties.
var rangeAssignment = protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}}

// rangeConfig is the RoleConfig of party self in rangeAssignment.
func rangeConfig(self protocol.Party, p Params, local any) protocol.RoleConfig {
	return protocol.RoleConfig{Self: self, Assignment: rangeAssignment, Params: p, Local: local,
		Rand: rand.NewChaCha8([32]byte{7}), Clock: fixedClock{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

// answerAll starts role and answers its queries, in order, with answers
// (a context or a reward row each, by the query's step), until it has
// asked no more or refuses one; it returns the refusal.
func answerAll(t *testing.T, role protocol.Role, answers [][]float64) error {
	t.Helper()
	if err := role.Start(); err != nil {
		t.Fatal(err)
	}
	for {
		qs := role.Ready().Queries
		if len(qs) == 0 {
			return nil
		}
		for _, q := range qs {
			o := protocol.Outcome{ID: q.ID}
			switch q.Kind {
			case protocol.QueryContext:
				o.X = answers[q.Step]
			case protocol.QueryRewards:
				o.Rewards = answers[q.Step]
			default:
				t.Fatalf("a %s query", q.Kind)
			}
			if err := role.(protocol.Asker).Answer(o); err != nil {
				return err
			}
		}
	}
}

// TestAnswersOutOfRange checks that a feature party refuses a context of
// the wrong width, with a value that is not finite, or whose part has norm
// above 1, and p″ a reward row of the wrong length or not finite, naming
// the query's step and what is wrong but no feature, norm or reward (the
// reason may reach every party); that p″ clamps a reward beyond the
// engine's range into it and counts it in its own result; and that answers
// within range are accepted.
func TestAnswersOutOfRange(t *testing.T) {
	p := DefaultParams()
	p.Dimensions, p.Arms, p.Steps = 4, 2, 3
	// maxReward: 2^(61−40)/(√3/2 → 1) = 2^21 at L = 20; 2^13 at L = 24.
	cases := []struct {
		name    string
		role    string
		answers [][]float64
		edit    func(*Params)
		want    []string // phrases of the error; none when the answers are accepted
		private []string // what the error must not hold
		clamped int64    // p″'s count of clamped rewards, when accepted
	}{
		{"unit features", RoleFeature, [][]float64{{0.6, 0.8}, {1, 0}, {0, 0}}, nil, nil, nil, 0},
		{"a feature too many", RoleFeature, [][]float64{{0.6, 0.8}, {1, 0, 0}, {0, 0}}, nil,
			[]string{"step 1:", "3 features", "columns [0, 2) of 4, that is 2"}, nil, 0},
		{"a feature too few", RoleFeature, [][]float64{{1}, {1, 0}, {0, 0}}, nil,
			[]string{"step 0:", "1 features", "that is 2"}, nil, 0},
		{"not a number", RoleFeature, [][]float64{{0.6, 0.8}, {1, 0}, {math.NaN(), 0}}, nil,
			[]string{"step 2:", "not a finite number"}, []string{"NaN"}, 0},
		{"infinite", RoleFeature, [][]float64{{math.Inf(1), 0}, {1, 0}, {0, 0}}, nil,
			[]string{"step 0:", "not a finite number"}, []string{"Inf"}, 0},
		{"unnormalised features", RoleFeature, [][]float64{{0.6, 0.8}, {0, 1}, {3, 4}}, nil,
			[]string{"step 2 (row 3", "norm above 1", "at most 1"}, []string{"norm 5", " 5", "3, 4"}, 0},
		{"slightly long features", RoleFeature, [][]float64{{0.6, 0.8000001}, {0, 1}, {0, 1}}, nil,
			[]string{"step 0 (row 1", "norm above 1"}, []string{"1.0000"}, 0},
		{"raw pixel values", RoleFeature, [][]float64{{0, 1}, {0, 1}, {255, 12}}, nil,
			[]string{"step 2", "norm above 1"}, []string{"255"}, 0},
		{"rewards in range", RoleReceiver, [][]float64{{0, 1}, {1, 0}, {-1, 2e6}}, nil, nil, nil, 0},
		{"a reward too many", RoleReceiver, [][]float64{{0, 1}, {1, 0, 0}, {0, 1}}, nil,
			[]string{"step 1:", "3 rewards", "2 arms"}, nil, 0},
		{"a reward too few", RoleReceiver, [][]float64{{0, 1}, {1, 0}, {1}}, nil,
			[]string{"step 2:", "1 rewards", "2 arms"}, nil, 0},
		{"reward not a number", RoleReceiver, [][]float64{{math.NaN(), 1}, {1, 0}, {0, 1}}, nil,
			[]string{"step 0:", "not a finite number"}, []string{"NaN"}, 0},
		{"rewards beyond the ring", RoleReceiver, [][]float64{{0, 1}, {1, 0}, {-1, 3e6}}, nil, nil, nil, 1},
		{"rewards beyond the ring at L = 24", RoleReceiver, [][]float64{{0, 1}, {1e4, 0}, {-1e5, 1}},
			func(p *Params) { p.PrecisionBits = 24 }, nil, nil, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := p
			if c.edit != nil {
				c.edit(&pp)
			}
			role, err := Family{}.NewRole(rangeConfig(protocol.Party{Role: c.role}, pp, nil))
			if err != nil {
				t.Fatal(err)
			}
			err = answerAll(t, role, c.answers)
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("refused answers within range: %v", err)
				}
				if rc, ok := role.(*receiver); ok && rc.clamped != c.clamped {
					t.Errorf("p″ clamped %d rewards, want %d", rc.clamped, c.clamped)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted out-of-range answers, want an error with %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			for _, w := range c.private {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q holds %q", err, w)
				}
			}
		})
	}
}

// TestSimulatedEnvironment checks the family's simulated environments: a
// feature party's features and p″'s rewards from memory or from the file
// its config names, read when the environment is built (so a file replaced
// between sessions is used as it is then), answering step t with row t;
// too few rows refused at once, and a step beyond them named.
func TestSimulatedEnvironment(t *testing.T) {
	dir := t.TempDir()
	p := DefaultParams()
	p.Dimensions, p.Arms, p.Steps = 4, 2, 2
	features := filepath.Join(dir, "party0.csv")
	rewards := filepath.Join(dir, "rewards.csv")
	write := func(fs, rs [][]float64) {
		if err := dataset.WriteFeatures(features, fs); err != nil {
			t.Fatal(err)
		}
		if err := dataset.WriteRewards(rewards, rs); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(env protocol.Environment, kind protocol.QueryKind, step int64) ([]float64, error) {
		o, err := env.Answer(context.Background(), protocol.Query{ID: uint64(step + 1), Kind: kind, Step: step})
		if err == nil && o.ID != uint64(step+1) {
			t.Errorf("answer %d to query %d", o.ID, step+1)
		}
		return append(o.X, o.Rewards...), err
	}
	feature, receiver := protocol.Party{Role: RoleFeature}, protocol.Party{Role: RoleReceiver}
	cases := []struct {
		name  string
		self  protocol.Party
		local any
		kind  protocol.QueryKind
		want  [][]float64 // rows answered at steps 0, 1…
		err   string      // the building's error
	}{
		{"features in memory", feature, &FeatureLocal{Rows: [][]float64{{1, 0}, {0, 1}, {0.6, 0.8}}}, protocol.QueryContext,
			[][]float64{{1, 0}, {0, 1}, {0.6, 0.8}}, ""},
		{"features file", feature, &featureConfig{Features: features}, protocol.QueryContext,
			[][]float64{{0.6, 0.8}, {0, 1}}, ""},
		{"rewards in memory", receiver, &RewardLocal{Rows: [][]float64{{0, 1}, {1, 0}}}, protocol.QueryRewards,
			[][]float64{{0, 1}, {1, 0}}, ""},
		{"rewards file", receiver, &rewardConfig{Rewards: rewards}, protocol.QueryRewards,
			[][]float64{{1, 0}, {0, 1}}, ""},
		{"too few contexts", feature, &FeatureLocal{Rows: [][]float64{{1, 0}}}, 0, nil,
			"the features: 1 rows; the session needs one a step, 2"},
		{"no features", feature, nil, 0, nil, "a feature party needs its features"},
		{"no rewards file", receiver, &rewardConfig{Rewards: filepath.Join(dir, "none.csv")}, 0, nil,
			"local.mpccb.reward_receiver.rewards"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			write([][]float64{{0.6, 0.8}, {0, 1}}, [][]float64{{1, 0}, {0, 1}})
			env, err := Family{}.SimulatedEnvironment(rangeConfig(c.self, p, c.local))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer env.Close()
			if !env.Immediate() {
				t.Error("the simulated environment is not Immediate")
			}
			write([][]float64{{1, 0}, {1, 0}}, [][]float64{{0, 0}, {0, 0}}) // after the build: not seen
			for s, w := range c.want {
				got, err := ask(env, c.kind, int64(s))
				if err != nil || !slices.Equal(got, w) {
					t.Errorf("step %d: %v, %v; want %v", s, got, err, w)
				}
			}
			if _, err := ask(env, c.kind, int64(len(c.want))); err == nil || !strings.Contains(err.Error(), "asked for more") {
				t.Errorf("a step beyond the rows: %v", err)
			}
			if _, err := ask(env, protocol.QueryPull, 0); err == nil {
				t.Error("answered a pull")
			}
		})
	}
	// Neither the puller nor the dealer asks anything.
	for _, role := range []string{RolePuller, RoleDealer} {
		if env, err := (Family{}).SimulatedEnvironment(rangeConfig(protocol.Party{Role: role}, p, nil)); env != nil || err != nil {
			t.Errorf("%s: environment %v, %v", role, env, err)
		}
	}
}

// TestDecodeLocalSource: with the simulated source a feature party needs
// its features file and p″ its rewards file; with another source (its
// environment answers the queries) those keys are neither needed nor
// allowed.
func TestDecodeLocalSource(t *testing.T) {
	cases := []struct {
		role, source string
		raw          map[string]any
		want         string // a phrase of the error; "" accepted
	}{
		{RoleFeature, "", map[string]any{"features": "party0.csv"}, ""},
		{RoleFeature, "simulated", map[string]any{}, "features: name the CSV file"},
		{RoleFeature, "replay", map[string]any{}, ""},
		{RoleFeature, "exec", map[string]any{"features": "party0.csv"}, "needs no local data; remove features"},
		{RoleReceiver, "", map[string]any{"rewards": "rewards.csv"}, ""},
		{RoleReceiver, "", map[string]any{}, "rewards: name the CSV file"},
		{RoleReceiver, "http", map[string]any{}, ""},
		{RoleReceiver, "replay", map[string]any{"rewards": "rewards.csv"}, "needs no local data; remove rewards"},
	}
	for _, c := range cases {
		t.Run(c.role+"/"+c.source, func(t *testing.T) {
			v, err := Family{}.DecodeLocal(c.role, &protocol.LocalTable{Key: protocol.LocalKey(Name, c.role), Raw: c.raw, Source: c.source})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if (c.source == "") != (v != nil) {
					t.Errorf("local data %#v for source %q", v, c.source)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one saying %q", err, c.want)
			}
		})
	}
}

// TestEnvironmentShape: a feature party answers its columns (when the
// parties divide the dimensions), p″ one reward per arm, both once a step.
func TestEnvironmentShape(t *testing.T) {
	p := DefaultParams()
	p.Dimensions, p.Arms, p.Steps = 20, 10, 500
	three := protocol.Assignment{Roles: map[string][]string{RoleFeature: {"a", "b", "f"}, RolePuller: {"c"}, RoleReceiver: {"d"}, RoleDealer: {"e"}}}
	cases := []struct {
		role  string
		a     protocol.Assignment
		cols  int
		steps int64
	}{
		{RoleFeature, rangeAssignment, 10, 500},
		{RoleFeature, three, 0, 500}, // 7, 7 and 6 columns: any
		{RoleReceiver, rangeAssignment, 10, 500},
		{RolePuller, rangeAssignment, 0, 0},
		{RoleDealer, rangeAssignment, 0, 0},
	}
	for _, c := range cases {
		if cols, steps := (Family{}).EnvironmentShape(c.role, p, c.a); cols != c.cols || steps != c.steps {
			t.Errorf("%s with %d feature parties: (%d, %d), want (%d, %d)", c.role, c.a.Count(RoleFeature), cols, steps, c.cols, c.steps)
		}
	}
}
