package lifecycle

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestRandomInterleavings runs sessions under random schedules — messages
// delivered in any order, duplicated, delayed, dropped; ticks at any
// organization; parties finishing at any moment; a participant declining
// — and then lets the network heal (every message delivered, every
// organization ticking). Whatever the schedule:
//   - every organization that joined ends, within a bounded number of
//     ticks after the network heals;
//   - no participant completes a session its initiator aborted, nor one
//     the initiator never completed;
//   - an aborted session always records a reason;
//   - without drops and without ticks (so without timeouts), a session
//     whose parties all finish completes everywhere;
//   - a declined session never completes, and the organizations that
//     accepted it all end aborted with the decline as reason.
func TestRandomInterleavings(t *testing.T) {
	tests := []struct {
		name               string
		dropP, dupP, tickP float64
		decline            bool
		// noTimeouts: no ticks at all, so the outcome is exact.
		noTimeouts bool
	}{
		{"reordered and duplicated", 0, 0.1, 0, false, true},
		{"reordered, duplicated and ticking", 0, 0.1, 0.2, false, false},
		{"lossy", 0.15, 0.1, 0.2, false, false},
		{"declined, reordered and duplicated", 0, 0.1, 0, true, true},
		{"declined, lossy", 0.15, 0.1, 0.2, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for seed := range uint64(500) {
				rng := rand.New(rand.NewPCG(seed, 7))
				n := 2 + rng.IntN(4)
				e, err := newEnv(n)
				if err != nil {
					t.Fatal(err)
				}
				e.quiet = true
				decliner := Org(-1)
				if tt.decline {
					decliner = Org(1 + rng.IntN(n-1))
				}
				finished := make([]bool, n)
				for step := 0; step < 400; step++ {
					r := rng.Float64()
					switch {
					case r < tt.tickP:
						o := Org(rng.IntN(n))
						if m := e.machines[o]; m != nil {
							m.Tick()
							e.collect(o)
						}
					case r < tt.tickP+0.1:
						o := Org(rng.IntN(n))
						if m := e.machines[o]; m != nil && m.Phase() == Running && !finished[o] {
							finished[o] = true
							m.PartyFinished(protocol.Party{Role: "participant", Index: int(o)}, []byte{byte(o)})
							e.collect(o)
						}
					case len(e.queue) > 0:
						i := rng.IntN(len(e.queue))
						msg := e.queue[i]
						r = rng.Float64()
						switch {
						case r < tt.dropP:
							e.queue = append(e.queue[:i], e.queue[i+1:]...)
						case r < tt.dropP+tt.dupP:
							e.queue = append(e.queue, msg)
						default:
							e.queue = append(e.queue[:i], e.queue[i+1:]...)
							e.deliver(msg, declineOf(msg, decliner))
						}
					}
				}
				// The network heals: everything is delivered, every party
				// finishes, time passes.
				for round := 0; round < 60 && !e.ended(); round++ {
					for o, m := range e.machines {
						if m != nil && m.Phase() == Running && !finished[o] {
							finished[o] = true
							m.PartyFinished(protocol.Party{Role: "participant", Index: o}, []byte{byte(o)})
							e.collect(Org(o))
						}
					}
					for len(e.queue) > 0 {
						msg := e.queue[0]
						e.queue = e.queue[1:]
						e.deliver(msg, declineOf(msg, decliner))
					}
					if tt.noTimeouts {
						continue // no ticks: nothing may time out
					}
					for o, m := range e.machines {
						if m != nil {
							m.Tick()
							e.collect(Org(o))
						}
					}
				}
				checkOutcome(t, seed, e, tt.decline, tt.noTimeouts)
			}
		})
	}
}

// declineOf is the reason decliner declines msg with, if msg is a proposal
// to it.
func declineOf(msg Msg, decliner Org) string {
	if msg.Kind == Propose && msg.To == decliner {
		return "not today"
	}
	return ""
}

func checkOutcome(t *testing.T, seed uint64, e *env, declined, noTimeouts bool) {
	t.Helper()
	init := e.records[0]
	if !e.ended() {
		t.Fatalf("seed %d: not every organization ended: %s", seed, e.phases())
	}
	for o, m := range e.machines {
		if m == nil {
			continue
		}
		rec := e.records[o]
		switch {
		case rec.Phase == Aborted && rec.Reason == "":
			t.Errorf("seed %d: %s aborted without a reason", seed, e.names[o])
		case rec.Phase == Completed && init.Phase != Completed:
			t.Errorf("seed %d: %s completed, the initiator %s (%q)", seed, e.names[o], init.Phase, init.Reason)
		case noTimeouts && !declined && rec.Phase != Completed:
			t.Errorf("seed %d: %s %s (%q) in a session without losses or timeouts", seed, e.names[o], rec.Phase, rec.Reason)
		case declined && rec.Phase == Completed:
			t.Errorf("seed %d: %s completed a declined session", seed, e.names[o])
		case declined && noTimeouts && !strings.Contains(rec.Reason, "declined: not today"):
			t.Errorf("seed %d: %s recorded %q for a declined session", seed, e.names[o], rec.Reason)
		}
	}
}

// TestConfigRefused: a machine is not built from a configuration that
// would make it misbehave.
func TestConfigRefused(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"self out of range", func(c *Config) { c.Self = 7 }, "not among the 3 names"},
		{"no tick", func(c *Config) { c.Tick = 0 }, "must be positive"},
		{"no peer timeout", func(c *Config) { c.PeerTimeout = 0 }, "must be positive"},
		{"no combine", func(c *Config) { c.Combine = nil }, "no Combine"},
		{"initiator as participant", func(c *Config) { c.Participants = append(c.Participants, 0) }, "participant 0"},
		{"owner out of range", func(c *Config) { c.Owners[protocol.Party{Role: "x"}] = 9 }, "x[0] is played by 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(3, 0)
			tt.change(&cfg)
			if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestTicksRoundUp: timeouts are whole ticks, rounded up, at least one.
func TestTicksRoundUp(t *testing.T) {
	c := Config{Tick: 100 * time.Millisecond}
	for d, want := range map[time.Duration]int{time.Millisecond: 1, 100 * time.Millisecond: 1, 101 * time.Millisecond: 2, 30 * time.Second: 300} {
		if got := c.ticks(d); got != want {
			t.Errorf("ticks(%v) = %d, want %d", d, got, want)
		}
	}
}

// TestAnswerEnded: what an ended session answers, from its record.
func TestAnswerEnded(t *testing.T) {
	aborted := Status{Phase: Aborted, Reason: "r"}
	completed := Status{Phase: Completed}
	tests := []struct {
		name      string
		st        Status
		initiated bool
		kind      Kind
		want      Kind // 0: no answer
	}{
		{"aborted initiator, an accept", aborted, true, Accept, Abort},
		{"aborted participant, a heartbeat", aborted, false, Heartbeat, Abort},
		{"completed initiator, a done", completed, true, Done, Complete},
		{"completed participant, a heartbeat", completed, false, Heartbeat, 0},
		{"aborted, an abort", aborted, true, Abort, 0},
		{"completed, a complete", completed, false, Complete, 0},
		{"aborted, a decline", aborted, true, Decline, 0},
		{"running (left open)", Status{Phase: Running}, true, Accept, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, ok := AnswerEnded(tt.st, tt.initiated, Msg{Kind: tt.kind, From: 2, To: 0})
			if (tt.want == 0) != !ok || (ok && (reply.Kind != tt.want || reply.From != 0 || reply.To != 2)) {
				t.Fatalf("AnswerEnded = %+v, %v; want %v", reply, ok, tt.want)
			}
			if ok && reply.Kind == Abort && reply.Reason != "r" {
				t.Fatalf("reason %q, want the record's", reply.Reason)
			}
		})
	}
}
