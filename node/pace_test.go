package node

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// pacedRole is a Paced role that asks its environment once an activation
// and counts what its driver does; it fails if activated while it waits.
type pacedRole struct {
	protocol.Outbox
	rate         float64
	active       bool
	waiting      bool
	activations  int
	interactions int
}

func (r *pacedRole) Start() error                  { return nil }
func (r *pacedRole) Step(protocol.Message) error   { return nil }
func (r *pacedRole) Tick() error                   { return nil }
func (r *pacedRole) Active() bool                  { return r.active }
func (r *pacedRole) Rate() float64                 { return r.rate }
func (r *pacedRole) Answer(protocol.Outcome) error { r.waiting = false; r.interactions++; return nil }

func (r *pacedRole) Activate() error {
	if r.waiting {
		return errors.New("activated while its query was outstanding")
	}
	r.activations++
	r.waiting = true
	r.Ask(protocol.Query{ID: uint64(r.activations), Kind: protocol.QueryPull, Step: int64(r.activations - 1), Arms: []int{0}})
	return nil
}

// zeroEnvironment answers every pull with rewards of 0, at once.
type zeroEnvironment struct{}

func (zeroEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	return protocol.Outcome{ID: q.ID, Rewards: make([]float64, len(q.Arms))}, nil
}
func (zeroEnvironment) Immediate() bool { return true }
func (zeroEnvironment) Close() error    { return nil }

// TestPacedRoleActivatedAtItsRate: the daemon activates a Paced role
// Rate × TickInterval times a tick, carrying the fractions over, at most
// protocol.MaxActivationsPerTick times, and not once it is inactive; each
// activation's query is answered by an Immediate environment before the
// next activation.
func TestPacedRoleActivatedAtItsRate(t *testing.T) {
	perTick := protocol.TickInterval.Seconds()
	tests := []struct {
		name   string
		rate   float64
		active bool
		ticks  int
		want   []int // activations after each tick
	}{
		{"whole", 30 / perTick, true, 3, []int{30, 60, 90}},
		{"fractions carried over", 1.5 / perTick, true, 4, []int{1, 3, 4, 6}},
		{"slower than a tick", 0.25 / perTick, true, 5, []int{0, 0, 0, 1, 1}},
		{"bounded", 10 * protocol.MaxActivationsPerTick / perTick, true, 2, []int{protocol.MaxActivationsPerTick, 2 * protocol.MaxActivationsPerTick}},
		{"no rate", 0, true, 2, []int{0, 0}},
		{"inactive", 100, false, 2, []int{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &pacedRole{rate: tt.rate, active: tt.active}
			s := &session{n: &Node{}, cfg: &Config{}, mine: []protocol.Party{{Role: "agent"}}, roles: []protocol.Role{r},
				finished: []bool{false}, envs: []*envSlot{{env: zeroEnvironment{}, inline: true}},
				myProgress: map[protocol.Party]protocol.Progress{}, envCtx: context.Background()}
			var owed float64
			for tick, want := range tt.want {
				if err := s.paceRole(0, &owed); err != nil {
					t.Fatalf("tick %d: %v", tick, err)
				}
				if r.activations != want || r.interactions != want {
					t.Fatalf("after tick %d: %d activations and %d interactions, want %d", tick, r.activations, r.interactions, want)
				}
			}
		})
	}
	// A role that is not Paced is not activated by the driver.
	s := &session{n: &Node{}, cfg: &Config{}, mine: []protocol.Party{{Role: "x"}}, roles: []protocol.Role{&notPaced{}}, finished: []bool{false}}
	var owed float64
	if err := s.paceRole(0, &owed); err != nil || owed != 0 {
		t.Errorf("a role that is not Paced: err %v, owed %v", err, owed)
	}
}

// notPaced is an Activated role without a rate, activated by a simulator's
// schedule only.
type notPaced struct{ protocol.Outbox }

func (notPaced) Start() error                { return nil }
func (notPaced) Step(protocol.Message) error { return nil }
func (notPaced) Tick() error                 { return nil }
func (notPaced) Active() bool                { return true }
func (notPaced) Activate() error             { return errors.New("activated") }

// banditService is an http environment of BAI agents: Problem 1's
// Bernoulli arms, answering each pull, and recording the steps and arms
// each agent asked, in the order asked. bad, if set, answers instead.
type banditService struct {
	mu    sync.Mutex
	rand  *rand.Rand
	pulls map[string][]pullRequest // by the Bandit-Role header
	bad   func(pullRequest) (rewards []float64, ok bool)
}

type pullRequest struct {
	ID   uint64 `json:"id"`
	Kind string `json:"kind"`
	Step int64  `json:"step"`
	Arms []int  `json:"arms"`
}

func (b *banditService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var q pullRequest
	if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Kind != "pull" {
		http.Error(w, "not a pull", http.StatusBadRequest)
		return
	}
	b.mu.Lock()
	b.pulls[r.Header.Get("Bandit-Role")] = append(b.pulls[r.Header.Get("Bandit-Role")], q)
	rewards := make([]float64, len(q.Arms))
	for i, k := range q.Arms {
		if b.rand.Float64() < problem1[k] {
			rewards[i] = 1
		}
	}
	if b.bad != nil {
		if r, ok := b.bad(q); ok {
			rewards = r
		}
	}
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"id": q.ID, "rewards": rewards})
}

// TestBAIAgentsPacedWithAnHTTPEnvironment: BAI agents on daemons whose
// rewards come from an http service — an environment that is not
// Immediate, answered on a goroutine of its own — are activated at their
// rate by the daemon, one pull outstanding at a time, at steps 0, 1, 2, …
// of their local active set, and find the best arm. A service that answers
// a reward out of the session's range does not abort the session: the
// agents clamp it and count it in their own records, and nothing the
// coordinator and initiator keeps holds the reward or the count.
func TestBAIAgentsPacedWithAnHTTPEnvironment(t *testing.T) {
	svc := &banditService{rand: rand.New(rand.NewPCG(1, 2)), pulls: map[string][]pullRequest{}}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	nodes := startNetwork(t, 5, func(i int, cfg *Config) {
		cfg.Policy["bai"] = PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i > 0 {
			cfg.LocalData["bai"] = map[string]any{"agent": &bai.AgentLocal{Rate: 40000}}
			cfg.Environments = map[string]map[string]environment.Config{"bai": {"agent": {Source: environment.SourceHTTP,
				HTTP: environment.HTTPConfig{URL: srv.URL, RequestTimeout: 5 * time.Second}}}}
		}
	})
	spec := "protocol = \"bai\"\n[roles]\ncoordinator = \"node1\"\nagent = [\"node2\", \"node3\", \"node4\", \"node5\"]\n[params]\nalgorithm = \"corrupted_elimination\"\narms = 10\ndelta = 0.5\neta = 0.5\nxi = 0.001\n"
	_, res := completedSession[bai.Result](t, nodes[0], spec, 60*time.Second)
	if res.BestArm == nil || *res.BestArm != 0 {
		t.Fatalf("best arm %v (%s), want 0", res.BestArm, res.NoAnswer)
	}
	svc.mu.Lock()
	for role, pulls := range svc.pulls {
		prev := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		for i, q := range pulls {
			if q.Step != int64(i) || q.ID != uint64(i)+1 {
				t.Fatalf("%s: request %d asks step %d (id %d), want step %d: one pull at a time, in order", role, i, q.Step, q.ID, i)
			}
			if !slices.IsSorted(q.Arms) || len(q.Arms) > len(prev) || !isSubset(q.Arms, prev) {
				t.Fatalf("%s: step %d pulls arms %v after %v: want the local active set, shrinking, in increasing order", role, i, q.Arms, prev)
			}
			prev = q.Arms
		}
		if len(pulls) < 100 {
			t.Errorf("%s asked only %d pulls", role, len(pulls))
		}
	}
	if len(svc.pulls) != 4 {
		t.Errorf("%d agents asked the service, want 4", len(svc.pulls))
	}
	svc.bad = func(q pullRequest) ([]float64, bool) {
		if q.Step != 5 || len(q.Arms) < 4 {
			return nil, false
		}
		r := make([]float64, len(q.Arms))
		r[3] = 2.71828
		return r, true
	}
	svc.mu.Unlock()

	got, _ := completedSession[bai.Result](t, nodes[0], spec, 60*time.Second)
	var clamped int64
	for _, tn := range nodes[1:] {
		waitEnded(t, tn, got.ID, 30*time.Second)
		rec, err := tn.sessionRecord(got.ID)
		if err != nil {
			t.Fatal(err)
		}
		for party, raw := range rec.Local {
			out := testutil.DecodeJSON[bai.AgentOutcome](t, raw)
			if out.RewardsClamped > 1 {
				t.Errorf("%s's %s counts %d clamped rewards, want at most 1", tn.cfg.Node.Name, party, out.RewardsClamped)
			}
			clamped += out.RewardsClamped
		}
	}
	if clamped == 0 {
		t.Error("no agent counted the reward it clamped")
	}
	rec, err := nodes[0].sessionRecord(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, private := range []string{"2.718", "clamped"} {
		if strings.Contains(string(kept), private) {
			t.Errorf("the coordinator's record holds %q: %s", private, kept)
		}
	}
}

func isSubset(xs, of []int) bool {
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}
