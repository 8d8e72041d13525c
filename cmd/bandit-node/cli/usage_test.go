package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/families"
	"github.com/bandit-node/bandit-node/protocol"
)

// repoRoot is the repository's root, seen from this package's directory.
const repoRoot = "../../.."

// helpCommands are every command and subcommand with a flag set.
var helpCommands = [][]string{{"init"}, {"run"}, {"id"}, {"peers"}, {"simulate"}, {"version"},
	{"session", "start"}, {"session", "status"}, {"session", "result"}, {"session", "list"}, {"session", "cancel"},
	{"data", "mpccb"}, {"bench", "pattern"}}

// TestHelpExamplesExist checks that every spec file a help text uses as an
// example exists in the repository. Node configs (after --config) are the
// operator's own, made by init, and are not checked.
func TestHelpExamplesExist(t *testing.T) {
	var help strings.Builder
	for _, c := range append(helpCommands, []string{"session"}, []string{"data"}, []string{"bench"}) {
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
	reg, err := families.Registry()
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

// TestFlagErrors checks that a mistake in a flag is a usage error (exit code
// 2) whose message is written once (not also by the flag package), after the
// command's usage, which is written once too.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args  []string
		usage string // the usage's first line
		msg   string // what the error must say
	}{
		{[]string{"simulate", "p.toml", "--seed", "abc"}, "Usage: bandit-node simulate", `simulate: invalid value "abc" for flag -seed`},
		{[]string{"session", "start", "--bogus"}, "Usage: bandit-node session start", "session start: flag provided but not defined: -bogus"},
		{[]string{"run", "--config"}, "Usage: bandit-node run", "run: flag needs an argument: -config"},
		{[]string{"init", "--policy-open=maybe"}, "Usage: bandit-node init", `invalid boolean value "maybe" for -policy-open`},
		{[]string{"data", "mpccb", "--parties"}, "Usage: bandit-node data mpccb", "flag needs an argument: -parties"},
		{[]string{"version", "--yaml"}, "Usage: bandit-node version", "flag provided but not defined: -yaml"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			stdout, stderr, err := run(t, tt.args...)
			if err == nil {
				t.Fatalf("no error; stdout:\n%s", stdout)
			}
			if code := ExitCode(err); code != 2 {
				t.Errorf("exit code %d, want 2 (err = %v)", code, err)
			}
			// What the operator sees on stderr: ours, then main's line.
			seen := stderr + "bandit-node: " + err.Error() + "\n"
			if n := strings.Count(seen, tt.msg); n != 1 {
				t.Errorf("%q appears %d times, want once:\n%s", tt.msg, n, seen)
			}
			if n := strings.Count(seen, tt.usage); n != 1 {
				t.Errorf("the usage appears %d times, want once:\n%s", n, seen)
			}
			if u, m := strings.Index(seen, tt.usage), strings.Index(seen, tt.msg); u >= 0 && m >= 0 && u > m {
				t.Errorf("the error comes before the usage:\n%s", seen)
			}
		})
	}
}

// TestUsagePolish checks the help texts' layout: every flag of init in its
// synopsis, no empty Flags: section, and the command list in one column.
func TestUsagePolish(t *testing.T) {
	_, stderr, _ := run(t, "init", "-h")
	synopsis, _, _ := strings.Cut(stderr, "\n")
	for _, f := range []string{"--dir", "--name", "--listen", "--api", "--policy-open"} {
		if !strings.Contains(synopsis, f) {
			t.Errorf("init's synopsis lacks %s: %q", f, synopsis)
		}
	}
	var flagless strings.Builder // no command is without flags since version has --json
	newFlags("nothing", "nothing", "bandit-node nothing", &flagless).Usage()
	if strings.Contains(flagless.String(), "Flags:") {
		t.Errorf("the usage of a command without flags shows a Flags: section:\n%s", flagless.String())
	}
	if _, stderr, _ := run(t, "simulate", "-h"); !strings.Contains(stderr, "Flags:\n  -json") {
		t.Errorf("simulate -h lacks its flags:\n%s", stderr)
	}
	out, _, _ := run(t, "help")
	_, list, _ := strings.Cut(out, "Commands:\n")
	list, _, _ = strings.Cut(list, "\n\n")
	col := -1
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		// at is the column where the summary starts.
		at := len(line) - len(strings.TrimLeft(strings.TrimPrefix(line, "  "+name), " "))
		if col == -1 {
			col = at
		}
		if at != col {
			t.Errorf("the summary of %s starts at column %d, the first one's at %d:\n%s", name, at, col, list)
		}
		if at < len("  "+name)+2 {
			t.Errorf("%s and its summary are separated by fewer than two spaces: %q", name, line)
		}
	}
}
