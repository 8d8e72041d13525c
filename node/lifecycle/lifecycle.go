// Package lifecycle is the lifecycle of one session at one organization —
// propose, accept or decline, start, heartbeats, progress, complete or
// abort — as a deterministic state machine in the style of etcd's raft: no
// goroutine, clock, lock or I/O. Its driver (the node) steps it with the
// control messages that arrive (Step), with what happens locally (a party
// finished, a send failed, the operator cancelled, the daemon was paused)
// and with the passing of time as ticks (Tick), and carries out what Ready
// returns: the status to persist first, then the roles to start and the
// messages to send.
//
// The initiator proposes to every participant and starts the session when
// all have accepted; a participant accepts (its node decided that, before
// the machine exists) and runs when the initiator starts it. Every wait is
// bounded in ticks, and every message that a lost frame would leave
// unanswered is repeated until it is answered: proposals until accepted,
// an Accept until the session starts, a Done until the session ends. So an
// Abort that crossed a participant's Accept (the participant was still
// examining the proposal when the initiator aborted) is answered by the
// next Accept — by the initiator's record of the ended session — and the
// participant learns the end within one resend, whatever the timing.
//
// A failure is reported with its cause, by the organization that saw it:
//   - a participant that declines: "node3 declined: <its reason>";
//   - silence while connected: "node3 stopped answering (silent for 3s,
//     more than session.peer_timeout = 3s)" — neither a control message
//     nor a protocol message (Heard) from it for that long;
//   - a peer that cannot be reached (a send failed, or its connection
//     closed and a redial failed): the session waits CauseGrace for an
//     Abort from the other side naming the real cause (a peer shutting
//     down says so before it closes its connections), then aborts with
//     what the driver saw ("connection to node5 closed; redial refused");
//   - a pause of this daemon itself (a SIGSTOP, a suspended VM, a clock
//     that jumped), which the driver measures and reports with Paused: a
//     pause longer than the peer timeout ends the session with "this
//     daemon was paused for 43s", never with a peer's silence.
//
// Once the session has completed or aborted, the machine ignores every
// input: the node answers late frames from the session's record.
package lifecycle

import (
	"fmt"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// Phase is where a session is in its lifecycle.
type Phase uint8

// The phases of a session.
const (
	// Proposing: the initiator has proposed and waits until every
	// participant has accepted.
	Proposing Phase = iota + 1
	// Accepted: a participant has accepted and waits for the start.
	Accepted
	// Running: the roles run.
	Running
	// Aborting: a peer could not be reached; the session waits a moment
	// for an Abort that names the real cause before it aborts.
	Aborting
	// Completed and Aborted are final.
	Completed
	Aborted
)

var phaseNames = [...]string{Proposing: "proposing", Accepted: "accepted", Running: "running",
	Aborting: "aborting", Completed: "completed", Aborted: "aborted"}

// String is the phase's name in logs and transcripts.
func (p Phase) String() string {
	if int(p) < len(phaseNames) && phaseNames[p] != "" {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", p)
}

// Ended reports whether p is final.
func (p Phase) Ended() bool { return p == Completed || p == Aborted }

// Config is what a machine knows of its session. Durations are converted
// to ticks of length Tick; they appear in reasons as configured.
type Config struct {
	// Self is this organization; Initiator the session's initiator.
	Self, Initiator Org
	// Names are the organizations' names (for reasons), indexed by Org.
	// Every organization of the session is in it; so, at least, are Self
	// and Initiator.
	Names []string
	// Participants are the organizations other than the initiator that
	// play a party.
	Participants []Org
	// Owners says who plays every party of the session.
	Owners map[protocol.Party]Org
	// Combine turns the parties' reports into the session's result, on
	// the initiator. It must be deterministic; an error aborts the
	// session with the error as its reason.
	Combine func(reports map[protocol.Party][]byte) ([]byte, error)

	// Tick is the length of a tick.
	Tick time.Duration
	// ProposeTimeout bounds the wait for every Accept (initiator); a
	// participant waits ProposeTimeout + PeerTimeout for the Start.
	ProposeTimeout time.Duration
	// PeerTimeout is how long a running session tolerates the silence of
	// an organization it must hear from: for the initiator every
	// participant, for a participant the initiator.
	PeerTimeout time.Duration
	// HeartbeatInterval is how often a running session tells the other
	// side it is alive.
	HeartbeatInterval time.Duration
	// StallTimeout is how long the initiator tolerates a session whose
	// summed progress does not change; 0: forever.
	StallTimeout time.Duration
	// Resend is how often an unanswered Propose, Accept or Done is sent
	// again.
	Resend time.Duration
	// ProgressInterval is how often, at most, a participant reports its
	// progress.
	ProgressInterval time.Duration
	// CauseGrace is how long an unreachable peer's session waits for an
	// Abort naming the real cause.
	CauseGrace time.Duration
}

// validate checks c.
func (c *Config) validate() error {
	in := func(o Org) bool { return o >= 0 && int(o) < len(c.Names) }
	switch {
	case !in(c.Self) || !in(c.Initiator):
		return fmt.Errorf("lifecycle: self %d or initiator %d is not among the %d names", c.Self, c.Initiator, len(c.Names))
	case c.Tick <= 0 || c.ProposeTimeout <= 0 || c.PeerTimeout <= 0 || c.HeartbeatInterval <= 0 ||
		c.Resend <= 0 || c.ProgressInterval <= 0 || c.CauseGrace < 0 || c.StallTimeout < 0:
		return fmt.Errorf("lifecycle: a tick and every timeout must be positive")
	case c.Combine == nil:
		return fmt.Errorf("lifecycle: no Combine")
	}
	for _, p := range c.Participants {
		if !in(p) || p == c.Initiator {
			return fmt.Errorf("lifecycle: participant %d is not a valid organization", p)
		}
	}
	for party, o := range c.Owners {
		if !in(o) {
			return fmt.Errorf("lifecycle: %s is played by %d, not a valid organization", party, o)
		}
	}
	return nil
}

// ticks converts d to a whole number of ticks, at least 1.
func (c *Config) ticks(d time.Duration) int {
	return max(1, int((d+c.Tick-1)/c.Tick))
}

// Status is what a session's record says of its lifecycle.
type Status struct {
	Phase Phase
	// Reason is an aborted session's, as every organization of the
	// session records it.
	Reason string
	// Detail is what this organization alone knows of an abort it caused
	// itself (Fail, Unreachable): the local error behind Reason. It is
	// never sent.
	Detail string
	// Result is a completed session's, on the initiator.
	Result []byte
}

// Ready is what the driver must do after a call into the machine, in this
// order: record Progress, persist Status, start the roles, send Messages
// (each organization's in order). Progress goes first so that the record
// of a session that has just ended holds its final progress.
type Ready struct {
	// Status, if non-nil, is the session's new status.
	Status *Status
	// StartRoles says: build and start this organization's roles now.
	// It is set once, when the session starts running.
	StartRoles bool
	// Messages are the control messages to send.
	Messages []Msg
	// Progress, if non-nil, is the session's progress as this
	// organization now sees it: on the initiator the sum over every
	// organization's, on a participant its own.
	Progress *protocol.Progress
}

// Machine is the lifecycle of one session at one organization. It is not
// safe for concurrent use: one driver loop owns it.
type Machine struct {
	cfg   Config
	phase Phase
	// step and tick are the current phase's (becomeX sets them).
	step func(Msg)
	tick func()

	// Timeouts in ticks.
	proposeTicks, startTicks, peerTicks, beatTicks, stallTicks, resendTicks, progressTicks, graceTicks int

	elapsed   int          // ticks in the current phase
	sinceSent int          // ticks since the last resend or heartbeat
	pending   map[Org]bool // initiator, proposing: who has not accepted
	silent    map[Org]int  // running: ticks since each organization to hear from was last heard
	// reports are the parties' reports (initiator: everyone's, as
	// received; participant: its own, until Done is sent).
	reports map[protocol.Party][]byte
	// mine are the parties Self plays, in order, and how many have
	// finished.
	mine     []protocol.Party
	finished int

	progress     map[Org]protocol.Progress // initiator: by organization
	sum          protocol.Progress         // initiator: the summed progress
	stalled      int                       // initiator: ticks since sum changed
	sinceReport  int                       // participant: ticks since progress was last sent
	ownProgress  protocol.Progress         // participant
	sentProgress protocol.Progress         // participant: as last sent

	// failure and failureDetail are the abort an Aborting session records
	// if no cause comes within CauseGrace.
	failure, failureDetail string
	// unreachable is the organization an Aborting session could not
	// reach: it is not told.
	unreachable Org

	ready Ready
}

// New returns the machine of a session that has just been proposed (on the
// initiator) or accepted (on a participant); Ready then holds the
// proposals or the Accept.
func New(cfg Config) (*Machine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Machine{cfg: cfg, reports: map[protocol.Party][]byte{}, progress: map[Org]protocol.Progress{},
		unreachable: -1}
	m.proposeTicks = cfg.ticks(cfg.ProposeTimeout)
	m.startTicks = cfg.ticks(cfg.ProposeTimeout + cfg.PeerTimeout)
	m.peerTicks = cfg.ticks(cfg.PeerTimeout)
	m.beatTicks = cfg.ticks(cfg.HeartbeatInterval)
	m.resendTicks = cfg.ticks(cfg.Resend)
	m.progressTicks = cfg.ticks(cfg.ProgressInterval)
	m.graceTicks = max(0, int((cfg.CauseGrace+cfg.Tick-1)/cfg.Tick))
	if cfg.StallTimeout > 0 {
		m.stallTicks = cfg.ticks(cfg.StallTimeout)
	}
	for _, p := range sortedParties(cfg.Owners) {
		if cfg.Owners[p] == cfg.Self {
			m.mine = append(m.mine, p)
		}
	}
	if m.initiated() {
		m.becomeProposing()
	} else {
		m.becomeAccepted()
	}
	return m, nil
}

// Phase returns the session's phase.
func (m *Machine) Phase() Phase { return m.phase }

// initiated reports whether Self is the initiator.
func (m *Machine) initiated() bool { return m.cfg.Self == m.cfg.Initiator }

// name is o's name.
func (m *Machine) name(o Org) string { return orgName(o, m.cfg.Names) }

// Ready returns what the driver must now do, and forgets it.
func (m *Machine) Ready() Ready {
	rd := m.ready
	m.ready = Ready{}
	return rd
}

// send queues a message to o.
func (m *Machine) send(o Org, msg Msg) {
	msg.From, msg.To = m.cfg.Self, o
	m.ready.Messages = append(m.ready.Messages, msg)
}

// others are the organizations this one talks to: every participant from
// the initiator, the initiator from a participant.
func (m *Machine) others() []Org {
	if m.initiated() {
		return m.cfg.Participants
	}
	return []Org{m.cfg.Initiator}
}

// setStatus records a change of phase for the driver to persist.
func (m *Machine) setStatus(st Status) {
	m.ready.Status = &st
}

// Step takes a control message from another organization. The driver has
// checked that it comes from an organization of the session.
func (m *Machine) Step(msg Msg) {
	if m.phase.Ended() {
		return
	}
	if _, ok := m.silent[msg.From]; ok {
		m.silent[msg.From] = 0
	}
	m.step(msg)
}

// Heard reports that a message of the session's protocol came from
// organization o since the last tick. Any message proves o alive, not only
// control messages: on a slow link a heartbeat can wait behind megabytes
// of o's protocol data (the contextual bandit's dealer sends a batch's
// corrections to party 0 on the same connection), and the data arriving
// is the better evidence.
func (m *Machine) Heard(o Org) {
	if m.phase.Ended() {
		return
	}
	if _, ok := m.silent[o]; ok {
		m.silent[o] = 0
	}
}

// Tick advances the session's time by one tick.
func (m *Machine) Tick() {
	if m.phase.Ended() {
		return
	}
	m.elapsed++
	m.tick()
}

// Fail aborts the session for a local reason (the operator cancelled it,
// the daemon shuts down, a role failed), telling the other side. reason is
// what the other organizations learn; detail, what only this one records
// (the local error behind it; "" for none). The machine does not judge
// what may cross: its driver decides (node/sessions/disclosure.go).
func (m *Machine) Fail(reason, detail string) {
	if m.phase.Ended() {
		return
	}
	m.becomeAborted(reason, detail, -1)
}

// Unreachable reports that organization o cannot be reached (a send to it
// failed, or its connection closed and could not be redialed), and how:
// reason for the other organizations, detail for this one's record. The
// session aborts with that reason unless an Abort naming another cause
// arrives within CauseGrace.
func (m *Machine) Unreachable(o Org, reason, detail string) {
	switch m.phase {
	case Completed, Aborted, Aborting:
		return
	}
	if m.graceTicks == 0 {
		m.becomeAborted(reason, detail, o)
		return
	}
	m.becomeAborting(reason, detail, o)
}

// Paused reports that this daemon did not run for d (its process was
// stopped, its machine suspended, or its clock jumped): every silence it
// measured meanwhile was its own. A pause longer than the peer timeout has
// made the other side give up on this organization; the session aborts
// saying so. A shorter one only forgives the silences.
func (m *Machine) Paused(d time.Duration) {
	if m.phase.Ended() {
		return
	}
	if d >= m.cfg.PeerTimeout && (m.phase == Running || m.phase == Aborting) {
		m.becomeAborted(fmt.Sprintf("%s was paused for %v (its process stopped, its machine suspended or its clock jumped), "+
			"more than session.peer_timeout = %v", m.name(m.cfg.Self), d.Round(time.Second), m.cfg.PeerTimeout), "", -1)
		return
	}
	for o := range m.silent {
		m.silent[o] = 0
	}
}

// PartyFinished reports that local party p finished with report.
func (m *Machine) PartyFinished(p protocol.Party, report []byte) {
	if m.phase != Running && m.phase != Aborting {
		return
	}
	if _, dup := m.reports[p]; dup || !slices.Contains(m.mine, p) {
		return
	}
	m.reports[p] = report
	m.finished++
	if m.initiated() {
		m.maybeComplete()
		return
	}
	if m.finished == len(m.mine) {
		m.sendDone()
	}
}

// SetProgress reports this organization's summed progress.
func (m *Machine) SetProgress(p protocol.Progress) {
	if m.phase.Ended() {
		return
	}
	if m.initiated() {
		m.progress[m.cfg.Self] = p
		m.sumProgress()
		return
	}
	if p != m.ownProgress {
		m.ownProgress = p
		m.ready.Progress = &p
	}
}
