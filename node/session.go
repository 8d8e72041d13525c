package node

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

const (
	stateProposed  = apitype.StateProposed
	stateRunning   = apitype.StateRunning
	stateCompleted = apitype.StateCompleted
	stateAborted   = apitype.StateAborted
)

// Sizes of a session's queues. A peer that floods a session past them makes
// the session abort rather than the daemon grow without bound; the bytes in
// them are capped too (buffer.go).
const (
	inboxSize     = 4096
	ctrlSize      = 256
	inboxTimeout  = 10 * time.Second
	sendTimeout   = 10 * time.Second
	progressEvery = time.Second
	// progressSaveEvery is how often a running session's record is
	// stored with its progress (it is stored at every change of state
	// besides): a crash loses at most that much of its progress and
	// duration (node.recoverSessions).
	progressSaveEvery = 5 * time.Second
	// proposeResend is how often the initiator proposes again to the
	// participants that have not answered yet.
	proposeResend = 3 * time.Second
)

// ctrlEvent is a control frame from a peer, or a local request to abort.
type ctrlEvent struct {
	from  peer.ID
	msg   *nodepb.Control
	abort string // set for a local abort request
	size  int    // of the frame, counted against the buffer caps (reserve)
}

// took releases what ev counted against the buffer caps, once ev has left
// the queue.
func (s *session) took(ev ctrlEvent) {
	if ev.size > 0 {
		s.release(ev.from, ev.size)
	}
}

// isAbort reports whether ev ends the session: an Abort from a peer or a
// local request to abort.
func (ev ctrlEvent) isAbort() bool {
	_, ok := ev.msg.GetBody().(*nodepb.Control_Abort)
	return ok || ev.abort != ""
}

// session is one session on this node, initiated here or proposed by a peer.
// One goroutine (main) takes it through its phases; the fields marked "owned
// by the runner" belong to whoever holds run: main, or — while the roles run
// — a stream's read goroutine that steps a message in place (deliver). Other
// goroutines reach the session through the ctrl and inbox channels, and read
// the record under mu.
//
// The fields every message touches come first, so that they share a few
// cache lines: with a hundred daemons on two cores, every line a message
// touches is a miss.
type session struct {
	n   *Node
	id  string
	fam protocol.Family
	// family is fam.Name(), which every frame's stream is checked against:
	// a string compare (of the same constant, so a pointer) instead of an
	// interface call.
	family string
	self   peer.ID
	// roleNames and orgs say who plays every party, decoded once since
	// peer IDs are compared on every message: orgs[r][i] plays party i of
	// role roleNames[r] (see orgOf and party). The IDs are the address
	// book's copies (newSession).
	roleNames []string
	orgs      [][]peer.ID
	mine      []protocol.Party
	// gone is set when the node forgets the session: a roleStream that
	// remembers it then decodes the next frame's head again.
	gone atomic.Bool

	// run is held by the goroutine that drives the roles. main holds it
	// except while it waits for an event.
	run sync.Mutex
	// queued counts the messages put in inbox and not yet stepped. A
	// message is stepped in place only when none is, so the messages of
	// each sender keep their order.
	queued atomic.Int64

	// owned by the runner (see run), touched by every message
	inPlace      bool            // messages may be stepped in place: the roles run, their messages are small
	dirty        bool            // myProgress changed since last sent
	sentDone     bool            // the Done report has gone to the initiator
	roles        []protocol.Role // of mine[i]; a slice, since every message looks its party up (see mineIndex)
	finished     []bool          // of mine[i]
	transport    *sessionTransport
	sendCtx      context.Context    // bounds a Ready batch's sends; see batchContext
	sendCancel   context.CancelFunc // of sendCtx
	sendDeadline time.Time          // of sendCtx
	sentAt       time.Time          // when batchContext last read the clock, until afterFlush takes it

	params    any
	specText  []byte
	assign    protocol.Assignment // organizations by peer ID
	initiator peer.ID
	initiated bool
	remotes   []peer.ID      // the other organizations of the session
	local     map[string]any // local data by role

	ctrl  chan ctrlEvent
	inbox chan protocol.Message
	done  chan struct{}
	// heard holds, for every peer whose silence aborts the session, when a
	// control frame from it last arrived (Unix nanoseconds). The stream
	// handler stamps it on arrival, so a busy session goroutine never mistakes
	// its own delay for a peer's silence.
	heard map[peer.ID]*atomic.Int64

	mu      sync.Mutex // guards rec, version and saved
	rec     *record
	version uint64    // of rec, counting the changes that were stored
	saved   time.Time // when rec was last stored

	// storeMu orders the writes of the record: a progress snapshot is
	// written in the background (setProgress), and must never overwrite
	// a later record. It guards stored.
	storeMu sync.Mutex
	stored  uint64         // the version of the record last written
	saving  sync.WaitGroup // background writes; main waits for them

	// buf counts the bytes queued in inbox and ctrl (see buffer.go).
	buf sessionBuffer

	// kick wakes main when a message stepped in place ended the session.
	kick chan struct{}

	// owned by the runner (see run)
	ended        bool        // a message stepped in place ended the session
	endErr       *abortError // and how, nil if it completed
	reports      map[protocol.Party][]byte
	progress     map[peer.ID]protocol.Progress // initiator: by organization
	myProgress   map[protocol.Party]protocol.Progress
	lastSent     time.Time         // of the last progress frame
	lastProgress time.Time         // initiator: when the summed progress last changed
	lastSum      protocol.Progress // initiator: the summed progress then
	topic        *p2p.Topic
}

// abortError ends a session: reason is what every participant records.
type abortError struct {
	reason string
	notify bool    // tell the other side
	except peer.ID // who not to tell (the peer the abort came from)
	// unreachable marks an abort caused by a failed send: the peer may have
	// gone away on purpose, and its own abort (which names the real cause)
	// may still be on its way.
	unreachable bool
}

func (e *abortError) Error() string { return e.reason }

func abortf(notify bool, format string, args ...any) *abortError {
	return &abortError{reason: fmt.Sprintf(format, args...), notify: notify}
}

func (n *Node) newSession(id string, fam protocol.Family, params any, specText []byte, assign protocol.Assignment,
	initiator peer.ID, local map[string]any) *session {
	self := n.host.ID()
	s := &session{n: n, id: id, fam: fam, family: fam.Name(), params: params, specText: specText, assign: assign,
		initiator: initiator, initiated: initiator == self, self: self,
		mine: assign.PartiesOf(self.String()), local: local,
		ctrl: make(chan ctrlEvent, ctrlSize), inbox: make(chan protocol.Message, inboxSize), done: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		reports: map[protocol.Party][]byte{}, progress: map[peer.ID]protocol.Progress{},
		myProgress: map[protocol.Party]protocol.Progress{}, heard: map[peer.ID]*atomic.Int64{}}
	s.transport = &sessionTransport{s: s, messenger: n.roles[fam.Name()]}
	for _, role := range slices.Sorted(maps.Keys(assign.Roles)) {
		ids := make([]peer.ID, len(assign.Roles[role]))
		for i, org := range assign.Roles[role] {
			ids[i], _ = peer.Decode(org) // validated by the caller
			if ids[i] == self {
				ids[i] = self // as with the book's copies below: every frame's recipient is compared with self
			} else if book, ok := n.ids[n.names[ids[i]]]; ok && book == ids[i] {
				// The address book's copy, which the messenger also hands
				// over with every frame: comparing the two (every frame's
				// sender, every message's recipient) compares pointers.
				ids[i] = book
			}
		}
		// The family's own copy of the name, its RoleSpec's: every party
		// the session hands its roles carries it, so that a role comparing
		// a party's role with its constant (m.From == controllerParty)
		// compares a pointer rather than the bytes.
		if spec, err := protocol.RoleSpecOf(fam, role); err == nil {
			role = spec.Name
		}
		s.roleNames = append(s.roleNames, role)
		s.orgs = append(s.orgs, ids)
	}
	for i, p := range s.mine {
		// The session's own copy of the role name: a frame's party carries
		// it too (party), so comparing the two compares a pointer.
		s.mine[i].Role = s.roleNames[roleIndex(s.roleNames, p.Role)]
	}
	s.roles, s.finished = make([]protocol.Role, len(s.mine)), make([]bool, len(s.mine))
	for _, org := range assign.Orgs() {
		id, _ := peer.Decode(org)
		if id != self {
			s.remotes = append(s.remotes, id)
		}
	}
	if s.initiated {
		// The initiator talks to every organization; a participant to the initiator.
	} else if !contains(s.remotes, initiator) {
		s.remotes = append(s.remotes, initiator)
	}
	for _, p := range s.peersToHear() {
		s.heard[p] = &atomic.Int64{}
	}
	names := map[string][]string{}
	for role, orgs := range assign.Roles {
		for _, org := range orgs {
			id, _ := peer.Decode(org)
			names[role] = append(names[role], n.nameOf(id))
		}
	}
	var parties []string
	for _, p := range s.mine {
		parties = append(parties, p.String())
	}
	var peers []string
	for _, p := range s.remotes {
		peers = append(peers, p.String())
	}
	s.rec = &record{Peers: peers, Session: apitype.Session{ID: id, Protocol: fam.Name(), Initiator: n.nameOf(initiator),
		Local: s.initiated, Roles: names, Parties: parties, State: stateProposed,
		Created: time.Now().UTC(), Spec: string(specText)}}
	return s
}

// orgOf returns the organization that plays party p; ok is false if the
// session has no such party.
func (s *session) orgOf(p protocol.Party) (org peer.ID, ok bool) {
	r, ok := s.roleOf(p)
	if !ok {
		return "", false
	}
	return s.orgs[r][p.Index], true
}

// roleOf returns the index in roleNames (and orgs) of party p's role; ok is
// false if the session has no such party.
func (s *session) roleOf(p protocol.Party) (r int, ok bool) {
	r = roleIndex(s.roleNames, p.Role)
	return r, r >= 0 && p.Index >= 0 && p.Index < len(s.orgs[r])
}

// party resolves the party a frame names by its role, still in the frame's
// bytes, and index: the party with the session's copy of the role name (no
// allocation) and the organization that plays it. ok is false if the
// session has no such party.
func (s *session) party(role []byte, index uint32) (p protocol.Party, org peer.ID, ok bool) {
	r := roleIndex(s.roleNames, role)
	if r < 0 || int64(index) >= int64(len(s.orgs[r])) {
		return p, "", false
	}
	return protocol.Party{Role: s.roleNames[r], Index: int(index)}, s.orgs[r][index], true
}

// roleIndex returns the index of role in names, or -1. A session has a
// handful of roles, so a scan beats hashing the name.
func roleIndex[T string | []byte](names []string, role T) int {
	for i, name := range names {
		if string(role) == name {
			return i
		}
	}
	return -1
}

func contains(ids []peer.ID, id peer.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// peersToHear are the organizations whose silence aborts the session: for the
// initiator every participant, for a participant the initiator.
func (s *session) peersToHear() []peer.ID {
	if s.initiated {
		return s.remotes
	}
	return []peer.ID{s.initiator}
}

// snapshot returns a copy of the session's record.
func (s *session) snapshot() record {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := *s.rec
	r.Local = maps.Clone(s.rec.Local) // the session goroutine adds to it
	return r
}

// update changes the record under the lock and, if persist, stores it.
func (s *session) update(persist bool, f func(*record)) {
	s.mu.Lock()
	f(s.rec)
	if !persist {
		s.mu.Unlock()
		return
	}
	cp, v := s.snapshotForStore()
	s.mu.Unlock()
	s.store(&cp, v)
}

// snapshotForStore stamps the record as stored now and returns a copy of it
// and its version. mu is held.
func (s *session) snapshotForStore() (record, uint64) {
	now := time.Now()
	utc := now.UTC()
	s.rec.Session.Updated = &utc
	s.saved = now // with its monotonic reading: a clock stepped back must not stop the saves
	s.version++
	r := *s.rec
	r.Local = maps.Clone(s.rec.Local) // it may be written while r is (setProgress)
	return r, s.version
}

// store writes version v of the record, unless a later one was written.
func (s *session) store(rec *record, v uint64) {
	s.storeMu.Lock()
	defer s.storeMu.Unlock()
	if v <= s.stored {
		return
	}
	if err := s.n.store.put(rec); err != nil {
		s.n.log.Error("could not store session record", "session", s.id, "err", err)
	}
	s.stored = v
}

// setProgress records the session's progress as this node sees it. If the
// record was last stored progressSaveEvery ago or more, it is stored again,
// in the background: a write waits for the disk (fsync), and the caller may
// be a stream's reader stepping a message in place, which every party of
// the session would be waiting for.
func (s *session) setProgress(p protocol.Progress) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Session.Progress = apitype.Progress{Step: p.Step, Total: p.Total, Activity: p.Activity}
	s.saveIfDue()
}

// saveDue stores the record, as setProgress does, if it was last stored
// progressSaveEvery ago or more: a session that runs without news (a
// participant waiting for its peers, the initiator of a quiet session)
// still has its record renewed, so that a crash leaves a record that says
// how long it ran.
func (s *session) saveDue() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saveIfDue()
}

// saveIfDue is saveDue with mu held.
func (s *session) saveIfDue() {
	if time.Since(s.saved) < s.n.progressSave {
		return
	}
	cp, v := s.snapshotForStore()
	s.saving.Add(1)
	go func() {
		defer s.saving.Done()
		s.store(&cp, v)
	}()
}

// requestAbort asks the session's goroutine to abort with reason; it does not
// wait. A session that has already ended ignores it.
func (s *session) requestAbort(reason string) {
	select {
	case s.ctrl <- ctrlEvent{abort: reason}:
	case <-s.done:
	case <-time.After(time.Second):
		s.n.log.Warn("session is not taking requests; abort request dropped", "session", s.id, "reason", reason)
	}
}

// main is the session's goroutine: it takes the session through its phases
// and records how it ended.
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
		s.saving.Wait()
		s.n.wg.Done()
	}()
	defer func() {
		// A panic in the node's own session code (a role's is recovered
		// where it is called) ends this session only.
		if v := recover(); v != nil {
			s.end(s.internalError(v))
		}
	}()
	var err *abortError
	if s.initiated {
		err = s.propose()
	} else {
		err = s.awaitStart()
	}
	if err == nil {
		err = s.runRoles()
	}
	if err != nil && err.unreachable {
		err = s.awaitCause(err)
	}
	if err != nil {
		s.end(err)
	}
}

// causeGrace is how long a session that failed to reach a peer waits for an
// abort that names the real cause (the peer shutting down, say) before it
// aborts with the send failure.
const causeGrace = 2 * time.Second

// awaitCause waits, at most causeGrace, for an abort from the other side and
// returns it in place of sendErr: a peer that shuts down tells the others
// why and then closes its connections, and the first symptom seen here can
// be the closed connection, not the message that explains it.
func (s *session) awaitCause(sendErr *abortError) *abortError {
	timer := time.NewTimer(causeGrace)
	defer timer.Stop()
	for {
		select {
		case ev := <-s.ctrl:
			s.took(ev)
			if !ev.isAbort() {
				continue
			}
			if _, err := s.control(ev); err != nil {
				return err
			}
		case <-timer.C:
			return sendErr
		}
	}
}

// lateControl is how a session ends when main took ev from ctrl while a
// message stepped in place ended the session. A peer that shuts down sends
// its abort and then closes its streams, so the in-place step can fail on
// the closed stream just as main holds the abort that names the cause: that
// abort is the session's end, as awaitCause would have found it. Anything
// else comes too late.
func (s *session) lateControl(ev ctrlEvent) *abortError {
	if s.endErr != nil && s.endErr.unreachable && ev.isAbort() {
		if _, err := s.control(ev); err != nil {
			return err
		}
	}
	return s.endErr
}

// end records an aborted session and tells the other side.
func (s *session) end(e *abortError) {
	s.n.log.Warn("session aborted", "session", s.id, "protocol", s.fam.Name(), "reason", e.reason)
	if e.notify {
		s.broadcast(&nodepb.Control{Body: &nodepb.Control_Abort{Abort: &nodepb.Abort{Reason: e.reason}}}, e.except)
	}
	now := time.Now().UTC()
	s.update(true, func(r *record) {
		r.Session.State = stateAborted
		r.Session.Reason = e.reason
		r.Session.Finished = &now
	})
	s.n.metrics.sessions.WithLabelValues(stateAborted).Inc()
}

// broadcast sends c to the other side — every participant from the
// initiator, the initiator from a participant — except one peer, in parallel,
// and waits at most shutdownGrace.
func (s *session) broadcast(c *nodepb.Control, except peer.ID) []error {
	targets := []peer.ID{s.initiator}
	if s.initiated {
		targets = s.remotes
	}
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, p := range targets {
		if p == except || p == s.self {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.n.sendControl(ctx, p, s.id, c); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// propose is the initiator's first phase: propose to every participant and
// wait, within the propose timeout, until all accept.
func (s *session) propose() *abortError {
	prop := &nodepb.Control{Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: s.specText}}}
	timeout := s.n.cfg.Session.ProposeTimeout.Duration
	pending := map[peer.ID]bool{}
	for _, p := range s.remotes {
		pending[p] = true
	}
	sendErrs := make(chan error, len(s.remotes))
	// Every proposal send has returned before propose does: an abort sent
	// after it must not overtake a proposal still on its way to the same
	// peer, or that peer would accept a session already aborted.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var sends sync.WaitGroup
	defer sends.Wait() // before cancel: a proposal on its way is let through
	for _, p := range s.remotes {
		sends.Go(func() { sendErrs <- s.n.sendControl(ctx, p, s.id, prop) })
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	// A frame handed to a stream can still be lost when its connection is
	// replaced; participants that have not answered get the proposal again
	// (accepting is idempotent).
	resend := time.NewTicker(proposeResend)
	defer resend.Stop()
	for len(pending) > 0 {
		select {
		case <-resend.C:
			for p := range pending {
				sends.Go(func() {
					rctx, rcancel := context.WithTimeout(ctx, proposeResend)
					defer rcancel()
					s.n.sendControl(rctx, p, s.id, prop)
				})
			}
		case err := <-sendErrs:
			if err != nil {
				return abortf(true, "proposing: %v", err)
			}
		case ev := <-s.ctrl:
			s.took(ev)
			if ev.abort != "" {
				return abortf(true, "%s", ev.abort)
			}
			switch b := ev.msg.Body.(type) {
			case *nodepb.Control_Accept:
				delete(pending, ev.from)
			case *nodepb.Control_Decline:
				return &abortError{reason: fmt.Sprintf("%s declined: %s", s.n.nameOf(ev.from), b.Decline.Reason), notify: true, except: ev.from}
			case *nodepb.Control_Abort:
				return &abortError{reason: b.Abort.Reason, notify: true, except: ev.from}
			}
		case <-timer.C:
			var names []string
			for p := range pending {
				names = append(names, s.n.nameOf(p))
			}
			sort.Strings(names)
			return abortf(true, "%s did not answer the proposal within %v", strings.Join(names, ", "), timeout)
		}
	}
	start := &nodepb.Control{Body: &nodepb.Control_Start{Start: &nodepb.Start{}}}
	if errs := s.broadcast(start, ""); len(errs) > 0 {
		return abortf(true, "starting: %v", errs[0])
	}
	return nil
}

// awaitStart is a participant's first phase: wait for the initiator's Start.
func (s *session) awaitStart() *abortError {
	timeout := s.n.cfg.Session.ProposeTimeout.Duration + s.n.cfg.Session.PeerTimeout.Duration
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case ev := <-s.ctrl:
			s.took(ev)
			if ev.abort != "" {
				return abortf(true, "%s", ev.abort)
			}
			if ev.from != s.initiator {
				continue
			}
			switch b := ev.msg.Body.(type) {
			case *nodepb.Control_Start, *nodepb.Control_Heartbeat:
				// The initiator sends heartbeats only once the session runs:
				// one arriving first means the Start was lost.
				return nil
			case *nodepb.Control_Abort:
				return abortf(false, "%s", b.Abort.Reason)
			}
		case <-timer.C:
			return abortf(true, "the initiator %s did not start the session within %v of the proposal", s.n.nameOf(s.initiator), timeout)
		}
	}
}

// runRoles is the running phase: drive this node's roles until the session
// completes or aborts.
func (s *session) runRoles() *abortError {
	now := time.Now().UTC()
	s.update(true, func(r *record) {
		r.Session.State = stateRunning
		r.Session.Started = &now
	})
	started := time.Now()
	for _, h := range s.heard {
		h.Store(started.UnixNano())
	}
	s.lastProgress = started
	hbCtx, stopHeartbeats := context.WithCancel(context.Background())
	defer stopHeartbeats()
	go s.sendHeartbeats(hbCtx)
	if err := s.awaitTopic(); err != nil {
		return err
	}
	for i, p := range s.mine {
		var rnd io.Reader = cryptoRand{}
		if s.n.roleRand != nil {
			rnd = s.n.roleRand(p)
		}
		if err := s.buildRole(i, protocol.RoleConfig{SessionID: s.id, Self: p, Assignment: s.assign,
			Params: s.params, Local: s.local[p.Role], Rand: rnd, Clock: wallClock{},
			Logger: s.n.log.With("session", s.id, "party", p.String())}); err != nil {
			return err
		}
	}
	for i := range s.mine {
		if err := s.startRole(i); err != nil {
			return err
		}
		if err := s.flush(i); err != nil {
			return err
		}
	}
	if err := s.afterFlush(); err != nil {
		return err
	}
	// A family whose roles ignore Tick is not ticked: its sessions wake
	// the node only for messages (and the liveness check).
	var tickC <-chan time.Time
	if u, ok := s.fam.(protocol.MessageDriven); !ok || !u.MessageDriven() {
		tick := time.NewTicker(protocol.TickInterval)
		defer tick.Stop()
		tickC = tick.C
	}
	check := time.NewTicker(s.n.cfg.Session.HeartbeatInterval.Duration)
	defer check.Stop()
	s.run.Lock()
	small, ok := s.fam.(protocol.SmallMessages)
	s.inPlace = ok && small.SmallMessages()
	defer func() {
		s.inPlace = false
		if s.sendCancel != nil {
			s.sendCancel()
		}
		s.run.Unlock()
	}()
	for {
		if s.ended {
			return s.endErr
		}
		if err := s.drainLocal(); err != nil {
			return err
		}
		if done, err := s.checkComplete(); done || err != nil {
			return err
		}
		// Wait for the next event without the lock, so that a message
		// can be stepped in place meanwhile.
		s.run.Unlock()
		var (
			m      protocol.Message
			ev     ctrlEvent
			isMsg  bool
			isTick bool
			isChk  bool
			isCtrl bool
		)
		select {
		case m = <-s.transport.Incoming():
			isMsg = true
		case <-s.kick: // s.ended is set: the loop's top returns
		case <-tickC:
			isTick = true
		case <-check.C:
			isChk = true
		case ev = <-s.ctrl:
			s.took(ev)
			isCtrl = true
		}
		s.run.Lock()
		if s.ended {
			// A message stepped in place ended the session while this
			// goroutine waited for the lock: whatever woke it comes too
			// late (a completed session must not be aborted after all) —
			// unless it is an abort that explains a failed send.
			if isCtrl {
				return s.lateControl(ev)
			}
			return s.endErr
		}
		switch {
		case isMsg:
			err := s.step(m)
			s.queued.Add(-1)
			from, _ := s.orgOf(m.From)
			s.release(from, len(m.Body))
			if err != nil {
				return err
			}
		case isTick:
			for i := range s.mine {
				if s.finished[i] {
					continue
				}
				if err := s.tickRole(i); err != nil {
					return err
				}
				if err := s.flush(i); err != nil {
					return err
				}
			}
			if err := s.afterFlush(); err != nil {
				return err
			}
		case isChk:
			if err := s.checkLiveness(); err != nil {
				return err
			}
			s.saveDue()
			// Progress held back by progressEvery goes out now if no
			// message came to carry it (a message-driven session has no
			// ticks to do it).
			if err := s.afterFlush(); err != nil {
				return err
			}
		case isCtrl:
			if done, err := s.control(ev); done || err != nil {
				return err
			}
		}
	}
}

// stepInPlace steps m in the calling goroutine, as the running loop would,
// and hands an end of the session to main. run is held, and still is when
// stepInPlace returns, even after a panic in the node's code (a panic in a
// role's is recovered by step already), which ends the session.
func (s *session) stepInPlace(m protocol.Message) {
	defer func() {
		if v := recover(); v != nil {
			s.endInPlace(s.internalError(v))
		}
	}()
	err := s.step(m)
	if err == nil {
		err = s.drainLocal()
	}
	done := false
	if err == nil {
		done, err = s.checkComplete()
	}
	if !done && err == nil {
		return
	}
	s.endInPlace(err)
}

// endInPlace hands an end of the session found while stepping in place to
// main: err, or completion if nil. run is held.
func (s *session) endInPlace(err *abortError) {
	s.inPlace, s.ended, s.endErr = false, true, err
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// awaitTopic waits, at most session.propose_timeout, until every other
// organization playing a party has subscribed to the session topic:
// gossipsub delivers a message only to peers it knows are subscribed, so a
// message published before then could be lost. Every party joined the topic
// before accepting, so this normally takes no time at all.
func (s *session) awaitTopic() *abortError {
	if s.topic == nil {
		return nil
	}
	limit := s.n.cfg.Session.ProposeTimeout.Duration
	deadline := time.Now().Add(limit)
	for {
		have := map[peer.ID]bool{}
		for _, p := range s.topic.ListPeers() {
			have[p] = true
		}
		var missing []string
		for _, org := range s.assign.Orgs() {
			id, _ := peer.Decode(org)
			if id != s.self && !have[id] {
				missing = append(missing, s.n.nameOf(id))
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return abortf(true, "%s did not subscribe to the session topic within %v", strings.Join(missing, ", "), limit)
		}
		select {
		case ev := <-s.ctrl:
			s.took(ev)
			if done, err := s.control(ev); done || err != nil {
				if err == nil {
					err = abortf(true, "the session completed before %s started", s.n.cfg.Node.Name)
				}
				return err
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// sendHeartbeats tells the other side, every heartbeat interval, that this
// node is alive, until ctx ends. It runs beside the session goroutine, so a
// session busy computing still sends them, and it sends to all peers at once,
// so one unreachable peer delays nobody.
func (s *session) sendHeartbeats(ctx context.Context) {
	t := time.NewTicker(s.n.cfg.Session.HeartbeatInterval.Duration)
	defer t.Stop()
	hb := &nodepb.Control{Body: &nodepb.Control_Heartbeat{Heartbeat: &nodepb.Heartbeat{}}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, p := range s.peersToHear() {
			go func() {
				sctx, cancel := context.WithTimeout(ctx, s.n.cfg.Session.HeartbeatInterval.Duration)
				defer cancel()
				if err := s.n.sendControl(sctx, p, s.id, hb); err != nil {
					s.n.log.Debug("heartbeat not delivered", "session", s.id, "peer", s.n.nameOf(p), "err", err)
				}
			}()
		}
	}
}

// checkLiveness aborts the session when a peer it must hear from has been
// silent for session.peer_timeout, or, on the initiator, when the session has
// made no progress for session.stall_timeout.
func (s *session) checkLiveness() *abortError {
	limit := s.n.cfg.Session.PeerTimeout.Duration
	now := time.Now()
	for _, p := range s.peersToHear() {
		if silent := now.Sub(time.Unix(0, s.heard[p].Load())); silent > limit {
			return abortf(true, "%s stopped answering (silent for %v, more than session.peer_timeout = %v)",
				s.n.nameOf(p), silent.Round(time.Second), limit)
		}
	}
	if stall := s.n.cfg.Session.StallTimeout.Duration; s.initiated && now.Sub(s.lastProgress) > stall {
		return abortf(true, "no progress for %v (session.stall_timeout): the protocol is stuck", stall)
	}
	return nil
}

// control handles a control frame or local request while running. done
// reports that the session has completed.
func (s *session) control(ev ctrlEvent) (done bool, err *abortError) {
	if ev.abort != "" {
		return false, abortf(true, "%s", ev.abort)
	}
	from := s.n.nameOf(ev.from)
	switch b := ev.msg.Body.(type) {
	case *nodepb.Control_Abort:
		if s.initiated {
			return false, &abortError{reason: b.Abort.Reason, notify: true, except: ev.from}
		}
		if ev.from == s.initiator {
			return false, abortf(false, "%s", b.Abort.Reason)
		}
	case *nodepb.Control_Progress:
		if s.initiated {
			s.progress[ev.from] = protocol.Progress{Step: b.Progress.Step, Total: b.Progress.Total, Activity: b.Progress.Activity}
			s.publishProgress()
		}
	case *nodepb.Control_Done:
		if !s.initiated {
			return false, nil
		}
		for _, pr := range b.Done.Reports {
			p := protocol.Party{Role: pr.Role, Index: int(pr.Index)}
			if org, ok := s.orgOf(p); !ok || org != ev.from {
				return false, abortf(true, "%s reported a result for %s, which it does not play", from, p)
			}
			if _, dup := s.reports[p]; dup {
				return false, abortf(true, "%s reported a result for %s twice", from, p)
			}
			s.reports[p] = pr.Report
		}
	case *nodepb.Control_Complete:
		if ev.from != s.initiator {
			return false, nil
		}
		for i, p := range s.mine {
			if !s.finished[i] {
				return false, abortf(true, "the initiator %s declared the session complete while %s had not finished", from, p)
			}
		}
		s.complete(nil)
		return true, nil
	}
	return false, nil
}

// checkComplete completes the session on the initiator once every party has
// reported. It returns done when the session has ended.
func (s *session) checkComplete() (bool, *abortError) {
	if !s.initiated || len(s.reports) < len(s.assign.Parties()) {
		return false, nil
	}
	names := protocol.Assignment{Roles: s.rec.Session.Roles}
	raw, err := s.combine(names)
	if err != nil {
		return true, err
	}
	s.broadcast(&nodepb.Control{Body: &nodepb.Control_Complete{Complete: &nodepb.Complete{}}}, "")
	s.complete(raw)
	return true, nil
}

// complete records the session as completed.
func (s *session) complete(result json.RawMessage) {
	now := time.Now().UTC()
	s.update(true, func(r *record) {
		r.Session.State = stateCompleted
		r.Session.Finished = &now
		if result != nil {
			r.Result = result
		}
	})
	s.n.metrics.sessions.WithLabelValues(stateCompleted).Inc()
	s.n.log.Info("session completed", "session", s.id, "protocol", s.fam.Name())
}
