package node

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/pfcb/pfcbpb"
	"google.golang.org/protobuf/proto"
)

// TestPFCBOnTheNetwork runs P-FCB across three agent daemons, each with its
// own costs and capacities in its config, records every protocol message that
// leaves any daemon — nothing but one share per agent and communication
// round, one (w̃, ỹ) per producer — and checks that each agent stored its
// own regret and procurement totals.
func TestPFCBOnTheNetwork(t *testing.T) {
	const n, m = 3, 5
	in, err := pfcb.NewInstance("uniform", n, m, 0.4, 7)
	if err != nil {
		t.Fatal(err)
	}
	nodes := startNetwork(t, n, func(i int, cfg *config.Config) {
		cfg.Policy["pfcb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		cfg.LocalData["pfcb"] = map[string]any{"agent": &pfcb.AgentLocal{
			Qualities: in.Qualities, Costs: in.Costs[i], Capacities: in.Capacities[i], Rate: 50000}}
	})
	var mu sync.Mutex
	var sent []protocol.Message
	for _, tn := range nodes {
		tn.rt.SetHooks(sessions.Hooks{TraceOut: func(_ string, m protocol.Message) {
			mu.Lock()
			sent = append(sent, m)
			mu.Unlock()
		}})
	}
	spec := "protocol = \"pfcb\"\n[roles]\nagent = [\"node1\", \"node2\", \"node3\"]\n[params]\nalgorithm = \"pfcb\"\nrounds = 5000\n"
	session, res := completedSession[pfcb.Result](t, nodes[0], spec, 60*time.Second)
	id := session.ID
	comms := len(res.CommunicationRounds) // 256 … 4096: 5 rounds
	if comms != 5 || res.EpsilonTotal <= 0 || len(res.Regrets) != n {
		t.Fatalf("result %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != n*comms {
		t.Errorf("%d messages left the daemons, want %d shares (%d agents × %d rounds)", len(sent), n*comms, n, comms)
	}
	for _, msg := range sent {
		var pm pfcbpb.Message
		if err := proto.Unmarshal(msg.Body, &pm); err != nil || pm.GetShare() == nil || !msg.Topic ||
			len(pm.GetShare().W) != m || len(pm.GetShare().Y) != m {
			t.Errorf("not a share of %d producers on the topic: %v", m, msg)
		}
	}
	for _, tn := range nodes {
		r, err := tn.store.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		var local pfcb.AgentOutcome
		for _, raw := range r.Local {
			if err := json.Unmarshal(raw, &local); err != nil {
				t.Fatal(err)
			}
		}
		if local.Rounds != 5000 || len(local.Procured) != m {
			t.Errorf("%s stored %+v, want its regret and procurement totals", tn.cfg.Node.Name, local)
		}
	}
}

// TestTopicSessionWithARolelessInitiator: an initiator that plays no party
// does not join the session topic, and the participants do not wait for it
// to (they aborted after propose_timeout with "node1 did not subscribe").
func TestTopicSessionWithARolelessInitiator(t *testing.T) {
	const n, m = 3, 5
	in, err := pfcb.NewInstance("uniform", 2, m, 0.4, 7)
	if err != nil {
		t.Fatal(err)
	}
	nodes := startNetwork(t, n, func(i int, cfg *config.Config) {
		cfg.Policy["pfcb"] = config.PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}}
		if i > 0 {
			cfg.LocalData["pfcb"] = map[string]any{"agent": &pfcb.AgentLocal{
				Qualities: in.Qualities, Costs: in.Costs[i-1], Capacities: in.Capacities[i-1], Rate: 50000}}
		}
	})
	spec := "protocol = \"pfcb\"\n[roles]\nagent = [\"node2\", \"node3\"]\n[params]\nalgorithm = \"pfcb\"\nrounds = 2000\n"
	id, err := nodes[0].StartSession([]byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		if got := waitEnded(t, tn, id, 30*time.Second); got.State != stateCompleted {
			t.Errorf("%s: session ended %s: %s", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}
