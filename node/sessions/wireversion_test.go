package sessions

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// The checks of a proposal's and an accept's versions, one case each.
func TestVersionChecks(t *testing.T) {
	n := &Runtime{version: "v0.4.0"}
	bumped := pingBumped{ping.Family{}, "2.0.0", "1.0.0"}
	for _, c := range []struct {
		name string
		base protocol.Family
		v    *nodepb.Versions
		want string // the version the session runs on, or the error
	}{
		{"older daemon, no versions", ping.Family{}, nil, "1.0.0"},
		{"no family version", ping.Family{}, &nodepb.Versions{Node: "v0.3.0", Session: "2.0.0"}, "1.0.0"},
		{"current", bumped, &nodepb.Versions{Session: "2.0.0", Family: "2.0.0"}, "2.0.0"},
		{"previous", bumped, &nodepb.Versions{Session: "2.0.0", Family: "1.0.0"}, "1.0.0"},
		{"newer session protocol", ping.Family{}, &nodepb.Versions{Node: "v0.9.0", Session: "2.1.0", Family: "1.0.0"},
			"node2 speaks session wire 2.0.0, this proposal needs 2.1.0: upgrade node2 (node2 runs bandit-node v0.4.0, node1 runs v0.9.0)"},
		{"older session protocol", ping.Family{}, &nodepb.Versions{Node: "v0.1.0", Session: "1.1.0", Family: "1.0.0"},
			"node2 speaks session wire 2.0.0, this proposal needs 1.1.0: upgrade node1"},
		{"newer family", bumped, &nodepb.Versions{Session: "2.0.0", Family: "3.0.0"},
			"node2 speaks ping wire 2.0.0 and 1.0.0, this proposal needs 3.0.0: upgrade node2"},
	} {
		f, err := n.admitVersions("node2", "node1", c.base, c.v)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = protocol.WireVersion(f)
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	s := &session{fam: pingAt{ping.Family{}, "2.0.0"}, cfg: &config.Config{Node: config.NodeConfig{Name: "node1"}}}
	for _, c := range []struct {
		v    *nodepb.Versions
		want string
	}{
		{nil, ""},
		{&nodepb.Versions{Node: "v0.3.0"}, ""},
		{&nodepb.Versions{Family: "2.0.0"}, ""},
		{&nodepb.Versions{Family: "1.0.0"}, "node2 would run ping wire 1.0.0, this session runs 2.0.0"},
	} {
		if got := acceptVersionsMismatch(s, "node2", c.v); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("accept %v: %q, want %q", c.v, got, c.want)
		}
	}
}

func TestRoleProtocolCarriesTheWireVersion(t *testing.T) {
	for _, c := range []struct {
		f    protocol.Family
		want string
	}{
		{ping.Family{}, "/bandit/ping/1.0.0"},
		{samba.Family{}, "/bandit/samba/1.3.0"},
		{mustAt(t, samba.Family{}, "1.2.0"), "/bandit/samba/1.2.0"},
		{mustAt(t, samba.Family{}, "1.1.0"), "/bandit/samba/1.1.0"},
		{mpccb.Family{}, "/bandit/mpccb/1.3.0"},
		{mustAt(t, mpccb.Family{}, "1.2.0"), "/bandit/mpccb/1.2.0"},
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

// mustAt is f at wire version v (protocol.AtWireVersion).
func mustAt(t *testing.T, f protocol.Family, v string) protocol.Family {
	t.Helper()
	fv, ok := protocol.AtWireVersion(f, v)
	if !ok {
		t.Fatalf("%s does not speak wire %s", f.Name(), v)
	}
	return fv
}
