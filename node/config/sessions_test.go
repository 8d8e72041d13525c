package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol/ping"
)

// TestStandingSessionsConfig loads [[sessions]] tables: specs relative to
// the config file, defaults, and an error naming the key for each mistake.
func TestStandingSessionsConfig(t *testing.T) {
	const peerID = "12D3KooWQ3Lf4RYmeSsM3HqbDWb1Sz2zUoRPr6PxYyGgWvVx2Gqx"
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, "specs", name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ping.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = 3\n")
	write("stranger.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"zed\"]\n")
	write("badparams.toml", "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\"]\n[params]\ncount = -1\n")
	write("broken.toml", "protocol = \n")
	base := "[node]\nname = \"a\"\nlisten = [\"/ip4/127.0.0.1/tcp/4001\"]\n[[peers]]\nname = \"b\"\npeer_id = \"" + peerID + "\"\n[policy.ping]\nroles = [\"*\"]\ninitiators = [\"*\"]\n"
	entry := func(body string) string { return base + "[[sessions]]\n" + body }
	path := filepath.Join(dir, "config.toml")

	cfg, err := ParseConfig(path, []byte(entry("name = \"weekly-promo\"\nspec = \"specs/ping.toml\"\nat = \"Mon 02:00\"\nretry = { attempts = 3, backoff = \"10m\" }\n")+
		"[[sessions]]\nname = \"boot.check_1\"\nspec = \"specs/ping.toml\"\nstart = \"on-boot\"\n"), testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sessions) != 2 {
		t.Fatalf("sessions = %+v", cfg.Sessions)
	}
	w := cfg.Sessions[0]
	if w.Spec != filepath.Join(dir, "specs", "ping.toml") || !strings.Contains(string(w.SpecText), "count = 3") ||
		w.Retry.Attempts != 3 || w.Retry.Backoff.Duration != 10*time.Minute {
		t.Errorf("weekly-promo = %+v", w)
	}
	if b := cfg.Sessions[1]; b.Retry.Attempts != DefaultRetryAttempts || b.Retry.Backoff.Duration != DefaultRetryBackoff {
		t.Errorf("defaults of retry: %+v", b.Retry)
	}
	if s, _ := cfg.Sessions[0].Schedule(); s.String() != "at = Mon 02:00" {
		t.Errorf("schedule = %v", s)
	}

	tests := []struct{ name, text, want string }{
		{"no name", entry("spec = \"specs/ping.toml\"\nevery = \"1h\"\n"), `sessions[0].name: "" is not a name`},
		{"bad name", entry("name = \"Weekly Promo\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\n"), `sessions[0] (Weekly Promo).name: "Weekly Promo" is not a name`},
		{"long name", entry("name = \"" + strings.Repeat("a", 65) + "\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\n"), "is not a name of 1 to 64"},
		{"twice", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\n") + "[[sessions]]\nname = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"2h\"\n",
			`sessions[1] (x).name: "x" is used twice`},
		{"no schedule", entry("name = \"x\"\nspec = \"specs/ping.toml\"\n"), `sessions[0] (x): give exactly one of start = "on-boot", every = "168h" or at = "Mon 02:00"`},
		{"two schedules", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\nat = \"02:00\"\n"), "give exactly one of"},
		{"bad start", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nstart = \"now\"\n"), `sessions[0] (x): start: "now" is not "on-boot"`},
		{"bad every", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"weekly\"\n"), "not a duration"},
		{"short every", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"10ms\"\n"), "sessions[0] (x): every: 10ms is shorter than 1s"},
		{"bad at", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nat = \"Mon 2am\"\n"), `sessions[0] (x): at: "Mon 2am" is not a time such as "Mon 02:00" (weekly) or "02:00" (daily)`},
		{"bad day", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nat = \"Mond 02:00\"\n"), "the day is not one of Mon, Tue"},
		{"retry attempts", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\nretry = { attempts = -1 }\n"), "sessions[0] (x).retry.attempts: -1 is out of range"},
		{"retry unknown key", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\nretry = { attempt = 1 }\n"), "unknown key sessions.retry.attempt"},
		{"unknown key", entry("name = \"x\"\nspec = \"specs/ping.toml\"\nevery = \"1h\"\ncron = \"*\"\n"), "unknown key sessions.cron"},
		{"no spec", entry("name = \"x\"\nevery = \"1h\"\n"), "sessions[0] (x).spec: give the session spec file"},
		{"missing spec", entry("name = \"x\"\nspec = \"specs/nope.toml\"\nevery = \"1h\"\n"), "sessions[0] (x).spec: open " + filepath.Join(dir, "specs", "nope.toml")},
		{"broken spec", entry("name = \"x\"\nspec = \"specs/broken.toml\"\nevery = \"1h\"\n"), "sessions[0] (x).spec: " + filepath.Join(dir, "specs", "broken.toml")},
		{"bad params", entry("name = \"x\"\nspec = \"specs/badparams.toml\"\nevery = \"1h\"\n"), "sessions[0] (x).spec: " + filepath.Join(dir, "specs", "badparams.toml")},
		{"stranger", entry("name = \"x\"\nspec = \"specs/stranger.toml\"\nevery = \"1h\"\n"), `roles.participant[1]: "zed" is neither this node (a) nor in its address book`},
		{"policy sessions", base + "sessions = [\"ok\", \"Not OK\"]\n", `policy.ping.sessions[1]: "Not OK" is neither a session name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig(path, []byte(tt.text), testRegistry(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// TestAdmitName: policy.<family>.sessions accepts or refuses a proposal by
// its standing session's name.
func TestAdmitName(t *testing.T) {
	f := ping.Family{}
	tests := []struct {
		sessions []string
		name     string
		want     string // "" to accept
	}{
		{nil, "weekly-promo", ""},
		{nil, "", ""},
		{[]string{"*"}, "anything", ""},
		{[]string{"weekly-promo"}, "weekly-promo", ""},
		{[]string{"weekly-promo"}, "daily", `a does not accept the standing session "daily" of b (policy.ping.sessions)`},
		{[]string{"weekly-promo"}, "", "a accepts only the standing ping sessions it lists, and this one was started by hand on b (policy.ping.sessions)"},
		{[]string{"weekly-promo", ""}, "", ""},
		{[]string{}, "weekly-promo", `a does not accept the standing session "weekly-promo" of b (policy.ping.sessions)`},
	}
	for _, tt := range tests {
		cfg := DefaultConfig()
		cfg.Node.Name = "a"
		cfg.Policy["ping"] = PolicyConfig{Roles: []string{"*"}, Initiators: []string{"*"}, Sessions: tt.sessions}
		err := cfg.AdmitName(f, "b", tt.name)
		if (tt.want == "") != (err == nil) || err != nil && err.Error() != tt.want {
			t.Errorf("sessions %q, name %q: %v; want %q", tt.sessions, tt.name, err, tt.want)
		}
	}
}

// TestConfigExampleStandingSession: the example config's standing session
// loads, with its spec from the examples.
func TestConfigExampleStandingSession(t *testing.T) {
	cfg, err := LoadConfig(filepath.Join("..", "..", "config.example.toml"), testRegistry(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sessions) != 1 || cfg.Sessions[0].Name != "weekly-ping" || cfg.Sessions[0].Retry.Attempts != 3 ||
		!strings.Contains(string(cfg.Sessions[0].SpecText), "initech") {
		t.Fatalf("sessions = %+v", cfg.Sessions)
	}
	if s, err := cfg.Sessions[0].Schedule(); err != nil || s.String() != "at = Mon 02:00" {
		t.Errorf("schedule %v, %v", s, err)
	}
	if got := cfg.Policy["ping"].Sessions; len(got) != 1 || got[0] != "*" {
		t.Errorf("policy.ping.sessions = %q", got)
	}
}
