package protocol_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/bai"
	"github.com/bandit-node/bandit-node/protocol/mpccb"
	"github.com/bandit-node/bandit-node/protocol/pfcb"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/samba"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		wantErr string // empty: must parse
	}{
		{"list of names", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n", ""},
		{"one name", "protocol = \"ping\"\n[roles]\nparticipant = \"a\"\n", ""},
		{"missing protocol", "[roles]\nparticipant = [\"a\"]\n", "missing key protocol"},
		{"unknown top-level key", "protocol = \"ping\"\nbudget = 3\n", "unknown key budget"},
		{"role is a number", "protocol = \"ping\"\n[roles]\nparticipant = 3\n", "roles.participant"},
		{"name is a number", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", 2]\n", "roles.participant[1]"},
		{"bad toml", "protocol = \n", "spec.toml"},
		{"a table two levels inside [simulation]", "protocol = \"ping\"\n[simulation.local.participant]\nsource = \"exec\"\n", ""},
		{"a table two levels inside an unknown one", "protocol = \"ping\"\n[extra.local.participant]\nsource = \"exec\"\n", "unknown keys extra"},
		{"too large", "protocol = \"ping\"\n#" + strings.Repeat("x", protocol.MaxSpecSize), "limit"},
		{"nesting bomb", "protocol = \"ping\"\nx = " + strings.Repeat("{a=", 5000) + "1" + strings.Repeat("}", 5000) + "\n", "line 2: arrays and inline tables nest deeper than 16"},
		{"deep arrays", "protocol = \"ping\"\n[params]\nx = " + strings.Repeat("[", 17) + strings.Repeat("]", 17) + "\n", "nest deeper"},
		{"brackets in strings do not count", "protocol = \"ping\"\n[roles]\nparticipant = [\"" + strings.Repeat("[", 40) + "\", '{{{{{{{{{{{{{{{{{{{{', \"\"\"\n[[[[[[[[[[[[[[[[[[[[\"\"\"]\n# [[[[[[[[[[[[[[[[[[[[[[[\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := protocol.ParseSpec("spec.toml", []byte(tt.text))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestRegistryCheck(t *testing.T) {
	reg := registry(t, ping.Family{})
	tests := []struct {
		name    string
		text    string
		wantErr string
	}{
		{"valid", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = 3\n", ""},
		{"unknown protocol", "protocol = \"pong\"\n", "unknown protocol \"pong\" (known: ping)"},
		{"unknown role", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\nobserver = \"c\"\n", "roles.observer"},
		{"too few", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\"]\n", "roles.participant: protocol ping needs at least 2"},
		{"duplicate name", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"a\"]\n", "\"a\" is listed twice"},
		{"empty name", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"\"]\n", "roles.participant[1]: empty name"},
		{"unknown param", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncont = 3\n", "unknown key params.cont"},
		{"param out of range", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = 0\n", "params.count"},
		{"param wrong type", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = \"many\"\n", "count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := reg.Check(mustSpec(t, tt.text))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
			}
		})
	}
}

func TestSpecEncodeRoundTrip(t *testing.T) {
	s := mustSpec(t, "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = 3\n[simulation]\nseed = 4\n")
	text, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back := mustSpec(t, string(text))
	if back.Protocol != "ping" || back.Roles.Count("participant") != 2 || back.Params["count"] != int64(3) {
		t.Fatalf("round trip lost data: %+v", back)
	}
	if len(back.Simulation) != 0 {
		t.Fatalf("Encode kept the simulation table: %v", back.Simulation)
	}
}

func FuzzParseSpec(f *testing.F) {
	f.Add([]byte("protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = 3\n"))
	f.Add([]byte("protocol = \"ping\"\n[roles]\nparticipant = \"a\"\n"))
	// Every family's example, so that the mutations reach each family's
	// params (and the kind checks of their fields).
	examples, err := filepath.Glob(filepath.Join("..", "examples", "*.toml"))
	if err != nil || len(examples) == 0 {
		f.Fatalf("no example specs in ../examples: %v", err)
	}
	for _, name := range examples {
		text, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(text)
	}
	reg, err := protocol.NewRegistry(ping.Family{}, samba.Family{}, bai.Family{}, pfcb.Family{}, mpccb.NewFamily())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := protocol.ParseSpec("spec", data)
		if err != nil {
			return
		}
		_, _, _ = reg.Check(s)
	})
}
