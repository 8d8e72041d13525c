package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../../.."

// helpCommands are every command and subcommand with a flag set.
var helpCommands = [][]string{{"init"}, {"run"}, {"id"}, {"peers"}, {"simulate"}, {"version"},
	{"session", "start"}, {"session", "status"}, {"session", "result"}, {"session", "list"}, {"session", "cancel"},
	{"experiment", "bai"}, {"experiment", "pfcb"}, {"experiment", "mpccb"}, {"data", "mpccb"}, {"bench", "pattern"}}

// TestHelpExamplesExist checks that every spec file a help text uses as an
// example exists in the repository. Node configs (after --config) are the
// operator's own, made by init, and are not checked.
func TestHelpExamplesExist(t *testing.T) {
	var help strings.Builder
	for _, c := range append(helpCommands, []string{"session"}, []string{"experiment"}, []string{"data"}, []string{"bench"}) {
		out, stderr, _ := run(t, append(c, "-h")...)
		help.WriteString(out + stderr)
	}
	checked := 0
	words := strings.Fields(help.String())
	for i, w := range words {
		w = strings.Trim(w, "`'\",;:()")
		if !strings.HasSuffix(w, ".toml") || !strings.Contains(w, "/") || (i > 0 && words[i-1] == "--config") {
			continue
		}
		checked++
		if _, err := os.Stat(filepath.Join(repoRoot, w)); err != nil {
			t.Errorf("a help example uses %s, which does not exist: %v", w, err)
		}
	}
	if checked < 3 {
		t.Errorf("found %d example spec paths in the help texts, want at least 3 (simulate, session start, session)", checked)
	}
}

// TestExampleSpecs checks that every examples/*.toml is a spec the families
// accept, and simulates examples/ping.toml, the help texts' example.
func TestExampleSpecs(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "examples", "*.toml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples/*.toml: %v", err)
	}
	reg, err := Families()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := protocol.ParseSpec(f, text)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if len(spec.Roles.Roles) > 0 {
			if _, _, err := reg.Check(spec); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	out, _, err := run(t, "simulate", filepath.Join(repoRoot, "examples", "ping.toml"))
	if err != nil || !strings.Contains(out, "Round-trip time, median of 10") {
		t.Errorf("simulate examples/ping.toml: %v\n%s", err, out)
	}
}
