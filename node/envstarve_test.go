package node

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/environment"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/protocol/bai"
)

// TestStarvedEnvironmentIsReported: in a racing protocol (BAI central,
// where the coordinator stops every agent once the pooled samples decide)
// an agent whose environment — an http service of its organization —
// answers too slowly takes no part, and the session still completes. Its
// organization's record says so, per party: no query answered, the ones
// asked unanswered, and a warning, also in its log; an agent of a fast
// service reports its answers and no warning. Nothing of it reaches the
// coordinator's record.
func TestStarvedEnvironmentIsReported(t *testing.T) {
	stall := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers only once the session is over and the daemon gave up the request
		case <-r.Context().Done():
		case <-stall:
		}
	}))
	defer slow.Close()
	defer close(stall)
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q pullRequest
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, "not a pull", http.StatusBadRequest)
			return
		}
		rewards := make([]float64, len(q.Arms))
		for i, k := range q.Arms {
			if k == 0 || q.Step%2 == 0 && k == 1 {
				rewards[i] = 1
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": q.ID, "rewards": rewards})
	}))
	defer fast.Close()
	nodes := startNetwork(t, 3, func(i int, cfg *config.Config) {
		cfg.Policy["bai"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i == 0 {
			return
		}
		url := fast.URL
		if i == 2 {
			url = slow.URL
		}
		cfg.LocalData["bai"] = map[string]any{"agent": &bai.AgentLocal{Rate: 40000}}
		cfg.Environments = map[string]map[string]environment.Config{"bai": {"agent": {Source: environment.SourceHTTP,
			HTTP: environment.HTTPConfig{URL: url, RequestTimeout: time.Minute}}}}
	})
	spec := "protocol = \"bai\"\n[roles]\ncoordinator = \"node1\"\nagent = [\"node2\", \"node3\"]\n[params]\nalgorithm = \"central\"\narms = 3\ndelta = 0.1\n"
	got, _ := completedSession[bai.Result](t, nodes[0], spec, 60*time.Second)
	for _, c := range []struct {
		node    int
		party   string
		starved bool
	}{{1, "agent[0]", false}, {2, "agent[1]", true}} {
		tn := nodes[c.node]
		s := waitEnded(t, tn, got.ID, 30*time.Second)
		u, ok := s.Environments[c.party]
		switch {
		case !ok || len(s.Environments) != 1:
			t.Fatalf("%s's record: environments %+v, want %s's alone", tn.cfg.Node.Name, s.Environments, c.party)
		case u.Source != "http":
			t.Errorf("%s: source %q", c.party, u.Source)
		case c.starved && (u.Queries != 0 || u.Unanswered < 1 || !strings.Contains(u.Warning, "answered none of the")):
			t.Errorf("the slow agent's environment: %+v; want no answer, its queries unanswered and a warning", u)
		case !c.starved && (u.Queries == 0 || u.Warning != ""):
			t.Errorf("the fast agent's environment: %+v; want its answers and no warning", u)
		}
		warned := len(tn.logs.find("an environment starved its role", "party", c.party)) > 0
		if warned != c.starved {
			t.Errorf("%s logged a starved environment: %v, want %v", tn.cfg.Node.Name, warned, c.starved)
		}
	}
	rec, err := nodes[0].sessionRecord(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, _ := json.Marshal(rec)
	if strings.Contains(string(kept), "environments") || strings.Contains(string(kept), "starved") {
		t.Errorf("the coordinator's record holds the agents' environments: %s", kept)
	}
}
