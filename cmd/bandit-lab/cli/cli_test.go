package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// run runs the CLI and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// TestHelpShowsAnExample checks that the program's usage lists its
// commands and that every experiment's help has a synopsis and an example
// naming bandit-lab.
func TestHelpShowsAnExample(t *testing.T) {
	out, _, err := run(t, "help")
	if err != nil || !strings.Contains(out, "Usage: bandit-lab COMMAND") || !strings.Contains(out, "  experiment  reproduce a paper's experiments") {
		t.Errorf("help: %v\n%s", err, out)
	}
	for _, name := range []string{"bai", "pfcb", "mpccb", "samba"} {
		t.Run(name, func(t *testing.T) {
			_, stderr, err := run(t, "experiment", name, "-h")
			if err != nil {
				t.Fatalf("-h: %v", err)
			}
			if !strings.Contains(stderr, "Usage: bandit-lab experiment "+name) || !strings.Contains(stderr, "Example:\n  bandit-lab experiment "+name) {
				t.Errorf("help lacks a synopsis or an example:\n%s", stderr)
			}
		})
	}
	out, _, err = run(t, "experiment", "-h")
	if err != nil || !strings.Contains(out, "Usage: bandit-lab experiment NAME") {
		t.Errorf("experiment -h: %v\n%s", err, out)
	}
}

// TestUsageErrors checks that a mistake in how a command is called is a
// usage error (exit code 2) saying what is wrong.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command given"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"experiment"}, "experiment: name an experiment"},
		{[]string{"experiment", "frobnicate"}, `unknown experiment "frobnicate" (known: bai, pfcb, mpccb, samba)`},
		{[]string{"experiment", "bai", "extra"}, "takes no arguments"},
		{[]string{"experiment", "pfcb", "--settings", "zeta=1"}, "--settings needs --sensitivity"},
		{[]string{"experiment", "pfcb", "--sensitivity", "--epsilons", "1,2"}, "--epsilons set EXP2 and EXP3"},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh"`},
	}
	for _, tt := range tests {
		_, _, err := run(t, tt.args...)
		if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
			t.Errorf("%v: err = %v (exit %d), want a usage error mentioning %q", tt.args, err, ExitCode(err), tt.want)
		}
	}
}

// TestFlagErrors checks that a flag that does not parse is a usage error
// whose message is written once, after the command's usage.
func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args  []string
		usage string // the usage's first line
		msg   string // what the error must say
	}{
		{[]string{"experiment", "bai", "--runs", "x"}, "Usage: bandit-lab experiment bai", `experiment bai: invalid value "x" for flag -runs`},
		{[]string{"experiment", "pfcb", "--rounds", "1e9x"}, "Usage: bandit-lab experiment pfcb", `invalid value "1e9x" for flag -rounds`},
		{[]string{"experiment", "samba", "--bogus"}, "Usage: bandit-lab experiment samba", "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, err := run(t, tt.args...)
			if err == nil || ExitCode(err) != 2 {
				t.Fatalf("err = %v (exit %d), want a usage error", err, ExitCode(err))
			}
			seen := stderr + "bandit-lab: " + err.Error() + "\n"
			if n := strings.Count(seen, tt.msg); n != 1 {
				t.Errorf("%q appears %d times, want once:\n%s", tt.msg, n, seen)
			}
			if !strings.HasPrefix(stderr, tt.usage) || strings.Count(stderr, "Usage:") != 1 {
				t.Errorf("stderr does not start with the usage %q, once:\n%s", tt.usage, stderr)
			}
		})
	}
}

// TestCompletion checks that the scripts name bandit-lab and offer every
// experiment and its flags (clikit's tests run the scripts in the shells).
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		script, _, err := run(t, "completion", shell)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(script, "bandit-node") || strings.Contains(script, "bandit_node") || !strings.Contains(script, "bandit-lab") {
			t.Errorf("%s: the script does not name bandit-lab alone", shell)
		}
		for _, want := range []string{"bai", "pfcb", "mpccb", "samba", "paillier-bits", "sensitivity", "timing-repeats"} {
			if !strings.Contains(script, want) {
				t.Errorf("%s: the script does not offer %s", shell, want)
			}
		}
	}
}
