package sessions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/lifecycle"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/drive"
	"github.com/libp2p/go-libp2p/core/peer"
)

// register adds s to the active set and starts its goroutine, unless the node
// is closing or at session.max_active.
func (n *Runtime) register(s *session) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closing {
		return fmt.Errorf("%s is shutting down", n.config().Node.Name)
	}
	if _, dup := n.sessions[s.id]; dup || n.store.Exists(s.id) {
		return fmt.Errorf("session ID %s is already used on %s", s.id, n.config().Node.Name)
	}
	if len(n.sessions) >= s.cfg.Session.MaxActive {
		return fmt.Errorf("%s already runs %d sessions (session.max_active)", s.cfg.Node.Name, len(n.sessions))
	}
	if err := n.store.Put(&store.Record{Session: s.state.rec.Session}); err != nil {
		return localDecline(s.cfg.Node.Name, "a local storage failure", err)
	}
	n.sessions[s.id] = s
	n.metrics.Active.Set(float64(len(n.sessions)))
	n.wg.Add(1)
	go s.main()
	return nil
}

// StartSession validates a spec written by this node's operator, resolves its
// address-book names and proposes it. It returns the new session's ID. Errors
// name the spec key at fault; nothing is sent when the spec is bad. The spec
// is parsed and checked here, once; the proposal and the session carry the
// result.
func (n *Runtime) StartSession(specText []byte) (string, error) {
	spec, err := n.parseSpec("spec", specText)
	if err != nil {
		return "", err
	}
	checked, err := n.reg.CheckSpec(spec)
	if err != nil {
		return "", err
	}
	return n.StartChecked(checked, "")
}

// StartChecked proposes a spec parsed and checked once, by StartSession or
// at the config's load, as a run of the standing session name ("" for a
// session started by hand): the proposal and the records carry the name.
func (n *Runtime) StartChecked(checked *protocol.CheckedSpec, name string) (string, error) {
	spec, f, params := checked.Spec, checked.Family, checked.Params
	if len(spec.Simulation) > 0 {
		n.log.Debug("ignoring the spec's [simulation] table in a real session")
	}
	// One view of the config and the address book, which a reload may
	// replace meanwhile, serves the whole proposal and the session.
	live := n.live.Load()
	byID := protocol.Assignment{Roles: map[string][]string{}}
	for _, role := range slices.Sorted(maps.Keys(spec.Roles.Roles)) {
		for i, name := range spec.Roles.Roles[role] {
			id, ok := live.ids[name]
			if !ok {
				return "", &StartError{Code: "spec.unknown_organization", Field: fmt.Sprintf("roles.%s[%d]", role, i),
					Err: fmt.Errorf("roles.%s[%d]: %q is neither this node (%s) nor in its address book", role, i, name, n.config().Node.Name)}
			}
			byID.Roles[role] = append(byID.Roles[role], id.String())
		}
	}
	self := n.host.ID()
	myRoles := distinctRoles(byID.PartiesOf(self.String()))
	local, err := live.cfg.Admit(f, params, live.cfg.Node.Name, true, myRoles)
	if err != nil {
		return "", &StartError{Code: "policy.declined", Err: err}
	}
	// The initiator's own environments are checked as a participant's
	// are: nothing is proposed that this node could not play.
	if err := live.cfg.CheckEnvironments(f, params, byID, myRoles); err != nil {
		return "", &StartError{Code: "environment.unavailable", Err: err}
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
	// The session runs on the newest version of the family's messages
	// that every organization speaks.
	var others []peer.ID
	for _, o := range byID.Orgs() {
		if pid, err := peer.Decode(o); err == nil && pid != self {
			others = append(others, pid)
		}
	}
	if fv := n.chooseWireVersion(f, others); protocol.WireVersion(fv) != protocol.WireVersion(f) {
		// A spec the current version runs may need more than the version
		// every organization speaks (a parameter added since): it is
		// refused here, naming who holds the session back, rather than by
		// every role once proposed.
		if _, err := fv.ParseParams(spec.Params); err != nil {
			return "", fmt.Errorf("%s: %w", live.behindOn(n.host.LibP2P().Peerstore(), f, others), protocol.AsKeyError(err))
		}
		f = fv
	}
	s, err := n.newSession(live, id, f, params, text, byID, self, local)
	if err != nil {
		return "", err
	}
	s.setName(name)
	if err := n.joinTopic(s); err != nil {
		return "", err
	}
	if err := n.register(s); err != nil {
		if s.topic != nil {
			s.topic.Close()
		}
		return "", &StartError{Code: "node.unavailable", Err: err}
	}
	n.log.Info("proposed a session", "session", id, "name", name, "protocol", f.Name(), "organizations", len(byID.Orgs()))
	return id, nil
}

// CancelSession aborts an active session everywhere.
func (n *Runtime) CancelSession(id string) error {
	s := n.lookup(id)
	if s == nil {
		if _, err := n.store.Get(id); err != nil {
			return fmt.Errorf("no session %s on %s", id, n.config().Node.Name)
		}
		return errors.New("the session has already ended")
	}
	s.requestAbort(fmt.Sprintf("cancelled by the operator of %s", n.config().Node.Name))
	return nil
}

// newSession builds, under the config and address book live, the session of a proposal that this node accepted or
// made. The assignment is resolved here, once, into peer IDs (the address
// book's copies) and the lifecycle's organizations.
func (n *Runtime) newSession(live *liveConfig, id string, fam protocol.Family, params any, specText []byte, assign protocol.Assignment,
	initiator peer.ID, local map[string]any) (*session, error) {
	self := n.host.ID()
	n.slogs.Track(id)
	s := &session{n: n, live: live, cfg: live.cfg, id: id, fam: fam, family: fam.Name(), caps: drive.CapsOf(fam), params: params, specText: specText, assign: assign,
		initiator: initiator, initiated: initiator == self, self: self,
		mine: assign.PartiesOf(self.String()), local: local,
		ctrl: make(chan ctrlEvent, ctrlSize), inbox: make(chan protocol.Message, inboxSize), done: make(chan struct{}),
		kick:     make(chan struct{}, 1),
		orgIndex: map[peer.ID]lifecycle.Org{}}
	s.run.reports, s.run.myProgress = map[protocol.Party][]byte{}, map[protocol.Party]protocol.Progress{}
	s.life.senders = map[peer.ID]*controlSender{}
	s.run.transport = &sessionTransport{s: s, messenger: n.roles[RoleProtocol(fam)]}
	// bookCopy returns the node's copy of id: its own, or the address
	// book's, which the messenger also hands over with every frame, so
	// that comparing the two (every frame's sender, every message's
	// recipient) compares pointers.
	bookCopy := func(id peer.ID) peer.ID {
		if id == self {
			return self
		}
		if book, ok := live.ids[live.names[id]]; ok && book == id {
			return book
		}
		return id
	}
	member := func(id peer.ID) {
		if _, ok := s.orgIndex[id]; !ok {
			s.orgIndex[id] = lifecycle.Org(len(s.members))
			s.members = append(s.members, id)
		}
	}
	member(bookCopy(initiator))
	for _, role := range slices.Sorted(maps.Keys(assign.Roles)) {
		ids := make([]peer.ID, len(assign.Roles[role]))
		for i, org := range assign.Roles[role] {
			pid, err := peer.Decode(org)
			if err != nil {
				return nil, fmt.Errorf("roles.%s[%d]: %q is not a peer ID: %w", role, i, org, err)
			}
			ids[i] = bookCopy(pid)
			member(ids[i])
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
		idx := make([]lifecycle.Org, len(ids))
		for i, id := range ids {
			idx[i] = s.orgIndex[id]
		}
		s.partyOrgs = append(s.partyOrgs, idx)
	}
	s.heard = make([]atomic.Bool, len(s.members))
	for i, p := range s.mine {
		// The session's own copy of the role name: a frame's party carries
		// it too (party), so comparing the two compares a pointer.
		s.mine[i].Role = s.roleNames[roleIndex(s.roleNames, p.Role)]
	}
	s.run.parties, s.life.told = make([]*drive.Party, len(s.mine)), make([]bool, len(s.mine))
	s.run.envs = make([]*envSlot, len(s.mine))
	s.envCtx, s.envCancel = context.WithCancel(context.Background())
	for _, id := range s.members {
		if id != self {
			s.remotes = append(s.remotes, id)
		}
	}
	names := map[string][]string{}
	for r, role := range s.roleNames {
		for _, id := range s.orgs[r] {
			names[role] = append(names[role], live.nameOf(id))
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
	s.state.rec = &store.Record{Peers: peers, Session: apitype.Session{ID: id, Protocol: fam.Name(), Wire: protocol.WireVersion(fam), Initiator: live.nameOf(initiator),
		Local: s.initiated, Roles: names, Parties: parties, State: stateProposed,
		Created: time.Now().UTC(), Spec: string(specText)}}
	lc, err := lifecycle.New(s.lifecycleConfig())
	if err != nil {
		return nil, err
	}
	s.life.lc = lc
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

// StartError is why StartSession did not propose a session, with the
// class the control API answers it with; its message is Err's.
type StartError struct {
	// Code is the class: spec.unknown_organization, policy.declined,
	// environment.unavailable or node.unavailable.
	Code string
	// Field is the spec's key at fault, "" if none.
	Field string
	Err   error
}

func (e *StartError) Error() string { return e.Err.Error() }
func (e *StartError) Unwrap() error { return e.Err }
