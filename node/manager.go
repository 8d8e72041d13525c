package node

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// lookup returns the active session id, or nil.
func (n *Node) lookup(id string) *session {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sessions[id]
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
	n.metrics.Active.Set(float64(len(n.sessions)))
}

// register adds s to the active set and starts its goroutine, unless the node
// is closing or at session.max_active.
func (n *Node) register(s *session) error {
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
	if err := n.store.Put(&store.Record{Session: s.rec.Session}); err != nil {
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
func (n *Node) StartSession(specText []byte) (string, error) {
	spec, err := n.parseSpec("spec", specText)
	if err != nil {
		return "", err
	}
	checked, err := n.reg.CheckSpec(spec)
	if err != nil {
		return "", err
	}
	return n.startChecked(checked, "")
}

// startChecked proposes a spec parsed and checked once, by StartSession or
// at the config's load, as a run of the standing session name ("" for a
// session started by hand): the proposal and the records carry the name.
func (n *Node) startChecked(checked *protocol.CheckedSpec, name string) (string, error) {
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
				return "", fmt.Errorf("roles.%s[%d]: %q is neither this node (%s) nor in its address book", role, i, name, n.config().Node.Name)
			}
			byID.Roles[role] = append(byID.Roles[role], id.String())
		}
	}
	self := n.host.ID()
	myRoles := distinctRoles(byID.PartiesOf(self.String()))
	local, err := live.cfg.Admit(f, params, live.cfg.Node.Name, true, myRoles)
	if err != nil {
		return "", err
	}
	// The initiator's own environments are checked as a participant's
	// are: nothing is proposed that this node could not play.
	if err := live.cfg.CheckEnvironments(f, params, byID, myRoles); err != nil {
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
	// The session runs on the newest version of the family's messages
	// that every organization speaks.
	var others []peer.ID
	for _, o := range byID.Orgs() {
		if pid, err := peer.Decode(o); err == nil && pid != self {
			others = append(others, pid)
		}
	}
	f = n.chooseWireVersion(f, others)
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
		return "", err
	}
	n.log.Info("proposed a session", "session", id, "name", name, "protocol", f.Name(), "organizations", len(byID.Orgs()))
	return id, nil
}

// CancelSession aborts an active session everywhere.
func (n *Node) CancelSession(id string) error {
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

// standingDeps is what the scheduler of standing sessions uses of n.
func (n *Node) standingDeps() standing.Deps {
	return standing.Deps{Log: n.log, Store: n.store, Registry: n.metrics.Registry, Start: n.startChecked,
		Done: func(id string) <-chan struct{} {
			if s := n.lookup(id); s != nil {
				return s.done
			}
			return nil
		},
		Connected: func(name string) bool {
			live := n.live.Load()
			if name == live.cfg.Node.Name {
				return true
			}
			id, ok := live.ids[name]
			return ok && n.host.Connected(id)
		},
		ProposeTimeout: func() time.Duration { return n.config().Session.ProposeTimeout.Duration },
	}
}
