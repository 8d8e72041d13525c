package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// The phases, each a becomeX that enters it and its step and tick
// functions, in the order a session goes through them.

// becomeProposing is the initiator's first phase.
func (m *Machine) becomeProposing() {
	m.phase, m.step, m.tick, m.elapsed, m.sinceSent = Proposing, m.stepProposing, m.tickProposing, 0, 0
	m.pending = map[Org]bool{}
	for _, o := range m.cfg.Participants {
		m.pending[o] = true
		m.send(o, Msg{Kind: Propose})
	}
	m.setStatus(Status{Phase: Proposing})
	if len(m.pending) == 0 {
		m.becomeRunning()
	}
}

func (m *Machine) stepProposing(msg Msg) {
	switch msg.Kind {
	case Accept:
		if !m.pending[msg.From] {
			return
		}
		delete(m.pending, msg.From)
		if len(m.pending) == 0 {
			m.becomeRunning()
		}
	case Decline:
		m.becomeAborted(fmt.Sprintf("%s declined: %s", m.name(msg.From), msg.Reason), "", msg.From)
	case Abort:
		m.becomeAborted(msg.Reason, "", msg.From)
	}
}

func (m *Machine) tickProposing() {
	if m.elapsed >= m.proposeTicks {
		var names []string
		for o := range m.pending {
			names = append(names, m.name(o))
		}
		slices.Sort(names)
		m.becomeAborted(fmt.Sprintf("%s did not answer the proposal within %v", strings.Join(names, ", "), m.cfg.ProposeTimeout), "", -1)
		return
	}
	if m.sinceSent++; m.sinceSent >= m.resendTicks {
		// A frame handed to a stream can be lost when its connection
		// is replaced: whoever has not answered is asked again
		// (accepting is idempotent).
		m.sinceSent = 0
		for _, o := range m.cfg.Participants {
			if m.pending[o] {
				m.send(o, Msg{Kind: Propose})
			}
		}
	}
}

// becomeAccepted is a participant's first phase.
func (m *Machine) becomeAccepted() {
	m.phase, m.step, m.tick, m.elapsed, m.sinceSent = Accepted, m.stepAccepted, m.tickAccepted, 0, 0
	m.send(m.cfg.Initiator, Msg{Kind: Accept})
	m.setStatus(Status{Phase: Accepted})
}

func (m *Machine) stepAccepted(msg Msg) {
	if msg.From != m.cfg.Initiator {
		return
	}
	switch msg.Kind {
	case Propose:
		m.send(m.cfg.Initiator, Msg{Kind: Accept})
	case Start, Heartbeat:
		// The initiator sends heartbeats only once the session runs:
		// one arriving first means the Start was lost.
		m.becomeRunning()
	case Abort:
		m.becomeAborted(msg.Reason, "", msg.From)
	}
}

func (m *Machine) tickAccepted() {
	if m.elapsed >= m.startTicks {
		m.becomeAborted(fmt.Sprintf("the initiator %s did not start the session within %v of the proposal",
			m.name(m.cfg.Initiator), m.cfg.ProposeTimeout+m.cfg.PeerTimeout), "", -1)
		return
	}
	if m.sinceSent++; m.sinceSent >= m.resendTicks {
		// Until it starts the session, the initiator is asked again: an
		// Abort it sent while this organization was still examining
		// the proposal was lost, and its answer to this Accept — from
		// the session's record, if it has ended — is the way to learn
		// of it.
		m.sinceSent = 0
		m.send(m.cfg.Initiator, Msg{Kind: Accept})
	}
}

// becomeRunning starts the roles.
func (m *Machine) becomeRunning() {
	m.phase, m.step, m.tick, m.elapsed, m.sinceSent = Running, m.stepRunning, m.tickRunning, 0, 0
	m.silent = map[Org]int{}
	for _, o := range m.others() {
		m.silent[o] = 0
	}
	if m.initiated() {
		for _, o := range m.cfg.Participants {
			m.send(o, Msg{Kind: Start})
		}
	}
	m.setStatus(Status{Phase: Running})
	m.ready.StartRoles = true
	if m.initiated() {
		m.maybeComplete() // a session without parties to wait for
	}
}

func (m *Machine) stepRunning(msg Msg) {
	if m.initiated() {
		m.stepRunningInitiator(msg)
		return
	}
	if msg.From != m.cfg.Initiator {
		return
	}
	switch msg.Kind {
	case Abort:
		m.becomeAborted(msg.Reason, "", msg.From)
	case Complete:
		m.complete()
	}
}

func (m *Machine) stepRunningInitiator(msg Msg) {
	switch msg.Kind {
	case Accept:
		// The participant did not get its Start (a lost frame): again.
		m.send(msg.From, Msg{Kind: Start})
	case Abort:
		m.becomeAborted(msg.Reason, "", msg.From)
	case Progress:
		m.progress[msg.From] = msg.Progress
		m.sumProgress()
	case Done:
		m.takeReports(msg)
	}
}

// takeReports takes a participant's Done. Done is repeated until the
// session ends: the same report again is no news, a different one for a
// party already reported, or one for a party the sender does not play,
// aborts the session.
func (m *Machine) takeReports(msg Msg) {
	from := m.name(msg.From)
	for _, r := range msg.Reports {
		if o, ok := m.cfg.Owners[r.Party]; !ok || o != msg.From {
			m.becomeAborted(fmt.Sprintf("%s reported a result for %s, which it does not play", from, r.Party), "", -1)
			return
		}
		if old, dup := m.reports[r.Party]; dup && string(old) != string(r.Body) {
			m.becomeAborted(fmt.Sprintf("%s reported two different results for %s", from, r.Party), "", -1)
			return
		}
	}
	for _, r := range msg.Reports {
		m.reports[r.Party] = r.Body
	}
	m.maybeComplete()
}

// maybeComplete completes the session on the initiator once every party
// has reported.
func (m *Machine) maybeComplete() {
	if len(m.reports) < len(m.cfg.Owners) {
		return
	}
	result, err := m.cfg.Combine(m.reports)
	if err != nil {
		m.becomeAborted("combining the parties' reports failed on the initiator "+m.name(m.cfg.Self), err.Error(), -1)
		return
	}
	for _, o := range m.cfg.Participants {
		m.send(o, Msg{Kind: Complete})
	}
	m.becomeCompleted(result)
}

// complete ends a participant's session on the initiator's Complete.
func (m *Machine) complete() {
	for _, p := range m.mine {
		if _, ok := m.reports[p]; !ok {
			m.becomeAborted(fmt.Sprintf("the initiator %s declared the session complete while %s had not finished",
				m.name(m.cfg.Initiator), p), "", -1)
			return
		}
	}
	m.becomeCompleted(nil)
}

// sendDone sends a participant's reports to the initiator.
func (m *Machine) sendDone() {
	if m.ownProgress != m.sentProgress {
		// The final progress goes first: the initiator's sum is
		// complete when the session is.
		m.sentProgress, m.sinceReport = m.ownProgress, 0
		m.send(m.cfg.Initiator, Msg{Kind: Progress, Progress: m.ownProgress})
	}
	done := Msg{Kind: Done}
	for _, p := range m.mine {
		done.Reports = append(done.Reports, Report{Party: p, Body: m.reports[p]})
	}
	m.send(m.cfg.Initiator, done)
}

func (m *Machine) tickRunning() {
	for _, o := range m.others() {
		m.silent[o]++
		if m.silent[o] > m.peerTicks {
			silence := time.Duration(m.silent[o]) * m.cfg.Tick
			m.becomeAborted(fmt.Sprintf("%s stopped answering (silent for %v, more than session.peer_timeout = %v)",
				m.name(o), silence.Round(100*time.Millisecond), m.cfg.PeerTimeout), "", -1)
			return
		}
	}
	if m.initiated() && m.stallTicks > 0 {
		if m.stalled++; m.stalled > m.stallTicks {
			m.becomeAborted(fmt.Sprintf("no progress for %v (session.stall_timeout): the protocol is stuck", m.cfg.StallTimeout), "", -1)
			return
		}
	}
	if m.sinceSent++; m.sinceSent >= m.beatTicks {
		m.sinceSent = 0
		for _, o := range m.others() {
			m.send(o, Msg{Kind: Heartbeat})
		}
		if !m.initiated() && m.finished == len(m.mine) {
			m.sendDone() // until the session ends: a lost Done would stall it
		}
	}
	if !m.initiated() {
		if m.sinceReport++; m.sinceReport >= m.progressTicks && m.ownProgress != m.sentProgress {
			m.sinceReport = 0
			m.sentProgress = m.ownProgress
			m.send(m.cfg.Initiator, Msg{Kind: Progress, Progress: m.ownProgress})
		}
	}
}

// sumProgress sums the organizations' progress on the initiator.
func (m *Machine) sumProgress() {
	var sum protocol.Progress
	for _, p := range m.progress {
		sum.Step += p.Step
		sum.Total += p.Total
		sum.Activity += p.Activity
	}
	if sum != m.sum {
		m.sum, m.stalled = sum, 0
		m.ready.Progress = &sum
	}
}

// becomeAborting waits CauseGrace for an Abort that names why o could not
// be reached.
func (m *Machine) becomeAborting(reason, detail string, o Org) {
	m.phase, m.step, m.tick, m.elapsed = Aborting, m.stepAborting, m.tickAborting, 0
	m.failure, m.failureDetail, m.unreachable = reason, detail, o
	// Not persisted: Aborting is Running, or whatever came before, to
	// anyone who reads the record.
}

func (m *Machine) stepAborting(msg Msg) {
	switch {
	case msg.Kind == Abort && (m.initiated() || msg.From == m.cfg.Initiator):
		m.becomeAborted(msg.Reason, "", msg.From)
	case msg.Kind == Complete && msg.From == m.cfg.Initiator && !m.initiated() && m.finished == len(m.mine):
		m.complete() // the session ended well after all: the failed send did not matter
	}
}

func (m *Machine) tickAborting() {
	if m.elapsed >= m.graceTicks {
		m.becomeAborted(m.failure, m.failureDetail, m.unreachable)
	}
}

// becomeAborted ends the session with reason, telling the other side
// except source (the organization the reason came from or that cannot be
// reached; -1 for none). detail is recorded here only.
func (m *Machine) becomeAborted(reason, detail string, source Org) {
	m.phase, m.step, m.tick = Aborted, nil, nil
	m.setStatus(Status{Phase: Aborted, Reason: reason, Detail: detail})
	for _, o := range m.others() {
		if o != source {
			m.send(o, Msg{Kind: Abort, Reason: reason})
		}
	}
}

// becomeCompleted ends the session with result (the initiator's).
func (m *Machine) becomeCompleted(result []byte) {
	m.phase, m.step, m.tick = Completed, nil, nil
	m.setStatus(Status{Phase: Completed, Result: result})
}

// sortedParties returns the parties of owners in a fixed order.
func sortedParties(owners map[protocol.Party]Org) []protocol.Party {
	out := make([]protocol.Party, 0, len(owners))
	for p := range owners {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b protocol.Party) int {
		if c := strings.Compare(a.Role, b.Role); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
	return out
}
