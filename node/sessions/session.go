package sessions

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/lifecycle"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
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
// them are capped too (inbound.go).
const (
	inboxSize     = 4096
	ctrlSize      = 256
	inboxTimeout  = 10 * time.Second
	sendTimeout   = 10 * time.Second
	progressEvery = time.Second
	// maxLifecycleTick bounds the length of a tick of a session's
	// lifecycle (lifecycleTick): every timeout of the lifecycle is a whole
	// number of them.
	maxLifecycleTick = time.Second
	// causeGrace is how long a session that cannot reach a peer waits for
	// an abort that names the real cause (the peer shutting down, say)
	// before it aborts with what it saw: a peer that shuts down tells the
	// others why and then closes its connections, and the first symptom
	// seen here can be the closed connection, not the message that
	// explains it.
	causeGrace = 2 * time.Second
	// progressSaveEvery is how often a running session's record is
	// stored with its progress (it is stored at every change of state
	// besides): a crash loses at most that much of its progress and
	// duration (node.recoverSessions).
	progressSaveEvery = 5 * time.Second
	// proposeResend is how often the initiator proposes again to the
	// participants that have not answered yet.
	proposeResend = 3 * time.Second
)

// runState is what the roles of a session hold and what they need to run,
// guarded by its lock (session.run), which the goroutine that drives the
// roles holds: the loop, or a stream's reader stepping a message in place.
// Every message touches it.
type runState struct {
	sync.Mutex
	inPlace bool           // messages may be stepped in place: the roles run, their messages are small
	dirty   bool           // myProgress changed since the loop last took it
	parties []*drive.Party // of mine[i], once built; a slice, since every message looks its party up (see mineIndex)
	envs    []*envSlot     // of mine[i]; nil for a role that asks no environment
	// envUses is what the environments of the organization's own did, by
	// party, taken when the roles stopped (stopRoles); nil until then or
	// when there is none.
	envUses      map[string]apitype.EnvironmentUse
	transport    *sessionTransport
	sendCtx      context.Context    // bounds a Ready batch's sends; see batchContext
	sendCancel   context.CancelFunc // of sendCtx
	sendDeadline time.Time          // of sendCtx
	// roleErr is how the roles failed, for the loop to end the session
	// with (a message stepped in place sets it and kicks the loop).
	roleErr    *abortError
	reports    map[protocol.Party][]byte // of mine, once finished
	myProgress map[protocol.Party]protocol.Progress
}

// lifeState is the session's lifecycle, owned by the session's goroutine
// (sessionloop.go) alone.
type lifeState struct {
	lc      *lifecycle.Machine
	senders map[peer.ID]*controlSender // control frames on their way, by peer
	told    []bool                     // of mine[i]: the machine knows it finished
	started bool                       // the roles were started
}

// recordState is the session's record and its version, guarded by its lock.
type recordState struct {
	sync.Mutex
	rec     *store.Record
	version uint64    // of rec, counting the changes that were stored
	saved   time.Time // when rec was last stored
	// progressEvent is when the last progress event was published.
	progressEvent time.Time
}

// recordWrites orders the writes of the record: a progress snapshot is
// written in the background (setProgress), and must never overwrite a
// later record. Its lock guards stored.
type recordWrites struct {
	sync.Mutex
	stored uint64         // the version of the record last written
	saving sync.WaitGroup // background writes; the loop waits for them
}

// ctrlEvent is what reaches a session's loop besides role messages: a
// control frame from a peer, or something the node saw for it — a local
// request to abort, a peer whose connection closed and could not be
// redialed, a control frame that could not be sent.
type ctrlEvent struct {
	from peer.ID
	msg  *nodepb.Control
	size int // of the frame, counted against the buffer caps (reserve)

	abort string // a local request to abort, for this reason
	// detail is the local error behind abort or reason, recorded here
	// only.
	detail string
	// lost names a peer that cannot be reached, and reason says how.
	lost   peer.ID
	reason string
}

// took releases what ev counted against the buffer caps, once ev has left
// the queue.
func (s *session) took(ev ctrlEvent) {
	if ev.size > 0 {
		s.release(ev.from, ev.size)
	}
}

// session is one session on this node, initiated here or proposed by a
// peer. Its lifecycle is a deterministic state machine (life.lc, package
// lifecycle) that one goroutine, the session's loop (sessionloop.go), owns
// and drives: it feeds the machine control frames, ticks and what the
// node saw, persists the record, sends the machine's control messages
// and starts the roles. The roles are the runner's (run): the loop's, or —
// while they run — a stream's read goroutine that steps a message in place
// (deliver). Other goroutines reach the session through the ctrl and inbox
// channels, and read the record under state's lock.
//
// Each field has one owner, and its place says which:
//   - the fields at the top are set before the session is registered
//     (newSession, and the topic joined before the loop starts) and never
//     change after: anybody reads them;
//   - gone, queued, topics, windows and buf are safe for concurrent use;
//   - run belongs to whoever holds its lock; life to the loop; state to
//     whoever holds its lock; writes orders the record's writes.
//
// The fields every message touches come first, so that they share a few
// cache lines.
type session struct {
	n *Runtime
	// live is the node's config and address book as they were when the
	// session was proposed or accepted, and cfg its config: the session
	// keeps them to its end, whatever a reload changes (reload.go).
	live *liveConfig
	cfg  *config.Config
	id   string
	fam  protocol.Family
	// family is fam.Name(), which every frame's stream is checked
	// against without an interface call.
	family string
	// caps is how the family's roles are driven (drive.CapsOf).
	caps drive.Caps
	self peer.ID
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
	// topics numbers and keeps the session's topic messages for replays
	// (transport.go); windows de-duplicates those received (inbound.go).
	topics  topicReplay
	windows topicWindows

	// run is the roles' state, owned by whoever holds its lock: the loop,
	// or a stream's reader stepping a message in place.
	run runState
	// queued counts the messages put in inbox and not yet stepped. A
	// message is stepped in place only when none is, so the messages of
	// each sender keep their order.
	queued atomic.Int64

	params    any
	specText  []byte
	assign    protocol.Assignment // organizations by peer ID
	initiator peer.ID
	initiated bool
	// name is the standing session this is a run of, "" for one
	// started by hand (setName).
	name string
	// members are the session's organizations, resolved once: the
	// lifecycle's Org o is members[o], and orgIndex the reverse.
	members  []peer.ID
	orgIndex map[peer.ID]lifecycle.Org
	// partyOrgs is orgs as the lifecycle's organizations; heard, by
	// organization, says that a protocol message from it arrived since
	// the loop last looked (deliver sets it, the loop hands it to the
	// lifecycle: lifecycle.Machine.Heard).
	partyOrgs [][]lifecycle.Org
	heard     []atomic.Bool
	remotes   []peer.ID      // the other organizations of the session
	local     map[string]any // local data by role

	ctrl  chan ctrlEvent
	inbox chan protocol.Message
	// envCtx bounds the calls of environments that are not Immediate and
	// ends with the roles.
	envCtx    context.Context
	envCancel context.CancelFunc
	done      chan struct{}
	// kick wakes the loop when a message stepped in place finished a
	// party or failed.
	kick chan struct{}

	// life is the lifecycle's state, owned by the session's goroutine.
	life lifeState
	// state is the session's record, shared under its lock by the loop,
	// the roles (progress) and the control API (snapshots).
	state recordState
	// writes orders the record's writes to the store (see recordWrites).
	writes recordWrites

	// buf counts the bytes queued in inbox and ctrl (see inbound.go).
	buf sessionBuffer

	topic *p2p.Topic
}

// setName makes s a run of the standing session name, before it is
// registered: its proposal and its record carry the name.
func (s *session) setName(name string) {
	s.name = name
	s.state.rec.Session.Name = name
}

// lifecycleTick is the length of a tick of the lifecycle of a session
// under cfg: half the heartbeat interval, at most maxLifecycleTick — a
// second with the default 5 s heartbeats. Not shorter: each tick wakes the
// session's loop, which costs a busy role about a step (bench/HISTORY.md).
func lifecycleTick(cfg config.SessionConfig) time.Duration {
	return max(min(cfg.HeartbeatInterval.Duration/2, maxLifecycleTick), 10*time.Millisecond)
}

// lifecycleConfig is the configuration of the session's lifecycle.
func (s *session) lifecycleConfig() lifecycle.Config {
	cfg := s.cfg.Session
	c := lifecycle.Config{Self: s.orgIndex[s.self], Initiator: s.orgIndex[s.initiator], Owners: map[protocol.Party]lifecycle.Org{},
		Combine: s.combine, Tick: lifecycleTick(cfg), ProposeTimeout: cfg.ProposeTimeout.Duration,
		PeerTimeout: cfg.PeerTimeout.Duration, HeartbeatInterval: cfg.HeartbeatInterval.Duration,
		StallTimeout: cfg.StallTimeout.Duration, Resend: proposeResend, ProgressInterval: progressEvery, CauseGrace: causeGrace}
	for _, id := range s.members {
		c.Names = append(c.Names, s.nameOf(id))
		if id != s.initiator {
			c.Participants = append(c.Participants, s.orgIndex[id])
		}
	}
	for r, role := range s.roleNames {
		for i, id := range s.orgs[r] {
			c.Owners[protocol.Party{Role: role, Index: i}] = s.orgIndex[id]
		}
	}
	return c
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

// snapshot returns a copy of the session's record.
func (s *session) snapshot() store.Record {
	s.state.Lock()
	defer s.state.Unlock()
	r := *s.state.rec
	r.Local = maps.Clone(s.state.rec.Local) // the session goroutine adds to it
	return r
}

// update changes the record under the lock and, if persist, stores it.
func (s *session) update(persist bool, f func(*store.Record)) {
	s.state.Lock()
	f(s.state.rec)
	if !persist {
		s.state.Unlock()
		return
	}
	cp, v := s.snapshotForStore()
	s.state.Unlock()
	s.store(&cp, v)
	ev := cp.Session
	ev.Spec = ""
	s.n.events.Publish(events.KindSession, ev)
}

// snapshotForStore stamps the record as stored now and returns a copy of it
// and its version. state is locked.
func (s *session) snapshotForStore() (store.Record, uint64) {
	now := time.Now()
	utc := now.UTC()
	s.state.rec.Session.Updated = &utc
	s.state.saved = now // with its monotonic reading: a clock stepped back must not stop the saves
	s.state.version++
	r := *s.state.rec
	r.Local = maps.Clone(s.state.rec.Local) // it may be written while r is (setProgress)
	return r, s.state.version
}

// store writes version v of the record, unless a later one was written.
// A record the disk refuses is kept in memory and written again until the
// disk takes it (store.keep): the API shows it meanwhile, and the record
// is logged once per failure, not at every progress save.
func (s *session) store(rec *store.Record, v uint64) {
	s.writes.Lock()
	defer s.writes.Unlock()
	if v <= s.writes.stored {
		return
	}
	if first, err := s.n.store.Keep(rec); first {
		s.n.log.Error("could not store session record; it is kept in memory and written again until the disk takes it",
			"session", s.id, "state", rec.Session.State, "err", err)
	} else if err != nil {
		s.n.log.Debug("could not store session record again", "session", s.id, "state", rec.Session.State, "err", err)
	}
	s.writes.stored = v
}

// setProgress records the session's progress as this node sees it. If the
// record was last stored progressSaveEvery ago or more, it is stored again,
// in the background: a write waits for the disk (fsync), and the caller may
// be a stream's reader stepping a message in place, which every party of
// the session would be waiting for.
func (s *session) setProgress(p protocol.Progress) {
	s.state.Lock()
	defer s.state.Unlock()
	s.state.rec.Session.Progress = apitype.Progress{Step: p.Step, Total: p.Total, Activity: p.Activity}
	if now := time.Now(); now.Sub(s.state.progressEvent) >= progressEventEvery {
		s.state.progressEvent = now
		s.n.events.Publish(events.KindProgress, progressEvent{ID: s.id, Progress: s.state.rec.Session.Progress})
	}
	s.saveIfDue()
}

// saveDue stores the record, as setProgress does, if it was last stored
// progressSaveEvery ago or more: a session that runs without news (a
// participant waiting for its peers, the initiator of a quiet session)
// still has its record renewed, so that a crash leaves a record that says
// how long it ran.
func (s *session) saveDue() {
	s.state.Lock()
	defer s.state.Unlock()
	s.saveIfDue()
}

// saveIfDue is saveDue with state locked.
func (s *session) saveIfDue() {
	if time.Since(s.state.saved) < s.n.progressSave {
		return
	}
	cp, v := s.snapshotForStore()
	s.writes.saving.Add(1)
	go func() {
		defer s.writes.saving.Done()
		s.store(&cp, v)
	}()
}

// requestAbort asks the session's loop to abort with reason; it does not
// wait. A session that has already ended ignores it.
func (s *session) requestAbort(reason string) {
	s.post(ctrlEvent{abort: reason})
}

// requestAbortDetail is requestAbort with the local detail behind reason,
// which this organization alone records (disclosure.go).
func (s *session) requestAbortDetail(reason, detail string) {
	s.post(ctrlEvent{abort: reason, detail: detail})
}

// post hands ev to the session's loop, waiting at most a second for room.
func (s *session) post(ev ctrlEvent) {
	select {
	case s.ctrl <- ev:
	case <-s.done:
	case <-time.After(time.Second):
		s.n.log.Warn("session is not taking requests; dropped one", "session", s.id, "abort", ev.abort, "reason", ev.reason)
	}
}

// nameOf returns the name of id in the session's address book (the one it
// was created under), or its string form.
func (s *session) nameOf(id peer.ID) string { return s.live.nameOf(id) }

// What a peer sends a session waits in the session's queues (inbox, ctrl)
// until the session's goroutine takes it: while the session is proposed
// and not started, while its roles start, while its goroutine is busy, and
// always for a family whose messages are not stepped in place. A peer of
// the session could fill those queues with well-formed frames faster than
// they drain — frames for a session that has not started, or for rounds far
// ahead. So every frame queued is counted, in bytes, against two caps:
//
//   - session.max_buffered_bytes, the bytes queued in one session, from
//     all its peers;
//   - session.max_peer_buffered_bytes, the bytes queued from one peer, in
//     all its sessions on this node.
//
// A frame that would take either over is dropped, and the session it was for
// aborts (everywhere) with a reason that names the peer and the cap. The
// frames stepped in place (protocol.Info.SmallMessages) are never queued and
// never counted. The daemon's memory for queued frames is thus at most
// min(peers × max_peer_buffered_bytes, max_active × max_buffered_bytes),
// besides the frame each inbound stream is reading (p2p bounds those: one
// frame of at most max_frame_size per stream, and streams per peer).

// sessionBuffer counts the bytes queued in one session, in total and by
// the peer that sent them. A session's goroutine closes it when the session
// ends, which gives back to each peer what it had queued there; nothing is
// counted after that.
type sessionBuffer struct {
	mu     sync.Mutex
	closed bool
	bytes  int64
	peak   int64
	from   map[peer.ID]int64
	// overflowed is set once the session was told to abort for an
	// overflow: later frames are dropped without another request.
	overflowed bool
}

// reserve counts size bytes from peer from, queued in s, against the
// caps. When the frame is not to be queued, ok is false, and over says
// that a cap refused it; reason, the first time, is what the session aborts
// for. A session that has ended queues nothing (ok and over false).
func (s *session) reserve(from peer.ID, size int) (ok, over bool, reason string) {
	cfg := s.cfg
	b := &s.buf
	sz := int64(size) + config.QueuedOverhead
	b.mu.Lock()
	defer b.mu.Unlock()
	pb := s.live.peerBuf[from]
	if b.closed || pb == nil {
		// pb is nil for a peer outside the address book, which the
		// messenger refuses already.
		return false, false, ""
	}
	if limit := int64(cfg.Session.MaxBufferedBytes); b.bytes+sz > limit {
		return false, true, b.overflow(fmt.Sprintf("%s sent more than session.max_buffered_bytes = %d bytes that %s had not yet processed in this session",
			s.nameOf(from), limit, cfg.Node.Name))
	}
	if limit := int64(cfg.Session.MaxPeerBufferedBytes); !pb.reserve(sz, limit) {
		return false, true, b.overflow(fmt.Sprintf("%s sent more than session.max_peer_buffered_bytes = %d bytes that %s had not yet processed, over all its sessions",
			s.nameOf(from), limit, cfg.Node.Name))
	}
	b.bytes += sz
	b.peak = max(b.peak, b.bytes)
	if b.from == nil {
		b.from = map[peer.ID]int64{}
	}
	b.from[from] += sz
	return true, false, ""
}

// overflow returns reason the first time, and "" after: the session is
// asked to abort once. b.mu is held.
func (b *sessionBuffer) overflow(reason string) string {
	if b.overflowed {
		return ""
	}
	b.overflowed = true
	return reason
}

// release gives back what reserve(from, size) counted, once the frame has
// left the queue.
func (s *session) release(from peer.ID, size int) {
	b := &s.buf
	sz := int64(size) + config.QueuedOverhead
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.bytes -= sz
	b.from[from] -= sz
	s.live.peerBuf[from].bytes.Add(-sz)
}

// closeBuffer ends the counting when the session ends: each peer gets back
// what it still had queued here.
func (s *session) closeBuffer() {
	b := &s.buf
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for p, sz := range b.from {
		s.live.peerBuf[p].bytes.Add(-sz)
	}
	b.from, b.bytes = nil, 0
}

// dropOverflow drops a frame of peer from that reserve refused, counting
// it, and, with the reason reserve gave (the first time), logs the overflow
// and has the session abort.
func (s *session) dropOverflow(from peer.ID, reason string) {
	s.n.metrics.Fail("overflow")
	if reason == "" {
		return
	}
	s.n.log.Warn("dropped a frame over a buffer cap; aborting the session", "session", s.id, "peer", s.nameOf(from), "reason", reason)
	go s.requestAbort(reason)
}

// progressEventEvery bounds the progress events of a session
// (events.KindProgress): a busy session reports thousands of steps a
// second, which would push every other event out of the stream's ring.
const progressEventEvery = time.Second

// progressEvent is the data of an events.KindProgress event.
type progressEvent struct {
	ID       string           `json:"id"`
	Progress apitype.Progress `json:"progress"`
}
