package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/cmd/internal/clikit"
)

// helpFlags returns every command path of the command table (walked
// through the table, not through completion) with the flags its -h usage
// lists.
func helpFlags(t *testing.T) map[string][]string {
	t.Helper()
	flagLine := regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`)
	out := map[string][]string{}
	var walk func(path []string, cmds []clikit.Command)
	walk = func(path []string, cmds []clikit.Command) {
		for _, c := range cmds {
			p := append(slices.Clip(path), c.Name)
			_, stderr, err := run(t, append(p, "-h")...)
			if err != nil {
				t.Fatalf("%s -h: %v", strings.Join(p, " "), err)
			}
			var flags []string
			if i := strings.Index(stderr, "\nFlags:\n"); i >= 0 {
				for _, m := range flagLine.FindAllStringSubmatch(stderr[i:], -1) {
					flags = append(flags, m[1])
				}
			}
			out[strings.Join(p, " ")] = flags
			walk(p, c.Subs)
		}
	}
	walk(nil, commands(nil))
	return out
}

// TestCompletionCoversEveryCommand checks that each script offers every
// command, subcommand and flag of the command table, as the commands' own
// help lists them: a command or flag added without completion fails here.
func TestCompletionCoversEveryCommand(t *testing.T) {
	want := helpFlags(t)
	if len(want["session logs"]) == 0 || len(want["peers add"]) == 0 || len(want["bench pattern"]) == 0 {
		t.Fatalf("the table walk missed commands: %v", want)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			script, _, err := run(t, "completion", shell)
			if err != nil {
				t.Fatal(err)
			}
			for path, flags := range want {
				parent, name := "", path
				if i := strings.LastIndex(path, " "); i >= 0 {
					parent, name = path[:i], path[i+1:]
				}
				if !subsLine(shell, script, parent, name) {
					t.Errorf("%s completion does not offer %q after %q", shell, name, "bandit-node "+parent)
				}
				for _, f := range flags {
					if !flagLine(shell, script, path, f) {
						t.Errorf("%s completion does not offer --%s to %q", shell, f, path)
					}
				}
			}
		})
	}
}

// subsLine reports whether script offers subcommand name after parent.
func subsLine(shell, script, parent, name string) bool {
	if shell == "fish" {
		return strings.Contains(script, "-n '__bandit_node_at \\'"+parent+"\\'' -a "+name+" -d ")
	}
	for _, line := range strings.Split(script, "\n") {
		if l, ok := strings.CutPrefix(strings.TrimSpace(line), `"`+parent+`") echo "`); ok {
			return slices.Contains(strings.Fields(strings.TrimSuffix(l, `" ;;`)), name)
		}
	}
	return false
}

// flagLine reports whether script offers flag f to command path.
func flagLine(shell, script, path, f string) bool {
	if shell == "fish" {
		return strings.Contains(script, "-n '__bandit_node_at \\'"+path+"\\'' -l "+f+" ")
	}
	for _, line := range strings.Split(script, "\n") {
		if l, ok := strings.CutPrefix(strings.TrimSpace(line), `"`+path+`") echo "`); ok && strings.Contains(l, "--") {
			return slices.Contains(strings.Fields(strings.TrimSuffix(l, `" ;;`)), "--"+f)
		}
	}
	return false
}

// TestCompletionSyntax checks each script's syntax with its shell when it
// is installed; bash always (the zsh script is written in the syntax the
// two share, so bash -n checks it too), and fish's block structure and
// quoting without fish.
func TestCompletionSyntax(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		shell  string
		checks [][]string // commands run with the script's path appended
	}{
		{"bash", [][]string{{"bash", "-n"}}},
		{"zsh", [][]string{{"bash", "-n"}, {"zsh", "-n"}}},
		{"fish", [][]string{{"fish", "--no-execute"}}},
	} {
		script, _, err := run(t, "completion", c.shell)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "completion."+c.shell)
		if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, check := range c.checks {
			if _, err := exec.LookPath(check[0]); err != nil {
				if check[0] == "bash" {
					t.Fatalf("bash is not installed: %v", err)
				}
				t.Logf("%s is not installed; %s -n skipped", check[0], c.shell)
				continue
			}
			if out, err := exec.Command(check[0], append(check[1:], file)...).CombinedOutput(); err != nil {
				t.Errorf("%s %s: %v\n%s", strings.Join(check, " "), c.shell, err, out)
			}
		}
		if c.shell == "fish" {
			checkFishStructure(t, script)
		}
	}
}

// checkFishStructure checks what can be checked of a fish script without
// fish: quotes close on their line, every block (function, switch, if,
// for) has its end, and every complete line uses only options it knows.
func checkFishStructure(t *testing.T, script string) {
	t.Helper()
	depth := 0
	for n, line := range strings.Split(script, "\n") {
		words, ok := fishWords(line)
		if !ok {
			t.Errorf("fish line %d: unclosed quote: %s", n+1, line)
			continue
		}
		if len(words) == 0 {
			continue
		}
		switch words[0] {
		case "function", "switch", "if", "for", "while", "begin":
			depth++
		case "end":
			depth--
			if depth < 0 {
				t.Errorf("fish line %d: end without a block", n+1)
			}
		case "complete":
			for i := 1; i < len(words); i++ {
				switch words[i] {
				case "-c", "-n", "-a", "-d", "-l":
					i++ // takes a value
				case "-f", "-F", "-r", "-x":
				default:
					t.Errorf("fish line %d: complete option %q", n+1, words[i])
				}
			}
		}
	}
	if depth != 0 {
		t.Errorf("fish script: %d blocks without end", depth)
	}
}

// fishWords splits a fish line into words, honouring '…' (with \' and \\)
// and "…"; ok is false if a quote is left open.
func fishWords(line string) (words []string, ok bool) {
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote == '\'' && ch == '\\' && i+1 < len(line) && (line[i+1] == '\'' || line[i+1] == '\\'):
			i++
			w.WriteByte(line[i])
		case quote != 0 && ch == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(ch)
		case ch == '\'' || ch == '"':
			quote, in = ch, true
		case ch == ' ' || ch == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, quote == 0
}

// TestBashCompletion runs the bash script's completion function on the
// cases, as bash would on a tab, and checks what it offers.
func TestBashCompletion(t *testing.T) {
	dir, script := completionDir(t, "bash")
	cases := append(slices.Clip(completionCases), []struct {
		line string
		want []string
	}{
		{"bandit-node peers add --", []string{"--config"}},
		{"bandit-node completion --", nil},
	}...)
	for _, tt := range cases {
		t.Run(tt.line, func(t *testing.T) {
			words := strings.Split(tt.line, " ")
			var q []string
			for _, w := range words {
				q = append(q, "'"+w+"'")
			}
			prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" +
				strconv.Itoa(len(words)-1) + "\n_bandit_node\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			cmd := exec.Command("bash", "--norc", "-c", prog)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("offers %q, want %q", got, tt.want)
			}
		})
	}
}

// completionCases are command lines (the words before the cursor, then the
// word being completed) and what completing them offers; "FILES" stands
// for the file names spec.toml and node1.toml of the working directory.
var completionCases = []struct {
	line string
	want []string
}{
	{"bandit-node se", []string{"session"}},
	{"bandit-node session ", []string{"cancel", "list", "logs", "result", "start", "status"}},
	{"bandit-node session logs --f", []string{"--follow"}},
	{"bandit-node session logs --config node", []string{"node1.toml"}},
	{"bandit-node --config node1.toml session st", []string{"start", "status"}},
	{"bandit-node session start --config node1.toml sp", []string{"spec.toml"}},
	{"bandit-node session list --name ", nil},
	{"bandit-node peers a", []string{"add"}},
}

// completionDir returns a working directory holding the files the cases
// complete and the script for shell.
func completionDir(t *testing.T, shell string) (dir, script string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Skipf("%s is not installed", shell)
	}
	text, _, err := run(t, "completion", shell)
	if err != nil {
		t.Fatal(err)
	}
	dir = t.TempDir()
	script = filepath.Join(dir, "completion."+shell)
	for name, data := range map[string]string{script: text, filepath.Join(dir, "node1.toml"): "", filepath.Join(dir, "spec.toml"): ""} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, script
}

// TestFishCompletion asks fish itself (complete -C) what it offers.
func TestFishCompletion(t *testing.T) {
	dir, script := completionDir(t, "fish")
	for _, tt := range completionCases {
		t.Run(tt.line, func(t *testing.T) {
			cmd := exec.Command("fish", "--no-config", "-c", "source "+script+"; complete -C '"+tt.line+"'")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if w, _, _ := strings.Cut(l, "\t"); w != "" {
					got = append(got, w)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("offers %q, want %q", got, tt.want)
			}
		})
	}
}

// TestZshCompletion runs the zsh script's completion function with zsh's
// completion builtins replaced by stand-ins that print what they are given.
func TestZshCompletion(t *testing.T) {
	dir, script := completionDir(t, "zsh")
	for _, tt := range completionCases {
		t.Run(tt.line, func(t *testing.T) {
			words := strings.Split(tt.line, " ")
			var q []string
			for _, w := range words {
				q = append(q, "'"+w+"'")
			}
			prog := `compdef() { :; }
compadd() { shift; print -l -- "$@"; }
_files() { print -l -- ${words[CURRENT]}*(N); }
_message() { :; }
source ` + script + `
words=(` + strings.Join(q, " ") + `)
CURRENT=` + strconv.Itoa(len(words)) + `
_bandit_node
`
			cmd := exec.Command("zsh", "-f", "-c", prog)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("zsh: %v\n%s", err, out)
			}
			var got []string
			for _, w := range strings.Fields(string(out)) {
				if strings.HasPrefix(w, words[len(words)-1]) {
					got = append(got, w)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("offers %q (all: %q), want %q", got, out, tt.want)
			}
		})
	}
}
