package protocol_test

import (
	"errors"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

// TestKeyErrors: a spec's errors that concern one key name it, with a code,
// whether the spec's parse or its check finds them; the message stays the
// operator's.
func TestKeyErrors(t *testing.T) {
	reg, err := protocol.NewRegistry(ping.Family{}, samba.Family{})
	if err != nil {
		t.Fatal(err)
	}
	roles := "[roles]\nparticipant = [\"a\", \"b\"]\n"
	for _, c := range []struct{ name, spec, code, key, msg string }{
		{"unknown top-level key", "protocol = \"ping\"\nbudget = 3\n" + roles, protocol.KeyUnknown, "budget", "spec: unknown key budget"},
		{"missing protocol", roles, protocol.KeyMissing, "protocol", "spec: missing key protocol"},
		{"unknown protocol", "protocol = \"pong\"\n" + roles, protocol.KeyProtocol, "protocol", "protocol: "},
		{"unknown param", "protocol = \"ping\"\n" + roles + "[params]\ncont = 3\n", protocol.KeyUnknown, "params.cont", "unknown key params.cont"},
		{"wrong kind", "protocol = \"ping\"\n" + roles + "[params]\ncount = \"many\"\n", protocol.KeyKind, "params.count", "params.count: want"},
		{"the family's bound", "protocol = \"ping\"\n" + roles + "[params]\ncount = -3\n", protocol.KeyInvalid, "params.count", "params.count: -3 is out of range"},
		{"the family's rule", "protocol = \"samba\"\n[roles]\ndata_customer = \"a\"\ncontroller = \"b\"\ncomp = \"c\"\ndata_owner = [\"d\", \"e\"]\n[params]\nalgorithm = \"ucb\"\nbudget = 0\n",
			protocol.KeyInvalid, "params.budget", "params.budget: 0 is out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, err := protocol.ParseSpec("spec", []byte(c.spec))
			if err == nil {
				_, err = reg.CheckSpec(spec)
			}
			var ke *protocol.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("err %v (%T), want a KeyError", err, err)
			}
			if ke.Code != c.code || ke.Key != c.key {
				t.Errorf("code %q key %q, want %q %q", ke.Code, ke.Key, c.code, c.key)
			}
			if got := err.Error(); len(got) < len(c.msg) || !contains(got, c.msg) {
				t.Errorf("message %q, want one with %q", got, c.msg)
			}
		})
	}
}

// TestDecodeTableKeyErrors: a table's decoder names the key of a value of
// the wrong kind or out of its type's range. (A family's own bounds, such
// as ping's count in [1, 1000000], are its errors, not yet KeyErrors.)
func TestDecodeTableKeyErrors(t *testing.T) {
	var v struct {
		Budget uint16  `toml:"budget"`
		Arms   []int64 `toml:"arms"`
	}
	for _, c := range []struct {
		raw       map[string]any
		code, key string
	}{
		{map[string]any{"budget": int64(70000)}, protocol.KeyRange, "params.budget"},
		{map[string]any{"budget": "lots"}, protocol.KeyKind, "params.budget"},
		{map[string]any{"arms": "1,2"}, protocol.KeyKind, "params.arms"},
		{map[string]any{"bugdet": int64(3)}, protocol.KeyUnknown, "params.bugdet"},
	} {
		err := protocol.DecodeTable("params", c.raw, &v)
		var ke *protocol.KeyError
		if !errors.As(err, &ke) || ke.Code != c.code || ke.Key != c.key {
			t.Errorf("%v: err %v, want a KeyError %s of %s", c.raw, err, c.code, c.key)
		}
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
