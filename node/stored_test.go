package node

import (
	"errors"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestStoredResultsAfterStop: once a daemon is down, its completed session
// reads from the data directory (StoredResult, StoredSessions) as its API
// served it, without the lock the stopped daemon held.
func TestStoredResultsAfterStop(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	id, err := nodes[0].StartSession(pingSpec(2, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	if got := waitEnded(t, nodes[0], id, 15*time.Second); got.State != apitype.StateCompleted {
		t.Fatalf("session %s: %s", got.State, got.Reason)
	}
	live, err := nodes[0].sessionRecord(id)
	if err != nil {
		t.Fatal(err)
	}
	nodes[0].stop()
	res, err := StoredResult(nodes[0].cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Session.State != apitype.StateCompleted || string(res.Result) != string(live.Result) || len(res.Result) == 0 {
		t.Errorf("stored result %s %s, the API's %s", res.Session.State, res.Result, live.Result)
	}
	list, errs := StoredSessions(nodes[0].cfg)
	if len(errs) != 0 || len(list) != 1 || list[0].ID != id || list[0].Spec != "" {
		t.Errorf("stored sessions %+v, errors %v; want %s alone, without its spec", list, errs, id)
	}
	if _, err := StoredResult(nodes[0].cfg, "fedcba9876543210"); !errors.Is(err, ErrNoStoredSession) {
		t.Errorf("an unknown session: %v", err)
	}
}
