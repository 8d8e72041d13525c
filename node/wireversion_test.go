package node

import (
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

func TestRoleProtocolCarriesTheWireVersion(t *testing.T) {
	for _, c := range []struct {
		f    protocol.Family
		want string
	}{
		{ping.Family{}, "/bandit/ping/1.0.0"},
		{samba.Family{}, "/bandit/samba/1.1.0"},
		{mpccb.Family{}, "/bandit/mpccb/1.1.0"},
		{pingAt{ping.Family{}, "2.0.0"}, "/bandit/ping/2.0.0"},
	} {
		if got := string(RoleProtocol(c.f)); got != c.want {
			t.Errorf("RoleProtocol(%s) = %s, want %s", c.f.Name(), got, c.want)
		}
	}
}

// pingAt is ping as a daemon of another version would speak it.
type pingAt struct {
	ping.Family
	version string
}

func (f pingAt) WireVersion() string { return f.version }

// Two daemons whose role messages differ in version do not run a session
// on messages the other cannot read: the session aborts on both, and the
// reason names the protocol that one of them does not speak.
func TestMismatchedWireVersionsAbortWithTheReason(t *testing.T) {
	nodes := startNetworkWith(t, 2, nil, func(i int) []protocol.Family {
		if i == 1 {
			return []protocol.Family{pingAt{ping.Family{}, "2.0.0"}}
		}
		return nil
	})
	id, err := nodes[0].StartSession(pingSpec(3, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range nodes {
		got := waitEnded(t, tn, id, 30*time.Second)
		if got.State != stateAborted || !strings.Contains(got.Reason, "/bandit/ping/") {
			t.Errorf("%s: %s: %q, want aborted naming the role protocol", tn.cfg.Node.Name, got.State, got.Reason)
		}
	}
}
