package api

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// TestSpecText: a JSON spec becomes the TOML text of the same spec; a TOML
// one, whatever its content type, is taken as it is; what JSON cannot say in
// TOML is refused, naming the key.
func TestSpecText(t *testing.T) {
	for _, c := range []struct {
		name, ctype, body string
		want              *protocol.Spec // nil: the body itself
		err               string
	}{
		{name: "toml", ctype: "application/toml", body: "protocol = \"ping\"\n"},
		{name: "no type", body: "protocol = \"ping\"\n"},
		{name: "curl's form type", ctype: "application/x-www-form-urlencoded", body: "protocol = \"ping\"\n"},
		{name: "json", ctype: "application/json; charset=utf-8",
			body: `{"protocol": "samba", "roles": {"data_customer": "a", "controller": "b", "comp": "c", "data_owner": ["d", "e"]},
			        "params": {"algorithm": "ucb", "budget": 100, "paillier_bits": 512, "epsilon": 0.25}}`,
			want: &protocol.Spec{Protocol: "samba", Params: map[string]any{"algorithm": "ucb", "budget": int64(100), "paillier_bits": int64(512), "epsilon": 0.25}}},
		{name: "null", ctype: "application/json", body: `{"protocol": "ping", "params": {"count": null}}`, err: "params.count: null has no TOML value"},
		{name: "null in a list", ctype: "application/json", body: `{"protocol": "ping", "roles": {"participant": ["a", null]}}`, err: "roles.participant[1]: null"},
		{name: "not an object", ctype: "application/json", body: `["ping"]`, err: "spec: JSON"},
		{name: "two values", ctype: "application/json", body: `{"protocol": "ping"} {}`, err: "more than one value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := specText(c.ctype, []byte(c.body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.want == nil {
				if string(got) != c.body {
					t.Errorf("got %q, want the body as it was", got)
				}
				return
			}
			spec, err := protocol.ParseSpec("spec", got)
			if err != nil {
				t.Fatalf("the TOML written does not parse: %v\n%s", err, got)
			}
			if spec.Protocol != c.want.Protocol || len(spec.Roles.Roles["data_owner"]) != 2 || spec.Roles.Roles["comp"][0] != "c" {
				t.Errorf("spec %+v from\n%s", spec, got)
			}
			for k, v := range c.want.Params {
				if spec.Params[k] != v {
					t.Errorf("params.%s = %#v, want %#v", k, spec.Params[k], v)
				}
			}
		})
	}
}
