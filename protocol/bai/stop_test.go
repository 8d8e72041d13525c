package bai

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai/baipb"
	"github.com/bandit-node/bandit-node/protocol/sim"
	"google.golang.org/protobuf/proto"
)

// TestCoordinatorEndsWhenEveryAgentStopped drives the coordinator of a real
// (not simulated) session of three agents with votes and stop notices: once
// every agent has stopped with more than one arm in the global set, it
// finishes at once, undecided, saying why; not before, not for a decided
// session (which ends after its re-announcements), and a stop notice sent
// twice or in a session without votes is refused.
func TestCoordinatorEndsWhenEveryAgentStopped(t *testing.T) {
	dpmase := Params{Algorithm: AlgDPMASE, Delta: 0.25, Beta: 0.5, Epsilon: 0.5, Arms: 3} // M = 2
	tests := []struct {
		name    string
		p       Params
		msgs    []protocol.Message
		want    string // in the step error; empty: none
		halted  bool   // finished undecided, because every agent stopped
		decided bool
	}{
		{"every agent stopped, nothing eliminated", dpmase,
			[]protocol.Message{stopNotice(0), stopNotice(1), stopNotice(2)}, "", true, false},
		{"every agent stopped after votes too few to eliminate", dpmase,
			[]protocol.Message{vote(0, 1), vote(1, 1), stopNotice(0), vote(2, 2), stopNotice(1), stopNotice(2)}, "", true, false},
		{"one agent still interacting", dpmase,
			[]protocol.Message{stopNotice(0), stopNotice(2)}, "", false, false},
		{"decided first: the stop notices change nothing", dpmase,
			[]protocol.Message{vote(0, 1), vote(1, 1), vote(2, 1), vote(0, 2), vote(1, 2), vote(2, 2),
				stopNotice(0), stopNotice(1), stopNotice(2)}, "", false, true},
		{"a second stop notice", dpmase,
			[]protocol.Message{stopNotice(1), stopNotice(1)}, "agent[1] sent a second stop notice", false, false},
		{"a stop notice in central", Params{Algorithm: AlgCentral, Delta: 0.25, Arms: 3},
			[]protocol.Message{stopNotice(0)}, "agent[0] sent a stop notice in a central session", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assign := protocol.Assignment{Roles: map[string][]string{
				RoleCoordinator: {"c"}, RoleAgent: {"a", "b", "d"}}}
			c, err := newCoordinator(protocol.RoleConfig{Self: coordinatorParty, Assignment: assign, Clock: zeroClock{},
				Logger: slog.New(slog.DiscardHandler)}, tt.p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Start(); err != nil {
				t.Fatal(err)
			}
			var stepErr error
			for _, m := range tt.msgs {
				if stepErr = c.Step(m); stepErr != nil {
					break
				}
			}
			if tt.want != "" {
				if stepErr == nil || !strings.Contains(stepErr.Error(), tt.want) {
					t.Fatalf("err = %v, want one saying %q", stepErr, tt.want)
				}
				return
			}
			if stepErr != nil {
				t.Fatal(stepErr)
			}
			rd := c.Ready()
			if (rd.Result != nil) != tt.halted {
				t.Fatalf("finished = %v, want %v", rd.Result != nil, tt.halted)
			}
			if (c.final != nil) != tt.decided {
				t.Errorf("decided = %v, want %v", c.final != nil, tt.decided)
			}
			if !tt.halted {
				return
			}
			var rep baipb.CoordinatorReport
			if err := proto.Unmarshal(rd.Result.Report, &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Decided || rep.Halted != EveryAgentStopped {
				t.Errorf("report %+v, want undecided with %q", &rep, EveryAgentStopped)
			}
		})
	}
}

// TestAgentStopsAndKeepsItsBestArm: an agent whose local set shrank to one arm
// tells the coordinator in the voting algorithms (an empty message, its last),
// and its report to the initiator names its local best arm only in
// INDEPENDENT, whose answer is the majority of them; its own outcome always
// does.
func TestAgentStopsAndKeepsItsBestArm(t *testing.T) {
	for _, tt := range []struct {
		p          Params
		notice     bool
		reportBest bool
	}{
		{Params{Algorithm: AlgDPMASE, Delta: 0.25, Beta: 0.5, Epsilon: 0.5, RewardMax: 1}, true, false},
		{Params{Algorithm: AlgCorrupted, Delta: 0.25, Eta: 0.5, Xi: 0.05, RewardMax: 1}, true, false},
		{Params{Algorithm: AlgIndependent, Delta: 0.25, RewardMax: 1}, false, true},
	} {
		t.Run(tt.p.Algorithm, func(t *testing.T) {
			a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Rand: cryptoReader{}, Clock: zeroClock{},
				Logger: slog.New(slog.DiscardHandler)}, tt.p,
				&AgentLocal{Env: Environment{Reward: RewardBernoulli, Arms: []float64{0.1, 0.1, 0.9}}})
			if err != nil {
				t.Fatal(err)
			}
			a.active, a.nActive = []bool{false, false, true}, 1
			a.stop()
			rd := a.Ready()
			var notices int
			for _, m := range rd.Messages {
				var msg baipb.Message
				if err := proto.Unmarshal(m.Body, &msg); err != nil {
					t.Fatal(err)
				}
				if _, ok := msg.Kind.(*baipb.Message_Stopped); ok && m.To == coordinatorParty && !m.Topic {
					notices++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tt.notice]; notices != want || len(rd.Messages) != want {
				t.Errorf("%d messages, %d of them stop notices; want %d notice and nothing else", len(rd.Messages), notices, want)
			}
			if rd.Result == nil {
				t.Fatal("a stopped agent did not finish")
			}
			var rep baipb.AgentReport
			if err := proto.Unmarshal(rd.Result.Report, &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.Stopped || (rep.LocalBest == 2) != tt.reportBest {
				t.Errorf("report %+v: names the local best arm %v, want %v", &rep, rep.LocalBest == 2, tt.reportBest)
			}
			if out := rd.Result.Local.(AgentOutcome); out.LocalBest != 2 || !out.Stopped {
				t.Errorf("own outcome %+v, want local best 2", out)
			}
			a.stop()
			if rd := a.Ready(); len(rd.Messages) != 0 || rd.Result != nil {
				t.Error("stopping twice sent or reported again")
			}
		})
	}
}

func vote(agent int, arm uint32) protocol.Message {
	body, _ := proto.Marshal(&baipb.Message{Kind: &baipb.Message_Vote{Vote: &baipb.Vote{Arm: arm}}})
	return protocol.Message{From: protocol.Party{Role: RoleAgent, Index: agent}, To: coordinatorParty, Body: body}
}

func stopNotice(agent int) protocol.Message {
	body, _ := proto.Marshal(&baipb.Message{Kind: &baipb.Message_Stopped{Stopped: &baipb.Stopped{}}})
	return protocol.Message{From: protocol.Party{Role: RoleAgent, Index: agent}, To: coordinatorParty, Body: body}
}

// TestEveryAgentStoppedInSimulation: with many corrupted votes (ξ = 0.3) and
// M = 3 with 4 agents, some arm never gets 4 votes, so every agent stops with
// more than one arm in the global set. The coordinator ends the session on
// the last stop notice, before the schedule runs dry, and the result still
// states K and M from simulation.arms, not from the eliminations.
func TestEveryAgentStoppedInSimulation(t *testing.T) {
	for seed := range int64(3) {
		spec := problem1Spec(t, AlgCorrupted, 4, seed+1)
		spec.Params["delta"], spec.Params["eta"], spec.Params["xi"] = 0.5, 0.99, 0.3
		reg, err := protocol.NewRegistry(Family{})
		if err != nil {
			t.Fatal(err)
		}
		var notices int
		out, err := sim.Run(context.Background(), reg, spec, sim.Options{OnMessage: func(m protocol.Message) {
			var msg baipb.Message
			if proto.Unmarshal(m.Body, &msg) == nil && msg.GetStopped() != nil {
				notices++
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		res := out.Result.(*Result)
		if res.BestArm != nil || res.NoAnswer != EveryAgentStopped || notices != 4 {
			t.Errorf("seed %d: answer %v (%q) after %d stop notices, want none because every agent stopped, after 4",
				seed+1, res.BestArm, res.NoAnswer, notices)
		}
		if res.K != 10 || res.ThresholdM != 3 {
			t.Errorf("seed %d: K = %d, M = %d, want 10 and 3", seed+1, res.K, res.ThresholdM)
		}
	}
}

// FuzzStep feeds the coordinator and an agent arbitrary messages, as a peer
// could send them: each is refused or taken, never a panic.
func FuzzStep(f *testing.F) {
	for _, m := range []protocol.Message{vote(0, 1), vote(2, 9), stopNotice(1)} {
		f.Add(m.Body, m.From.Index, false)
	}
	ann, _ := proto.Marshal(&baipb.Message{Kind: &baipb.Message_Eliminated{Eliminated: &baipb.Eliminated{Arms: []uint32{2, 1}, Decided: true}}})
	f.Add(ann, 0, true)
	f.Add([]byte{0x22, 0x00}, 0, false) // an empty stop notice
	f.Fuzz(func(t *testing.T, body []byte, index int, topic bool) {
		for _, alg := range []Params{
			{Algorithm: AlgDPMASE, Delta: 0.25, Beta: 0.5, Epsilon: 0.5, Arms: 3, RewardMax: 1},
			{Algorithm: AlgCentral, Delta: 0.25, Arms: 3, RewardMax: 1},
		} {
			assign := protocol.Assignment{Roles: map[string][]string{RoleCoordinator: {"c"}, RoleAgent: {"a", "b", "d"}}}
			c, err := newCoordinator(protocol.RoleConfig{Self: coordinatorParty, Assignment: assign, Clock: zeroClock{},
				Logger: slog.New(slog.DiscardHandler)}, alg, nil)
			if err != nil {
				t.Fatal(err)
			}
			for range 4 { // repeated, so that a notice can count twice
				_ = c.Step(protocol.Message{From: protocol.Party{Role: RoleAgent, Index: index}, To: coordinatorParty, Topic: topic, Body: body})
				c.Ready()
			}
			a, err := newAgent(protocol.RoleConfig{Self: protocol.Party{Role: RoleAgent}, Rand: cryptoReader{}, Clock: zeroClock{},
				Logger: slog.New(slog.DiscardHandler)}, alg, &AgentLocal{Env: Environment{Reward: RewardBernoulli, Arms: []float64{0.7, 0.5, 0.1}}})
			if err != nil {
				t.Fatal(err)
			}
			_ = a.Step(protocol.Message{From: coordinatorParty, To: protocol.Party{Role: RoleAgent}, Topic: topic, Body: body})
			a.Ready()
		}
	})
}

// TestOneVotePerAgentAndArm: an agent votes against an arm once at most
// (it eliminates the arm from its local set once), and M counts agents. A
// flood of repeated votes from one allowed agent is refused, each with the
// reason, and counts once: it cannot eliminate an arm alone.
func TestOneVotePerAgentAndArm(t *testing.T) {
	p := Params{Algorithm: AlgDPMASE, Delta: 0.25, Beta: 0.5, Epsilon: 0.5, Arms: 3} // M = 2
	assign := protocol.Assignment{Roles: map[string][]string{RoleCoordinator: {"c"}, RoleAgent: {"a", "b", "d"}}}
	c, err := newCoordinator(protocol.RoleConfig{Self: coordinatorParty, Assignment: assign, Clock: zeroClock{},
		Logger: slog.New(slog.DiscardHandler)}, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Step(vote(1, 2)); err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if err := c.Step(vote(1, 2)); err == nil || !strings.Contains(err.Error(), "agent[1] voted against arm 2 a second time") {
			t.Fatalf("a repeated vote: err = %v", err)
		}
	}
	if c.votes[2] != 1 || c.out[2] || len(c.Ready().Messages) != 0 {
		t.Fatalf("arm 2: %d votes, eliminated %v", c.votes[2], c.out[2])
	}
	// The other agents' votes still count.
	for _, m := range []protocol.Message{vote(0, 2), vote(2, 2), vote(1, 1)} {
		if err := c.Step(m); err != nil {
			t.Fatal(err)
		}
	}
	if !c.out[2] || c.votes[1] != 1 {
		t.Fatalf("arm 2 eliminated %v after 3 agents' votes; arm 1 has %d votes", c.out[2], c.votes[1])
	}
}
