package node

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
)

// pingAt is ping as a daemon of another version would speak it.
type pingAt struct {
	ping.Family
	version string
}

func (f pingAt) Info() protocol.Info {
	info := f.Family.Info()
	info.WireVersions = []string{f.version}
	return info
}

// pingBumped is ping as a later build speaks it: its messages are at
// version current, and it still speaks previous (the messages of ping
// itself).
type pingBumped struct {
	ping.Family
	current, previous string
}

func (f pingBumped) Info() protocol.Info {
	info := f.Family.Info()
	info.WireVersions = []string{f.current, f.previous}
	info.AtWireVersion = func(v string) protocol.Family {
		if v == f.previous {
			return pingAt{ping.Family{}, f.previous}
		}
		return f
	}
	return info
}

// Two daemons that share no version of a family's messages do not start a
// session: the participant declines, and the initiator's reason names both
// versions and who must upgrade.
func TestMismatchedWireVersionsAreDeclinedNamingBoth(t *testing.T) {
	for _, c := range []struct {
		name        string
		initiator   protocol.Family
		participant protocol.Family
		want        string
	}{
		{"participant older", pingAt{ping.Family{}, "2.0.0"}, nil,
			"node2 speaks ping wire 1.0.0, this proposal needs 2.0.0: upgrade node2"},
		{"participant newer", nil, pingAt{ping.Family{}, "2.0.0"},
			"node2 speaks ping wire 2.0.0, this proposal needs 1.0.0: upgrade node1"},
		{"participant two versions newer", nil, pingBumped{ping.Family{}, "3.0.0", "2.0.0"},
			"node2 speaks ping wire 3.0.0 and 2.0.0, this proposal needs 1.0.0: upgrade node1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := startNetworkWith(t, 2, nil, func(i int) []protocol.Family {
				if f := []protocol.Family{c.initiator, c.participant}[i]; f != nil {
					return []protocol.Family{f}
				}
				return nil
			})
			id, err := nodes[0].StartSession(pingSpec(3, "node1", "node2"))
			if err != nil {
				t.Fatal(err)
			}
			got := waitEnded(t, nodes[0], id, 30*time.Second)
			if got.State != stateAborted || !strings.Contains(got.Reason, c.want) {
				t.Errorf("%s: %q, want aborted with %q", got.State, got.Reason, c.want)
			}
		})
	}
}

// A build whose family's wire version is bumped still runs sessions with a
// build of the previous version, in both directions, on the version both
// speak; two bumped builds run on the new one.
func TestSessionsRunOnTheWireVersionBothSpeak(t *testing.T) {
	bumped := pingBumped{ping.Family{}, "2.0.0", "1.0.0"}
	for _, c := range []struct {
		name                   string
		initiator, participant protocol.Family
		want                   string // the role protocol the session runs on
	}{
		{"bumped participant", nil, bumped, "/bandit/ping/1.0.0"},
		{"bumped initiator", bumped, nil, "/bandit/ping/1.0.0"},
		{"both bumped", bumped, bumped, "/bandit/ping/2.0.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := startNetworkWith(t, 2, nil, func(i int) []protocol.Family {
				if f := []protocol.Family{c.initiator, c.participant}[i]; f != nil {
					return []protocol.Family{f}
				}
				return nil
			})
			// The initiator learns the versions its peer speaks from
			// libp2p identify, which follows the connection.
			ps := nodes[0].host.LibP2P().Peerstore()
			testutil.WaitFor(t, 20*time.Second, "node2's protocols identified", func() bool {
				protos, err := ps.GetProtocols(nodes[1].ID())
				return err == nil && len(protos) > 0
			})
			id, err := nodes[0].StartSession(pingSpec(3, "node1", "node2"))
			if err != nil {
				t.Fatal(err)
			}
			for _, tn := range nodes {
				got := waitEnded(t, tn, id, 30*time.Second)
				if got.State != stateCompleted {
					t.Fatalf("%s: %s: %q, want completed", tn.cfg.Node.Name, got.State, got.Reason)
				}
				if want := strings.TrimPrefix(c.want, "/bandit/ping/"); got.Wire != want {
					t.Errorf("%s: the record says wire %q, want %q", tn.cfg.Node.Name, got.Wire, want)
				}
			}
			for _, tn := range nodes {
				for proto, m := range tn.rt.RoleMessengers() {
					sent := m.Stats().FramesSent
					if string(proto) == c.want && sent == 0 {
						t.Errorf("%s sent no role frames on %s", tn.cfg.Node.Name, proto)
					}
					if string(proto) != c.want && sent != 0 {
						t.Errorf("%s sent %d role frames on %s, want all on %s", tn.cfg.Node.Name, sent, proto, c.want)
					}
				}
			}
		})
	}
}
