package sessions

import (
	"fmt"
	"strings"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	libp2pprotocol "github.com/libp2p/go-libp2p/core/protocol"
)

// controlWireVersions are the versions of the session-control protocol
// this build accepts in a proposal, the current one first.
var controlWireVersions = [...]string{controlWireVersion}

// versionsOf is what this node says of its versions in a proposal or an
// accept of a session of family f (at the version the session runs on).
func (n *Runtime) versionsOf(f protocol.Family) *nodepb.Versions {
	speaks := []string{protocol.WireVersion(f)}
	if base, err := n.reg.Lookup(f.Name()); err == nil {
		speaks = protocol.WireVersions(base)
	}
	return &nodepb.Versions{
		Node:         n.version,
		Session:      controlWireVersion,
		Family:       protocol.WireVersion(f),
		FamilySpeaks: speaks,
	}
}

// chooseWireVersion returns the family f at the newest version of its role
// messages that this node and every one of others speak, as far as their
// announced protocols tell (libp2p identify lists the role protocols a peer
// serves, one per version it speaks). A peer not yet identified counts as
// speaking any; with no common version it returns f at its current
// version, which the participants that do not speak it decline, naming
// both versions.
func (n *Runtime) chooseWireVersion(f protocol.Family, others []peer.ID) protocol.Family {
	ps := n.host.LibP2P().Peerstore()
	for _, v := range protocol.WireVersions(f) {
		fv, ok := protocol.AtWireVersion(f, v)
		if !ok {
			continue
		}
		id := RoleProtocol(fv)
		all := true
		for _, p := range others {
			known, err := ps.GetProtocols(p)
			if err != nil || len(known) == 0 {
				continue // not identified yet: the proposal tells
			}
			if !containsProtocol(known, id) {
				all = false
				break
			}
		}
		if all {
			return fv
		}
	}
	return f
}

// behindOn says which of others speak no newer version of f's messages
// than the one the session must run on — "node5 speaks samba only up to
// wire 1.1.0" — from their announced protocols.
func (l *liveConfig) behindOn(ps peerstore.Peerstore, f protocol.Family, others []peer.ID) string {
	id := RoleProtocol(f)
	var names []string
	for _, p := range others {
		if known, err := ps.GetProtocols(p); err == nil && len(known) > 0 && !containsProtocol(known, id) {
			names = append(names, l.nameOf(p))
		}
	}
	verb := "speaks"
	if len(names) != 1 {
		verb = "speak"
	}
	return fmt.Sprintf("%s %s no %s wire %s", strings.Join(names, ", "), verb, f.Name(), protocol.WireVersion(f))
}

func containsProtocol(list []libp2pprotocol.ID, id libp2pprotocol.ID) bool {
	for _, p := range list {
		if p == id {
			return true
		}
	}
	return false
}

// admitVersions checks the versions a proposal from initiator needs
// against those this node speaks, and returns family base at the version
// the session runs on. A proposal without versions (from a daemon older
// than them) runs on the current ones; a mismatch there fails when the
// streams are negotiated. The error is written for the initiator's
// operator: it names both versions and who must upgrade.
func (n *Runtime) admitVersions(self, initiator string, base protocol.Family, v *nodepb.Versions) (protocol.Family, error) {
	if v == nil {
		return base, nil
	}
	if v.Session != "" && !containsString(controlWireVersions[:], v.Session) {
		return nil, versionError(self, initiator, "session", controlWireVersions[:], v.Session, v.Node, n.version)
	}
	if v.Family == "" {
		return base, nil
	}
	f, ok := protocol.AtWireVersion(base, v.Family)
	if !ok {
		return nil, versionError(self, initiator, base.Name(), protocol.WireVersions(base), v.Family, v.Node, n.version)
	}
	return f, nil
}

// versionError says that participant self speaks what wire versions of
// protocol what, that the proposal of initiator (running build
// initiatorBuild) needs version needed, and who must upgrade: self if
// needed is newer than all it speaks, the initiator otherwise.
func versionError(self, initiator, what string, speaks []string, needed, initiatorBuild, selfBuild string) error {
	upgrade := self
	if protocol.CompareVersions(needed, speaks[0]) < 0 {
		upgrade = initiator
	}
	builds := ""
	if initiatorBuild != "" {
		builds = fmt.Sprintf(" (%s runs bandit-node %s, %s runs %s)", self, selfBuild, initiator, initiatorBuild)
	}
	return fmt.Errorf("%s speaks %s wire %s, this proposal needs %s: upgrade %s%s",
		self, what, strings.Join(speaks, " and "), needed, upgrade, builds)
}

// acceptVersionsMismatch checks the versions of an Accept from participant
// name against those session s runs on, and returns why the two cannot
// run it together, or "" if they can (or the participant, older than
// versions in an Accept, did not say).
func acceptVersionsMismatch(s *session, name string, v *nodepb.Versions) string {
	if v == nil || v.Family == "" {
		return ""
	}
	if want := protocol.WireVersion(s.fam); v.Family != want {
		return fmt.Sprintf("%s would run %s wire %s, this session runs %s: upgrade the older of %s and %s",
			name, s.fam.Name(), v.Family, want, name, s.cfg.Node.Name)
	}
	return ""
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
