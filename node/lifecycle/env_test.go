package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// env is a session among len(names) organizations in a test: org 0
// initiates, org i plays participant[i], and the control messages wait in
// a queue until the test delivers, drops, duplicates or reorders them. An
// organization whose machine has ended (or that restarted) answers from its
// record, as the node does (AnswerEnded).
type env struct {
	names    []string
	machines []*Machine
	// records are the organizations' statuses as persisted.
	records []Status
	// restarted marks organizations whose daemon restarted: their machine
	// is gone and their record says so.
	restarted []bool
	queue     []Msg
	// out collects what happened, for transcripts.
	out strings.Builder
	// quiet leaves the messages sent and delivered out of out.
	quiet bool
}

// testConfig is the configuration of org self in a session of n
// organizations, with timeouts in ticks of 1 s: propose 5, peer 3,
// heartbeat 1, stall 20, resend 2, progress 1, cause grace 2.
func testConfig(n int, self Org) Config {
	names := make([]string, n)
	owners := map[protocol.Party]Org{}
	var participants []Org
	for i := range n {
		names[i] = fmt.Sprintf("node%d", i+1)
		owners[protocol.Party{Role: "participant", Index: i}] = Org(i)
		if i > 0 {
			participants = append(participants, Org(i))
		}
	}
	return Config{Self: self, Initiator: 0, Names: names, Participants: participants, Owners: owners,
		Combine: combineReports, Tick: time.Second, ProposeTimeout: 5 * time.Second, PeerTimeout: 3 * time.Second,
		HeartbeatInterval: time.Second, StallTimeout: 20 * time.Second, Resend: 2 * time.Second,
		ProgressInterval: time.Second, CauseGrace: 2 * time.Second}
}

// combineReports is the test sessions' Combine: the reports in party
// order; a report "bad" fails.
func combineReports(reports map[protocol.Party][]byte) ([]byte, error) {
	var parts []string
	for _, p := range sortedPartiesOf(reports) {
		if string(reports[p]) == "bad" {
			return nil, fmt.Errorf("%s's report does not combine", p)
		}
		parts = append(parts, p.String()+"="+string(reports[p]))
	}
	return []byte(strings.Join(parts, ",")), nil
}

func sortedPartiesOf(reports map[protocol.Party][]byte) []protocol.Party {
	owners := map[protocol.Party]Org{}
	for p := range reports {
		owners[p] = 0
	}
	return sortedParties(owners)
}

// newEnv starts a session of n organizations: the initiator proposes, and
// each participant is created (it accepted) when its proposal is
// delivered — unless it declines with the reason decline[i].
func newEnv(n int) (*env, error) {
	e := &env{machines: make([]*Machine, n), records: make([]Status, n), restarted: make([]bool, n)}
	m, err := New(testConfig(n, 0))
	if err != nil {
		return nil, err
	}
	e.names = m.cfg.Names
	e.machines[0] = m
	e.collect(0)
	return e, nil
}

// org returns the organization called name.
func (e *env) org(name string) (Org, error) {
	i := slices.Index(e.names, name)
	if i < 0 {
		return 0, fmt.Errorf("no organization %q", name)
	}
	return Org(i), nil
}

// collect carries out org o's Ready: its status is recorded and its
// messages queued.
func (e *env) collect(o Org) {
	m := e.machines[o]
	if m == nil {
		return
	}
	rd := m.Ready()
	if rd.Status != nil {
		e.records[o] = *rd.Status
		fmt.Fprintf(&e.out, "%s: %s", e.names[o], rd.Status.Phase)
		if rd.Status.Reason != "" {
			fmt.Fprintf(&e.out, " %q", rd.Status.Reason)
		}
		if rd.Status.Detail != "" {
			fmt.Fprintf(&e.out, " detail=%q", rd.Status.Detail)
		}
		if rd.Status.Result != nil {
			fmt.Fprintf(&e.out, " result=%q", rd.Status.Result)
		}
		e.out.WriteString("\n")
	}
	if rd.StartRoles {
		fmt.Fprintf(&e.out, "%s: start roles\n", e.names[o])
	}
	if rd.Progress != nil {
		fmt.Fprintf(&e.out, "%s: progress step=%d total=%d\n", e.names[o], rd.Progress.Step, rd.Progress.Total)
	}
	for _, msg := range rd.Messages {
		e.logf("  send %s\n", Describe(msg, e.names))
		e.queue = append(e.queue, msg)
	}
}

// logf writes a line about a message to out, unless quiet.
func (e *env) logf(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(&e.out, format, args...)
	}
}

// deliver hands msg to its recipient: to its machine, or — an organization
// without one — a proposal (which it accepts or declines as decline says)
// or a frame answered from its record.
func (e *env) deliver(msg Msg, decline string) {
	e.logf("deliver %s\n", Describe(msg, e.names))
	to := msg.To
	if m := e.machines[to]; m != nil && !m.Phase().Ended() {
		m.Step(msg)
		e.collect(to)
		return
	}
	if msg.Kind == Propose && e.machines[to] == nil && !e.restarted[to] {
		if decline != "" {
			e.send(Msg{Kind: Decline, From: to, To: msg.From, Reason: decline})
			return
		}
		m, err := New(testConfig(len(e.names), to))
		if err != nil {
			panic(err)
		}
		e.machines[to] = m
		e.collect(to)
		return
	}
	if e.machines[to] == nil && !e.restarted[to] {
		e.logf("  %s: no such session; dropped\n", e.names[to])
		return
	}
	if reply, ok := AnswerEnded(e.records[to], to == 0, msg); ok {
		e.send(reply)
	}
}

// send queues a message sent outside a machine (a decline, an answer from
// a record).
func (e *env) send(msg Msg) {
	e.logf("  send %s\n", Describe(msg, e.names))
	e.queue = append(e.queue, msg)
}

// restart is org o's daemon restarting: its machine is lost and its open
// session recorded as aborted, as node.recoverSessions does.
func (e *env) restart(o Org) {
	if m := e.machines[o]; m != nil && !m.Phase().Ended() {
		e.records[o] = Status{Phase: Aborted, Reason: e.names[o] + " restarted while the session was open"}
		fmt.Fprintf(&e.out, "%s: restarted; aborted %q\n", e.names[o], e.records[o].Reason)
	}
	e.machines[o] = nil
	e.restarted[o] = true
}

// ended reports whether every organization that joined has ended.
func (e *env) ended() bool {
	for o, m := range e.machines {
		if m != nil && !m.Phase().Ended() {
			return false
		}
		if m == nil && !e.restarted[o] && o == 0 {
			return false
		}
	}
	return true
}

// phases describes every organization's phase.
func (e *env) phases() string {
	var parts []string
	for o, m := range e.machines {
		switch {
		case e.restarted[o]:
			parts = append(parts, e.names[o]+"=restarted")
		case m == nil:
			parts = append(parts, e.names[o]+"=none")
		default:
			parts = append(parts, e.names[o]+"="+m.Phase().String())
		}
	}
	return strings.Join(parts, " ")
}

// stabilize delivers until nothing is queued.
func (e *env) stabilize(decline string) error {
	for i := 0; len(e.queue) > 0; i++ {
		if i == 10000 {
			return fmt.Errorf("still %d messages queued after 10000 deliveries", len(e.queue))
		}
		m := e.queue[0]
		e.queue = e.queue[1:]
		e.deliver(m, decline)
	}
	return nil
}
