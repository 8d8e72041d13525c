package node

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/bandit-node/bandit-node/node/lifecycle"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"google.golang.org/protobuf/proto"
)

// sendControl sends one control frame of session id to peer to.
func (n *Node) sendControl(ctx context.Context, to peer.ID, id string, c *nodepb.Control) error {
	// c may be shared by concurrent senders: set the ID on a shallow copy.
	frame, err := proto.Marshal(&nodepb.Control{SessionId: id, Body: c.Body})
	if err != nil {
		return fmt.Errorf("encoding a control frame: %w", err)
	}
	if err := n.control.Send(ctx, to, frame); err != nil {
		n.metrics.fail("send")
		return fmt.Errorf("sending to %s: %w", n.nameOf(to), err)
	}
	return nil
}

// lookup returns the active session id, or nil.
func (n *Node) lookup(id string) *session {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sessions[id]
}

// lookupBytes is lookup for an ID still in a frame's bytes (no copy). The
// session found last is remembered: a running session's frames come one
// after another, and comparing their ID with it spares the lock and the map
// (with many daemons per core, every memory they touch is a cache miss).
func (n *Node) lookupBytes(id []byte) *session {
	if s := n.recent.Load(); s != nil && s.id == string(id) {
		return s
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.sessions[string(id)]
	if s != nil {
		n.recent.Store(s) // under n.mu, so never a session forget has removed
	}
	return s
}

// forget removes an ended session from the active set.
func (n *Node) forget(id string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if s := n.sessions[id]; s != nil {
		n.recent.CompareAndSwap(s, nil)
		s.gone.Store(true)
	}
	delete(n.sessions, id)
	n.metrics.active.Set(float64(len(n.sessions)))
}

// register adds s to the active set and starts its goroutine, unless the node
// is closing or at session.max_active.
func (n *Node) register(s *session) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closing {
		return fmt.Errorf("%s is shutting down", n.cfg.Node.Name)
	}
	if _, dup := n.sessions[s.id]; dup || n.store.exists(s.id) {
		return fmt.Errorf("session ID %s is already used on %s", s.id, n.cfg.Node.Name)
	}
	if len(n.sessions) >= n.cfg.Session.MaxActive {
		return fmt.Errorf("%s already runs %d sessions (session.max_active)", n.cfg.Node.Name, len(n.sessions))
	}
	if err := n.store.put(&record{Session: s.rec.Session}); err != nil {
		return err
	}
	n.sessions[s.id] = s
	n.metrics.active.Set(float64(len(n.sessions)))
	n.wg.Add(1)
	go s.main()
	return nil
}

// handleControl routes a control frame received from a peer.
func (n *Node) handleControl(from peer.ID, frame []byte) {
	c, err := decodeControl(frame)
	if err != nil {
		n.metrics.fail("decode")
		n.log.Warn("rejected a control frame", "peer", n.nameOf(from), "err", err)
		return
	}
	s := n.lookup(c.SessionId)
	if p, ok := c.Body.(*nodepb.Control_Propose); ok && (s == nil || s.initiator != from || !bytes.Equal(s.specText, p.Propose.Spec)) {
		n.examine(from, c, p.Propose)
		return
	}
	// Anything else, and a proposal repeated by the initiator of a session
	// accepted here (its lifecycle answers it), goes to the session.
	if s == nil {
		n.answerEnded(from, c)
		return
	}
	if _, ok := s.orgIndex[from]; !ok || (!s.initiated && from != s.initiator) {
		n.metrics.fail("rejected")
		n.log.Warn("rejected a control frame from a peer outside the session", "peer", n.nameOf(from), "session", c.SessionId)
		return
	}
	if a, ok := c.Body.(*nodepb.Control_Abort); ok {
		a.Abort.Reason = sanitizeReason(a.Abort.Reason)
	}
	if d, ok := c.Body.(*nodepb.Control_Decline); ok {
		d.Decline.Reason = sanitizeReason(d.Decline.Reason)
	}
	ok, over, reason := s.reserve(from, len(frame))
	if !ok {
		if over {
			s.dropOverflow(from, reason)
		} else {
			n.answerEnded(from, c)
		}
		return
	}
	select {
	case s.ctrl <- ctrlEvent{from: from, msg: c, size: len(frame)}:
	case <-s.done:
		s.release(from, len(frame))
		// The session ended while the frame waited: answer as an ended
		// session does, from its record (stored before done closes).
		n.answerEnded(from, c)
	case <-time.After(inboxTimeout):
		s.release(from, len(frame))
		n.log.Warn("session is not taking control frames; dropped one", "session", s.id, "peer", n.nameOf(from))
	}
}

// examine examines a proposal in the background, at most a few at once:
// it is accepted (the session's lifecycle then says so) or declined.
func (n *Node) examine(from peer.ID, c *nodepb.Control, p *nodepb.Propose) {
	select {
	case n.proposals <- struct{}{}:
		n.examining.Go(func() {
			defer func() { <-n.proposals }()
			defer func() {
				// Examining a proposal runs the family's checks on the
				// peer's spec: a panic in them declines it.
				if n.recoverHandler(recover(), "examining a proposal", from) {
					n.decline(from, c.SessionId, "internal error in "+n.cfg.Node.Name+" examining the proposal")
				}
			}()
			n.handlePropose(from, c.SessionId, p)
		})
	default:
		n.metrics.fail("rejected")
		n.log.Warn("too many proposals being examined; declining one", "peer", n.nameOf(from), "session", c.SessionId)
		n.decline(from, c.SessionId, n.cfg.Node.Name+" is busy examining other proposals; try again")
	}
}

// decline sends a Decline of session id to peer to, waiting at most
// sendTimeout.
func (n *Node) decline(to peer.ID, id, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	n.sendControl(ctx, to, id, &nodepb.Control{Body: &nodepb.Control_Decline{Decline: &nodepb.Decline{Reason: reason}}})
}

// answerEnded answers a control frame for a session that is no longer
// active here, from its record (lifecycle.AnswerEnded): an organization
// that missed how the session ended — an Abort sent while its proposal was
// still being examined, a lost Complete, a restart of this daemon — learns
// it from the answer to its next frame. Only the session's organizations
// are answered, and never an ending with an ending.
func (n *Node) answerEnded(from peer.ID, c *nodepb.Control) {
	rec, err := n.store.get(c.SessionId)
	if err != nil || !slices.Contains(rec.Peers, from.String()) {
		n.metrics.fail("unknown_session")
		n.log.Debug("control frame for a session that is not active here", "peer", n.nameOf(from), "session", c.SessionId)
		return
	}
	msg, ok := controlMsg(c, 1, 0)
	if !ok {
		return
	}
	st := lifecycle.Status{Reason: rec.Session.Reason}
	switch rec.Session.State {
	case stateCompleted:
		st.Phase = lifecycle.Completed
	case stateAborted:
		st.Phase = lifecycle.Aborted
	}
	reply, ok := lifecycle.AnswerEnded(st, rec.Session.Local, msg)
	if !ok {
		return
	}
	frame := &nodepb.Control{Body: &nodepb.Control_Complete{Complete: &nodepb.Complete{}}}
	if reply.Kind == lifecycle.Abort {
		frame = &nodepb.Control{Body: &nodepb.Control_Abort{Abort: &nodepb.Abort{Reason: reply.Reason}}}
	}
	select {
	case n.proposals <- struct{}{}:
		go func() {
			defer func() { <-n.proposals }()
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			defer cancel()
			n.sendControl(ctx, from, c.SessionId, frame)
		}()
	default:
	}
}

// maxReason bounds the length of a decline or abort reason taken from the
// network.
const maxReason = 512

// sanitizeReason bounds a reason from the network and strips control
// characters, since it is logged, stored and relayed.
func sanitizeReason(r string) string {
	r = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) {
			return ' '
		}
		return c
	}, r)
	if len(r) > maxReason {
		r = r[:maxReason] + "…"
	}
	return r
}

// handlePropose answers a proposal: it checks the spec, this node's policy and
// local data, and accepts (registering the session) or declines with a reason.
// A proposal repeated by its initiator (it resends to participants that have
// not answered) is accepted again without a second registration.
func (n *Node) handlePropose(from peer.ID, id string, p *nodepb.Propose) {
	if n.store.exists(id) && n.lookup(id) == nil {
		// A proposal of a session that has ended here (a late resend):
		// its record answers.
		n.answerEnded(from, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Propose{Propose: p}})
		return
	}
	s, err := n.admitProposal(from, id, p.Spec)
	if err != nil {
		n.log.Info("declined a session", "session", id, "initiator", n.nameOf(from), "reason", err)
		n.decline(from, id, err.Error())
		return
	}
	// The session's lifecycle sends the Accept, and repeats it until the
	// session starts.
	n.log.Info("accepted a session", "session", id, "protocol", s.fam.Name(), "initiator", n.nameOf(from), "parties", fmt.Sprint(s.mine))
}

// admitProposal validates a proposal and, when this node takes part, registers
// the session.
func (n *Node) admitProposal(from peer.ID, id string, specText []byte) (*session, error) {
	spec, err := parseProposedSpec(specText)
	if err != nil {
		return nil, err
	}
	// Organizations are compared as strings (Registry.Check's one
	// organization per party of a role, its separations; the parties this
	// node plays), so each must be its peer ID's one canonical spelling:
	// peer.Decode also takes a CID's, and an initiator could otherwise give
	// one organization two roles under two spellings.
	for _, role := range sortedKeys(spec.Roles.Roles) {
		for i, org := range spec.Roles.Roles[role] {
			pid, err := peer.Decode(org)
			if err != nil {
				return nil, fmt.Errorf("roles.%s[%d]: %q is not a peer ID", role, i, org)
			}
			if pid.String() != org {
				return nil, fmt.Errorf("roles.%s[%d]: %q is not written as a peer ID is in a proposal (%s)", role, i, org, pid)
			}
			if _, known := n.names[pid]; !known {
				return nil, fmt.Errorf("roles.%s[%d]: peer %s is not in %s's address book", role, i, org, n.cfg.Node.Name)
			}
		}
	}
	f, params, err := n.reg.Check(spec)
	if err != nil {
		// A proposal names organizations by peer ID; the operator who reads
		// the decline knows them by address-book name.
		var sep *protocol.SeparationError
		if errors.As(err, &sep) {
			if pid, perr := peer.Decode(sep.Org); perr == nil {
				sep.Org = n.nameOf(pid)
			}
		}
		return nil, err
	}
	self := n.host.ID().String()
	mine := spec.Roles.PartiesOf(self)
	if len(mine) == 0 {
		return nil, fmt.Errorf("%s plays no role in this session", n.cfg.Node.Name)
	}
	local, err := n.cfg.admit(f, params, n.nameOf(from), false, distinctRoles(mine))
	if err != nil {
		return nil, err
	}
	s, err := n.newSession(id, f, params, specText, spec.Roles, from, local)
	if err != nil {
		return nil, err
	}
	if err := n.joinTopic(s); err != nil {
		return nil, err
	}
	if err := n.register(s); err != nil {
		if s.topic != nil {
			s.topic.Close()
		}
		return nil, err
	}
	return s, nil
}

func distinctRoles(parties []protocol.Party) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range parties {
		if !seen[p.Role] {
			seen[p.Role] = true
			out = append(out, p.Role)
		}
	}
	return out
}

// StartSession validates a spec written by this node's operator, resolves its
// address-book names and proposes it. It returns the new session's ID. Errors
// name the spec key at fault; nothing is sent when the spec is bad.
func (n *Node) StartSession(specText []byte) (string, error) {
	spec, err := protocol.ParseSpec("spec", specText)
	if err != nil {
		return "", err
	}
	if len(spec.Simulation) > 0 {
		n.log.Debug("ignoring the spec's [simulation] table in a real session")
	}
	f, params, err := n.reg.Check(spec)
	if err != nil {
		return "", err
	}
	byID := protocol.Assignment{Roles: map[string][]string{}}
	for _, role := range sortedKeys(spec.Roles.Roles) {
		for i, name := range spec.Roles.Roles[role] {
			id, ok := n.ids[name]
			if !ok {
				return "", fmt.Errorf("roles.%s[%d]: %q is neither this node (%s) nor in its address book", role, i, name, n.cfg.Node.Name)
			}
			byID.Roles[role] = append(byID.Roles[role], id.String())
		}
	}
	self := n.host.ID()
	local, err := n.cfg.admit(f, params, n.cfg.Node.Name, true, distinctRoles(byID.PartiesOf(self.String())))
	if err != nil {
		return "", err
	}
	proposed := &protocol.Spec{Protocol: spec.Protocol, Roles: byID, Params: spec.Params}
	text, err := proposed.Encode()
	if err != nil {
		return "", err
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing a session ID: %w", err)
	}
	id := hex.EncodeToString(b[:])
	s, err := n.newSession(id, f, params, text, byID, self, local)
	if err != nil {
		return "", err
	}
	if err := n.joinTopic(s); err != nil {
		return "", err
	}
	if err := n.register(s); err != nil {
		if s.topic != nil {
			s.topic.Close()
		}
		return "", err
	}
	n.log.Info("proposed a session", "session", id, "protocol", f.Name(), "organizations", len(byID.Orgs()))
	return id, nil
}

// CancelSession aborts an active session everywhere.
func (n *Node) CancelSession(id string) error {
	s := n.lookup(id)
	if s == nil {
		if _, err := n.store.get(id); err != nil {
			return fmt.Errorf("no session %s on %s", id, n.cfg.Node.Name)
		}
		return errors.New("the session has already ended")
	}
	s.requestAbort(fmt.Sprintf("cancelled by the operator of %s", n.cfg.Node.Name))
	return nil
}

// joinTopic subscribes this node to the session's gossipsub topic when it
// plays a party of a family that publishes (protocol.TopicUser). Only the session's organizations may publish on it, and only
// as parties they play.
func (n *Node) joinTopic(s *session) error {
	if tu, ok := s.fam.(protocol.TopicUser); len(s.mine) == 0 || !ok || !tu.UsesTopic() {
		return nil
	}
	var allowed []peer.ID
	for _, ids := range s.orgs {
		for _, id := range ids {
			if !slices.Contains(allowed, id) {
				allowed = append(allowed, id)
			}
		}
	}
	validate := func(from peer.ID, data []byte) (err error) {
		defer func() {
			if n.recoverHandler(recover(), "validating a topic message", from) {
				err = errors.New("internal error validating the message")
			}
		}()
		_, err = s.decodeTopicFrame(from, data)
		return err
	}
	handler := func(from peer.ID, data []byte) {
		defer func() { n.recoverHandler(recover(), "a topic message", from) }()
		n.metrics.countTopic(true, len(data))
		m, err := s.decodeTopicFrame(from, data)
		if err != nil {
			return
		}
		for _, q := range s.mine {
			if q != m.From {
				c := m
				c.To = q
				s.deliver(c, false)
			}
		}
	}
	t, err := n.gossip.Join(topicName(s.initiator, s.id), allowed, validate, handler)
	if err != nil {
		return fmt.Errorf("joining the session topic: %w", err)
	}
	s.topic = t
	return nil
}

// decodeTopicFrame checks a topic message: this session's, from a party its
// author plays, to nobody in particular.
func (s *session) decodeTopicFrame(from peer.ID, data []byte) (protocol.Message, error) {
	f, err := decodeRoleFrame(data)
	if err != nil {
		return protocol.Message{}, err
	}
	if string(f.SessionID) != s.id || len(f.ToRole) != 0 {
		return protocol.Message{}, errors.New("topic frame of another session or addressed to a party")
	}
	p, org, ok := s.party(f.FromRole, f.FromIndex)
	if !ok || org != from {
		return protocol.Message{}, fmt.Errorf("topic frame claims to come from %s[%d], which its author does not play", f.FromRole, f.FromIndex)
	}
	return protocol.Message{From: p, Topic: true, Body: f.Body}, nil
}

// rejectRoleFrame counts and logs a role frame that roleStream.decode does
// not deliver: decodeErr if it did not decode; otherwise s is its session
// (nil if not active here), and why it is refused is worked out again.
func (n *Node) rejectRoleFrame(family string, from peer.ID, f *roleFrameView, s *session, decodeErr error) {
	switch {
	case decodeErr != nil:
		n.metrics.fail("decode")
		n.log.Warn("rejected a role frame", "peer", n.nameOf(from), "err", decodeErr)
		return
	case s == nil:
		n.metrics.fail("unknown_session")
		n.log.Debug("role frame for a session that is not active here", "peer", n.nameOf(from), "session", string(f.SessionID))
		return
	}
	_, fromOrg, fromOK := s.party(f.FromRole, f.FromIndex)
	_, toOrg, toOK := s.party(f.ToRole, f.ToIndex)
	switch {
	case s.family != family:
		n.log.Warn("rejected a role frame sent on another protocol's stream", "peer", n.nameOf(from), "session", s.id, "stream", family)
	case !fromOK || fromOrg != from:
		n.log.Warn("rejected a role frame whose sender does not play the party it claims", "peer", n.nameOf(from), "session", s.id,
			"claimed", fmt.Sprintf("%s[%d]", f.FromRole, f.FromIndex))
	case !toOK || toOrg != s.self:
		n.log.Warn("rejected a role frame for a party this node does not play", "peer", n.nameOf(from), "session", s.id,
			"to", fmt.Sprintf("%s[%d]", f.ToRole, f.ToIndex))
	}
	n.metrics.fail("rejected")
}

// deliver hands a received message to the session. While the roles of a
// family with small messages (protocol.SmallMessages) run and nobody is
// driving them, the calling goroutine (the sender's stream reader) steps the
// message in place: on a busy session that saves a hand-over to main for
// every message — a tenth of a SAMBA data owner's CPU went into that
// hand-over. Otherwise the message is queued for main; it never waits for
// the session's lock, so a reader is never stuck behind a role's sends.
// A session that stays too far behind is aborted rather than left to grow:
// a queued message counts against the session's and its sender's buffer
// caps (reserve), and one over a cap is dropped and aborts the session.
// borrowed says that m.Body is lent for the call (it lies in the stream
// reader's buffer): stepped in place, it is the role's until Step returns,
// which is all that family promises to need; queued, it is copied first.
func (s *session) deliver(m protocol.Message, borrowed bool) {
	if s.run.TryLock() {
		if s.inPlace && s.queued.Load() == 0 {
			s.stepInPlace(m)
			s.run.Unlock()
			return
		}
		s.run.Unlock()
	}
	from, _ := s.orgOf(m.From)
	if ok, over, reason := s.reserve(from, len(m.Body)); !ok {
		if over {
			s.dropOverflow(from, reason)
		}
		return
	}
	if borrowed {
		m.Body = bytes.Clone(m.Body)
	}
	s.queued.Add(1)
	select {
	case s.inbox <- m:
		return
	default:
	}
	t := time.NewTimer(inboxTimeout)
	defer t.Stop()
	select {
	case s.inbox <- m:
	case <-s.done:
		s.queued.Add(-1)
		s.release(from, len(m.Body))
	case <-t.C:
		s.queued.Add(-1)
		s.release(from, len(m.Body))
		go s.requestAbort(fmt.Sprintf("%s could not keep up with the messages of %s", s.n.cfg.Node.Name, m.From))
	}
}

// decodeControl decodes and checks the shape of a control frame from the
// network: a well-formed session ID and a known body.
func decodeControl(frame []byte) (*nodepb.Control, error) {
	var c nodepb.Control
	if err := proto.Unmarshal(frame, &c); err != nil {
		return nil, fmt.Errorf("malformed control frame: %w", err)
	}
	if !validSessionID(c.SessionId) {
		return nil, fmt.Errorf("control frame with a malformed session ID %.40q", c.SessionId)
	}
	if c.Body == nil {
		return nil, fmt.Errorf("control frame of session %s has no known body", c.SessionId)
	}
	if p, ok := c.Body.(*nodepb.Control_Propose); ok && (p.Propose == nil || len(p.Propose.Spec) > protocol.MaxSpecSize) {
		return nil, fmt.Errorf("proposal of session %s has no spec or one over %d bytes", c.SessionId, protocol.MaxSpecSize)
	}
	return &c, nil
}

// maxRoleName bounds the role names a frame may carry.
const maxRoleName = 64

// decodeRoleFrame decodes and checks the shape of a role frame from the network.
func decodeRoleFrame(frame []byte) (roleFrameView, error) {
	var f roleFrameView
	if err := parseRoleFrame(frame, &f); err != nil {
		return f, fmt.Errorf("malformed role frame: %w", err)
	}
	if !validSessionID(f.SessionID) {
		return f, fmt.Errorf("role frame with a malformed session ID %.40q", f.SessionID)
	}
	if len(f.FromRole) == 0 || len(f.FromRole) > maxRoleName || len(f.ToRole) > maxRoleName {
		return f, fmt.Errorf("role frame of session %s with a missing or overlong role name", f.SessionID)
	}
	return f, nil
}

// parseProposedSpec parses the spec of a proposal from the network.
func parseProposedSpec(text []byte) (*protocol.Spec, error) {
	return protocol.ParseSpec("proposed spec", text)
}

// topicName is the gossipsub topic of a session. It is derived from the
// initiator and the session ID by a hash, because topic subscriptions are
// announced to every connected peer: the name must not reveal the ID, which
// a peer outside the session could otherwise use to squat it.
func topicName(initiator peer.ID, id string) string {
	h := sha256.Sum256([]byte("bandit-session-topic\x00" + string(initiator) + "\x00" + id))
	return "/bandit/session/" + hex.EncodeToString(h[:16])
}
