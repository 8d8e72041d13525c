package environment

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/bandit-node/bandit-node/protocol"
)

// table decodes a [local.samba.data_owner] table from TOML, as the
// daemon's config decoder finds it.
func table(t *testing.T, text string) *protocol.LocalTable {
	t.Helper()
	var raw map[string]any
	if _, err := toml.Decode(text, &raw); err != nil {
		t.Fatal(err)
	}
	return &protocol.LocalTable{Key: "local.samba.data_owner", Raw: raw, Dir: "/etc/bandit-node"}
}

func TestDecodeConfig(t *testing.T) {
	exec := DefaultExecConfig()
	exec.Command = []string{"python3", "owner.py", "--db", "ratings.db"}
	exec.Dir = "/etc/bandit-node/owners"
	exec.Env = []string{"A=1", "DB=ratings.db"}
	exec.StartTimeout = 20 * time.Second
	exec.RequestTimeout = 500 * time.Millisecond
	exec.MaxRestarts = 0
	exec.RestartWindow = 5 * time.Minute
	httpc := DefaultHTTPConfig()
	httpc.URL = "http://127.0.0.1:8080/answer"
	httpc.RequestTimeout = time.Second
	tests := []struct {
		name string
		toml string
		want Config
		rest map[string]any
	}{
		{"empty", ``, Config{Source: SourceSimulated}, map[string]any{}},
		{"family keys only", `mean = 0.3`, Config{Source: SourceSimulated}, map[string]any{"mean": 0.3}},
		{"simulated", "source = \"simulated\"\nratings = \"r.csv\"", Config{Source: SourceSimulated}, map[string]any{"ratings": "r.csv"}},
		{"exec", `source = "exec"
command = ["python3", "owner.py", "--db", "ratings.db"]
dir = "owners"
env = { DB = "ratings.db", A = "1" }
start_timeout = "20s"
request_timeout = "500ms"
max_restarts = 0
restart_window = "5m"
reward_range = [0, 1]`, Config{Source: SourceExec, Exec: exec}, map[string]any{"reward_range": []any{int64(0), int64(1)}}},
		{"http", "source = \"http\"\nurl = \"http://127.0.0.1:8080/answer\"\nrequest_timeout = \"1s\"", Config{Source: SourceHTTP, HTTP: httpc}, map[string]any{}},
		{"replay", "source = \"replay\"\nfile = \"data/r.csv\"\norder = \"sample\"", Config{Source: SourceReplay, Replay: ReplayConfig{File: "/etc/bandit-node/data/r.csv", Order: OrderSample}}, map[string]any{}},
		{"replay default order", "source = \"replay\"\nfile = \"/data/r.csv\"", Config{Source: SourceReplay, Replay: ReplayConfig{File: "/data/r.csv", Order: OrderSequential}}, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab := table(t, tt.toml)
			before := len(tab.Raw)
			got, rest, err := DecodeConfig(tab)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(rest, tt.rest) {
				t.Errorf("rest %#v, want %#v", rest, tt.rest)
			}
			if len(tab.Raw) != before {
				t.Error("DecodeConfig changed the table")
			}
		})
	}
	if c, rest, err := DecodeConfig(nil); err != nil || !c.Simulated() || rest != nil {
		t.Errorf("nil table: %+v, %v, %v", c, rest, err)
	}
}

func TestDecodeConfigErrors(t *testing.T) {
	tests := []struct{ toml, want string }{
		{"source = \"exec\"\ncommand = [\"p\"]\nrequest_timeout = \"x\"", `local.samba.data_owner.request_timeout: "x" is not a duration`},
		{"source = \"exec\"\ncommand = [\"p\"]\nrequest_timeout = 5", `local.samba.data_owner.request_timeout: want a duration as text, such as "5s"; got 5`},
		{"source = \"exec\"\ncommand = [\"p\"]\nstart_timeout = \"0s\"", `local.samba.data_owner.start_timeout: want a positive duration, got "0s"`},
		{"source = \"exec\"", `local.samba.data_owner.command: want the program and its arguments`},
		{"source = \"exec\"\ncommand = \"python3 owner.py\"", `local.samba.data_owner.command: want an array of text, such as ["python3", "owner.py"] (no shell runs it); got text "python3 owner.py"`},
		{"source = \"exec\"\ncommand = [\"p\", 1]", `local.samba.data_owner.command[1]: want text, got 1 (local.samba.data_owner.command is an array of text`},
		{"source = \"exec\"\ncommand = [\"p\"]\nmax_restarts = -1", `local.samba.data_owner.max_restarts: want a whole number ≥ 0, got -1`},
		{"source = \"exec\"\ncommand = [\"p\"]\nenv = [\"A=1\"]", `local.samba.data_owner.env: want a table of variables`},
		{"source = \"exec\"\ncommand = [\"p\"]\nenv = { A = 1 }", `local.samba.data_owner.env.A: want text, got 1`},
		{"source = \"exec\"\ncommand = [\"p\"]\nbackoff_min = \"10s\"", `local.samba.data_owner.backoff_max (5s) is below backoff_min (10s)`},
		{"source = \"exec\"\ncommand = [\"p\"]\nurl = \"http://127.0.0.1/\"", `local.samba.data_owner: this role's source is "exec"; remove local.samba.data_owner.url (a key of source = "http") or set source`},
		{"command = [\"p\"]", `local.samba.data_owner: this role's source is "simulated"; remove local.samba.data_owner.command (a key of source = "exec") or set source`},
		{"source = \"replay\"\nfile = \"r.csv\"\nrequest_timeout = \"1s\"", `remove local.samba.data_owner.request_timeout (a key of source = "exec") or set source`},
		{"source = \"carrier pigeon\"", `local.samba.data_owner.source: unknown source "carrier pigeon"`},
		{"source = 1", `local.samba.data_owner.source: want text`},
		{"source = \"http\"", `local.samba.data_owner.url: missing`},
		{"source = \"http\"\nurl = \"http://10.1.1.1/\"", `local.samba.data_owner.url: "http://10.1.1.1/": plain http only to a loopback address`},
		{"source = \"replay\"", `local.samba.data_owner.file: missing`},
		{"source = \"replay\"\nfile = \"r.csv\"\norder = \"random\"", `local.samba.data_owner.order: "random" is not an order`},
	}
	for _, tt := range tests {
		_, _, err := DecodeConfig(table(t, tt.toml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\ngot  %v\nwant %s", tt.toml, err, tt.want)
		}
	}
}

func TestConfigNewAndCheck(t *testing.T) {
	dir := t.TempDir()
	if _, err := (Config{}).New(testSession(), nil); !errors.Is(err, ErrSimulated) {
		t.Errorf("simulated: got %v", err)
	}
	file := filepath.Join(dir, "r.csv")
	if err := os.WriteFile(file, []byte("1,2\n3,4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab := &protocol.LocalTable{Key: "local.samba.data_owner", Raw: map[string]any{"source": "replay", "file": "r.csv"}, Dir: dir}
	c, _, err := DecodeConfig(tab)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check(2, 2); err != nil {
		t.Error(err)
	}
	if err := c.Check(2, 3); err == nil || !strings.Contains(err.Error(), "has 2 rows; the session needs 3") {
		t.Errorf("got %v", err)
	}
	env, err := c.New(testSession(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Answer(t.Context(), pull(1, 5, 0)); err == nil || !strings.HasPrefix(err.Error(), testLabel+": pull at step 5: replay file") {
		t.Errorf("got %v", err)
	}
	env.Close()

	for _, tt := range []struct {
		command []string
		want    string
	}{
		{[]string{prepared.envprog}, ""},
		{[]string{"sh", "-c", "true"}, ""},
		{[]string{"./missing"}, "command: stat " + filepath.Join(dir, "missing")},
		{[]string{"no-such-program-here"}, `command: exec: "no-such-program-here": executable file not found`},
		{[]string{"./r.csv"}, "is not an executable file"},
		{[]string{"sh"}, "dir: stat " + filepath.Join(dir, "nodir")},
	} {
		c := Config{Source: SourceExec, Exec: DefaultExecConfig()}
		c.Exec.Command, c.Exec.Dir = tt.command, dir
		if strings.HasPrefix(tt.want, "dir:") {
			c.Exec.Dir = filepath.Join(dir, "nodir")
		}
		err := c.Check(0, 0)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%v: got %v, want %q", tt.command, err, tt.want)
		}
	}
}
