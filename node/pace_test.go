package node

import (
	"encoding/json"
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
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

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
	t.Parallel()
	svc := &banditService{rand: rand.New(rand.NewPCG(1, 2)), pulls: map[string][]pullRequest{}}
	srv := httptest.NewServer(svc)
	defer srv.Close()
	nodes := startNetwork(t, 5, func(i int, cfg *config.Config) {
		cfg.Policy["bai"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
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
