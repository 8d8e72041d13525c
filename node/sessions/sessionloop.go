package sessions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/lifecycle"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// pauseNotice is how long, beyond a tick, the session's loop may go
// unscheduled while idle — it wakes every tick — before it tells the
// lifecycle that this daemon was paused: whatever silence it measured
// meanwhile was its own, and a pause beyond the peer timeout ends the
// session saying so.
const pauseNotice = time.Second

// topicPoll is how often a session that starts checks whether every
// organization has subscribed to its topic.
const topicPoll = 10 * time.Millisecond

// main is the session's goroutine, its loop: it owns the lifecycle and
// drives it until the session ends, and records how it ended.
func (s *session) main() {
	defer func() {
		// Unblock the handlers first: closing the topic waits for its handler,
		// which may be waiting to deliver to this session.
		s.n.forget(s.id)
		s.closeBuffer()
		close(s.done)
		if s.topic != nil {
			s.topic.Close()
		}
		s.closeSenders()
		s.writes.saving.Wait()
		s.n.sessionEnded()
		s.n.wg.Done()
	}()
	defer func() {
		// A panic in the node's own session code (a role's is recovered
		// where it is called) ends this session only. The machine is not
		// trusted after it: the session is recorded as aborted and the
		// others are told directly.
		if v := recover(); v != nil {
			err := s.internalError(v)
			s.stopRoles()
			s.recordEnd(lifecycle.Status{Phase: lifecycle.Aborted, Reason: err.reason, Detail: err.detail})
			for _, p := range s.remotes {
				if s.initiated || p == s.initiator {
					s.sendControl(lifecycle.Msg{Kind: lifecycle.Abort, From: s.orgIndex[s.self], To: s.orgIndex[p], Reason: err.reason})
				}
			}
		}
	}()
	s.loop()
}

// loop drives the session until its lifecycle has ended.
func (s *session) loop() {
	s.apply(s.life.lc.Ready())
	tickLen := lifecycleTick(s.cfg.Session)
	tick := time.NewTicker(tickLen)
	defer tick.Stop()
	var (
		inbox    <-chan protocol.Message // once the roles run
		roleTick <-chan time.Time        // once the roles run, if the family ticks
		topicC   <-chan time.Time        // while the session waits for its topic
		topicEnd time.Time
		// progressDue says the roles' progress is to be taken: at
		// most once a tick, so that the loop takes run seldom while
		// messages are stepped in place.
		progressDue bool
	)
	idle := time.Now()
	lastTick := idle
	for !s.life.lc.Phase().Ended() {
		var (
			m      protocol.Message
			ev     ctrlEvent
			isMsg  bool
			isCtrl bool
			ticks  int // lifecycle ticks due
		)
		// A ticker drops the ticks its reader was too busy for: the ones
		// missed are made up, so that a timeout is the time it says on a
		// loaded machine too — up to pauseNotice, beyond which checkPause
		// speaks of a pause instead.
		takeTick := func(now time.Time) {
			ticks = int(min(max(now.Sub(lastTick)/tickLen, 1), 1+pauseNotice/tickLen))
			lastTick = now
		}
		// A control event waiting is taken before any role message: an
		// abort requested while the roles were busy (a flood's overflow,
		// a lost peer) ends the session before its roles step again, and
		// so before this node tells the others a party finished. Ticks
		// stay in the first choice, so that a peer's stream of control
		// messages cannot hold its session's timeouts back.
		select {
		case ev = <-s.ctrl:
			s.took(ev)
			isCtrl = true
		case now := <-tick.C:
			takeTick(now)
		default:
			select {
			case m = <-inbox:
				isMsg = true
			case ev = <-s.ctrl:
				s.took(ev)
				isCtrl = true
			case <-s.kick:
			case now := <-tick.C:
				takeTick(now)
			case <-roleTick:
				s.tickRoles()
			case <-topicC:
			}
		}
		if s.checkPause(idle, tickLen) {
			// The pause is not made up for in ticks: Paused judged it.
			ticks, lastTick = min(ticks, 1), time.Now()
		}
		if ticks > 0 {
			for o := range s.heard {
				if s.heard[o].Swap(false) {
					s.life.lc.Heard(lifecycle.Org(o))
				}
			}
		}
		for range ticks {
			s.life.lc.Tick()
		}
		if ticks > 0 {
			s.saveDue()
			progressDue = true
		}
		switch {
		case isMsg:
			s.stepQueued(m)
		case isCtrl:
			s.control(ev)
		}
		// What the event changed is stored and sent before the roles
		// start: the record says "running", and the Starts are on their
		// way, before the first role message (a participant queues role
		// messages that overtake its Start until its roles run).
		s.apply(s.life.lc.Ready())
		if s.life.lc.Phase() == lifecycle.Running && !s.life.started && topicC == nil {
			// The machine asked for the roles (Ready.StartRoles); they
			// start once everybody listens on the session topic.
			topicEnd = time.Now().Add(s.cfg.Session.ProposeTimeout.Duration)
			topicC = time.Tick(topicPoll)
		}
		if topicC != nil && !s.life.started && s.life.lc.Phase() == lifecycle.Running {
			if missing := s.missingFromTopic(); len(missing) == 0 {
				topicC = nil
				s.startRoles()
				inbox = s.inbox
				if s.caps.Ticks {
					// A family whose roles ignore Tick is not ticked: its
					// sessions wake the node only for messages.
					t := time.NewTicker(protocol.TickInterval)
					defer t.Stop()
					roleTick = t.C
				}
			} else if time.Now().After(topicEnd) {
				topicC = nil
				s.life.lc.Fail(fmt.Sprintf("%s did not subscribe to the session topic within %v", strings.Join(missing, ", "),
					s.cfg.Session.ProposeTimeout.Duration), "")
			}
		}
		if s.life.started {
			s.collectRoles(progressDue)
			progressDue = false
		}
		s.apply(s.life.lc.Ready())
		idle = time.Now()
	}
	s.stopRoles()
}

// stepQueued steps a message taken from the inbox, then delivers what this
// node's parties sent each other. run is released even after a panic in
// the node's code, which main's recovery then handles.
func (s *session) stepQueued(m protocol.Message) {
	s.run.Lock()
	defer s.run.Unlock()
	defer func() {
		s.queued.Add(-1)
		from, _ := s.orgOf(m.From)
		s.release(from, len(m.Body))
	}()
	if s.run.roleErr == nil {
		s.run.roleErr = s.step(m)
	}
	if s.run.roleErr == nil {
		s.run.roleErr = s.drainLocal()
	}
}

// checkPause tells the lifecycle when the loop, idle since idle and woken
// every tick at least, was not scheduled for a tick and pauseNotice or
// more: the daemon's process was stopped, its machine suspended (the
// monotonic clock stands still then, the wall clock does not) or its clock
// jumped.
// It reports whether it did.
func (s *session) checkPause(idle time.Time, tick time.Duration) bool {
	now := time.Now()
	gap := max(now.Sub(idle), now.Round(0).Sub(idle.Round(0)))
	if gap < tick+pauseNotice {
		return false
	}
	s.n.log.Warn("this daemon was paused; the session's peers may have given up on it", "session", s.id, "paused", gap.Round(time.Millisecond))
	s.life.lc.Paused(gap)
	return true
}

// control hands a control event to the lifecycle.
func (s *session) control(ev ctrlEvent) {
	switch {
	case ev.abort != "":
		s.life.lc.Fail(ev.abort, ev.detail)
	case ev.lost != "":
		if o, ok := s.orgIndex[ev.lost]; ok {
			s.life.lc.Unreachable(o, ev.reason, ev.detail)
		}
	case ev.msg != nil:
		if msg, ok := s.fromControl(ev.from, ev.msg); ok {
			s.life.lc.Step(msg)
		}
	}
}

// apply carries out what the lifecycle asks for, in order: record the
// progress (first, so that a session's final record and what Wait returns
// at its end hold its final progress: TestSessionLifecycle saw 80/120
// when the progress came after the status), persist the status, start
// the roles (the loop does, once the topic is ready), send the control
// messages.
func (s *session) apply(rd lifecycle.Ready) {
	if rd.Progress != nil {
		s.setProgress(*rd.Progress)
	}
	if rd.Status != nil {
		s.recordStatus(*rd.Status)
	}
	for _, m := range rd.Messages {
		s.sendControl(m)
	}
}

// recordStatus stores a change of the session's phase.
func (s *session) recordStatus(st lifecycle.Status) {
	switch st.Phase {
	case lifecycle.Proposing, lifecycle.Accepted:
		// The record says "proposed" since the session was registered.
	case lifecycle.Running:
		now := time.Now().UTC()
		s.update(true, func(r *store.Record) {
			r.Session.State = stateRunning
			r.Session.Started = &now
		})
	case lifecycle.Completed, lifecycle.Aborted:
		s.stopRoles()
		s.recordEnd(st)
	}
}

// recordEnd records how the session ended.
func (s *session) recordEnd(st lifecycle.Status) {
	now := time.Now().UTC()
	state := stateCompleted
	if st.Phase == lifecycle.Aborted {
		state = stateAborted
		s.n.log.Warn("session aborted", "session", s.id, "protocol", s.family, "reason", st.Reason, "detail", st.Detail)
	} else {
		s.n.log.Info("session completed", "session", s.id, "protocol", s.family)
	}
	// Counted before the record says so: whoever sees the session ended
	// sees it in the metrics.
	s.state.Lock()
	created := s.state.rec.Session.Created
	s.state.Unlock()
	s.n.metrics.SessionEnded(s.family, state, st.Reason, now.Sub(created))
	s.run.Lock()
	uses := s.run.envUses
	s.run.Unlock()
	s.update(true, func(r *store.Record) {
		r.Session.Environments = uses
		r.Session.State = state
		r.Session.Reason = st.Reason
		r.Session.Detail = st.Detail
		r.Session.Finished = &now
		if st.Result != nil {
			r.Result = json.RawMessage(st.Result)
		}
	})
}

// missingFromTopic names the organizations playing a party that have not
// yet subscribed to the session topic: gossipsub delivers a message only to
// peers it knows are subscribed, so a message published before then could
// be lost. Every party joined the topic before accepting, so normally
// nobody is missing by the time the session starts.
func (s *session) missingFromTopic() []string {
	if s.topic == nil {
		return nil
	}
	have := map[peer.ID]bool{}
	for _, p := range s.topic.ListPeers() {
		have[p] = true
	}
	var missing []string
	for _, id := range s.remotes {
		// Only the organizations that play a party join the topic (an
		// initiator without one does not).
		if !have[id] && s.playsParty(id) {
			missing = append(missing, s.nameOf(id))
		}
	}
	return missing
}

// playsParty reports whether organization id plays a party of the session.
func (s *session) playsParty(id peer.ID) bool {
	for _, ids := range s.orgs {
		if slices.Contains(ids, id) {
			return true
		}
	}
	return false
}

// stopRoles stops stepping messages in place and closes the environments:
// the session has ended.
func (s *session) stopRoles() {
	s.run.Lock()
	s.run.inPlace = false
	if e := s.flushOut(); e != nil && s.run.roleErr == nil {
		s.run.roleErr = e
	}
	if s.run.sendCancel != nil {
		s.run.sendCancel()
	}
	s.closeEnvironments()
	s.takeEnvironmentUses()
	s.run.Unlock()
}

// collectRoles tells the lifecycle what the roles did: how they failed,
// which parties finished with what report, and, if progress, their summed
// progress.
func (s *session) collectRoles(progress bool) {
	type finish struct {
		p      protocol.Party
		report []byte
	}
	var (
		done []finish
		sum  protocol.Progress
		news bool
	)
	s.run.Lock()
	if e := s.flushOut(); e != nil && s.run.roleErr == nil {
		// What a stream's burst left waiting, when its reader could not
		// take run to send it (flushHeld).
		s.run.roleErr = e
	}
	err := s.run.roleErr
	for i, p := range s.mine {
		if s.finished(i) && !s.life.told[i] {
			s.life.told[i] = true
			done = append(done, finish{p, s.run.reports[p]})
		}
	}
	if s.run.dirty && (progress || len(done) > 0) {
		s.run.dirty, news = false, true
		for _, pr := range s.run.myProgress {
			sum.Step += pr.Step
			sum.Total += pr.Total
			sum.Activity += pr.Activity
		}
	}
	s.run.Unlock()
	if news {
		s.life.lc.SetProgress(sum)
	}
	for _, f := range done {
		s.life.lc.PartyFinished(f.p, f.report)
	}
	if err != nil {
		if err.unreachable != "" {
			if o, ok := s.orgIndex[err.unreachable]; ok {
				s.life.lc.Unreachable(o, err.reason, err.detail)
				return
			}
		}
		s.life.lc.Fail(err.reason, err.detail)
	}
}

// forget removes an ended session from the active set.
func (n *Runtime) forget(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.sessions[id]; s != nil {
		n.recent.CompareAndSwap(s, nil)
		s.gone.Store(true)
	}
	delete(n.sessions, id)
	n.metrics.Active.Set(float64(len(n.sessions)))
}
