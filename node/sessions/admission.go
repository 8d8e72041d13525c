package sessions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
)

// examine examines a proposal in the background, at most a few at once:
// it is accepted (the session's lifecycle then says so) or declined.
func (n *Runtime) examine(from peer.ID, c *nodepb.Control, p *nodepb.Propose) {
	key := examKey{session: c.SessionId, from: from}
	if !n.startExam(key) {
		// The initiator resent its proposal (it does every few seconds
		// until answered) while this node still examines the first copy:
		// a slow check, a loaded machine. That examination answers both;
		// a second one would find the ID taken by the first and decline
		// the session.
		n.log.Debug("the initiator repeated a proposal still being examined", "session", c.SessionId, "initiator", n.nameOf(from))
		return
	}
	select {
	case n.proposals <- struct{}{}:
		n.examining.Go(func() {
			defer func() { <-n.proposals }()
			defer n.endExam(key)
			defer func() {
				// Examining a proposal runs the family's checks on the
				// peer's spec: a panic in them declines it.
				if n.recoverHandler(recover(), "examining a proposal", from) {
					n.decline(from, c.SessionId, "internal error in "+n.config().Node.Name+" examining the proposal")
				}
			}()
			n.handlePropose(from, c.SessionId, p)
		})
	default:
		n.endExam(key)
		n.metrics.Fail("rejected")
		n.log.Warn("too many proposals being examined; declining one", "peer", n.nameOf(from), "session", c.SessionId)
		n.decline(from, c.SessionId, n.config().Node.Name+" is busy examining other proposals; try again")
	}
}

// examKey names a proposal being examined: its session and initiator.
type examKey struct {
	session string
	from    peer.ID
}

// startExam marks the proposal of key as being examined, unless it already
// is: it reports whether the caller is to examine it.
func (n *Runtime) startExam(key examKey) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, busy := n.inExam[key]; busy {
		return false
	}
	n.inExam[key] = struct{}{}
	return true
}

// endExam marks the examination of key's proposal done: a copy that comes
// later is examined (and answered) again.
func (n *Runtime) endExam(key examKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.inExam, key)
}

// decline sends a Decline of session id to peer to, waiting at most
// sendTimeout.
func (n *Runtime) decline(to peer.ID, id, reason string) {
	ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
	defer cancel()
	n.sendControl(ctx, to, id, &nodepb.Control{Body: &nodepb.Control_Decline{Decline: &nodepb.Decline{Reason: reason}}})
}

// handlePropose answers a proposal: it checks the spec, this node's policy and
// local data, and accepts (registering the session) or declines with a reason.
// A proposal repeated by its initiator (it resends to participants that have
// not answered) is accepted again without a second registration.
func (n *Runtime) handlePropose(from peer.ID, id string, p *nodepb.Propose) {
	if n.store.Exists(id) && n.lookup(id) == nil {
		// A proposal of a session that has ended here (a late resend):
		// its record answers.
		n.answerEnded(from, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Propose{Propose: p}})
		return
	}
	s, err := n.admitProposal(from, id, p.Spec, p.Name, p.Versions)
	if err != nil {
		// A decline because this node's own disk failed is this
		// operator's problem, not the proposal's: a warning.
		level := slog.LevelInfo
		if errors.Is(err, store.ErrStorage) {
			level = slog.LevelWarn
		}
		n.log.Log(context.Background(), level, "declined a session", "session", id, "name", p.Name, "initiator", n.nameOf(from), "reason", err)
		n.decline(from, id, publicDecline(err))
		return
	}
	// The session's lifecycle sends the Accept, and repeats it until the
	// session starts.
	n.log.Info("accepted a session", "session", id, "name", p.Name, "protocol", s.fam.Name(), "initiator", n.nameOf(from), "parties", fmt.Sprint(s.mine),
		"figures", config.PolicyFiguresText(s.params)) // what it spends (policy_bounds.go)
}

// admitProposal validates a proposal of the standing session name ("" for
// one started by hand) that needs versions, and, when this node takes
// part, registers the session at those versions.
func (n *Runtime) admitProposal(from peer.ID, id string, specText []byte, name string, versions *nodepb.Versions) (*session, error) {
	spec, err := n.parseSpec("proposed spec", specText)
	if err != nil {
		return nil, err
	}
	// One view of the config and the address book, which a reload may
	// replace meanwhile, serves the whole proposal and the session.
	live := n.live.Load()
	// Organizations are compared as strings (Registry.Check's one
	// organization per party of a role, its separations; the parties this
	// node plays), so each must be its peer ID's one canonical spelling:
	// peer.Decode also takes a CID's, and an initiator could otherwise give
	// one organization two roles under two spellings.
	for _, role := range slices.Sorted(maps.Keys(spec.Roles.Roles)) {
		for i, org := range spec.Roles.Roles[role] {
			pid, err := peer.Decode(org)
			if err != nil {
				return nil, fmt.Errorf("roles.%s[%d]: %q is not a peer ID", role, i, org)
			}
			if pid.String() != org {
				return nil, fmt.Errorf("roles.%s[%d]: %q is not written as a peer ID is in a proposal (%s)", role, i, org, pid)
			}
			if _, known := live.names[pid]; !known {
				return nil, fmt.Errorf("roles.%s[%d]: peer %s is not in %s's address book", role, i, org, live.cfg.Node.Name)
			}
		}
	}
	f, params, err := n.reg.Check(spec)
	if err != nil {
		// A proposal names organizations by peer ID; the operator who reads
		// the decline knows them by address-book name.
		var sep *protocol.SeparationError
		if errors.As(err, &sep) {
			// sep.Org is as the spec spelled it: a peer ID is shown by
			// its address-book name; anything else (a name already)
			// stays as it is, so a decode error here is no error.
			if pid, perr := peer.Decode(sep.Org); perr == nil {
				sep.Org = n.nameOf(pid)
			}
		}
		return nil, err
	}
	// The versions are checked once the spec names a family this node
	// has: the decline then names the family's versions.
	if f, err = n.admitVersions(live.cfg.Node.Name, live.nameOf(from), f, versions); err != nil {
		return nil, err
	}
	self := n.host.ID().String()
	mine := spec.Roles.PartiesOf(self)
	if len(mine) == 0 {
		return nil, fmt.Errorf("%s plays no role in this session", live.cfg.Node.Name)
	}
	local, err := live.cfg.Admit(f, params, live.nameOf(from), false, distinctRoles(mine))
	if err != nil {
		return nil, err
	}
	if err := live.cfg.AdmitName(f, live.nameOf(from), name); err != nil {
		return nil, err
	}
	// A replay file too short or an exec program missing fails the session
	// here, before it starts, not at its first query.
	if err := live.cfg.CheckEnvironments(f, params, spec.Roles, distinctRoles(mine)); err != nil {
		return nil, localDecline(live.cfg.Node.Name, "the environment of one of its roles is not ready", err)
	}
	s, err := n.newSession(live, id, f, params, specText, spec.Roles, from, local)
	if err != nil {
		return nil, localDecline(live.cfg.Node.Name, "it could not set the session up", err)
	}
	s.setName(name)
	if err := n.joinTopic(s); err != nil {
		return nil, localDecline(live.cfg.Node.Name, "it could not join the session's topic", err)
	}
	if err := n.register(s); err != nil {
		if s.topic != nil {
			s.topic.Close()
		}
		return nil, err
	}
	return s, nil
}
