package clikit

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// table is a program of two levels: a command with a subcommand whose flag
// set has a path flag and a counted one.
func table() []Command {
	return []Command{{Name: "lab", Summary: "the lab", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := NewFlags("my-prog", "lab", "lab [--out DIR]", "my-prog lab", stderr)
		fs.String("out", "", "a directory")
		_, err := ParseArgs(fs, args, 0, 0)
		return err
	}, Subs: []Command{{Name: "run", Summary: "run it", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := NewFlags("my-prog", "lab run", "lab run [--runs N]", "my-prog lab run --runs 3", stderr)
		fs.Int("runs", 1, "runs")
		if _, err := ParseArgs(fs, args, 0, 0); err != nil {
			return err
		}
		return AtLeastOne(fs, "runs")
	}}}}}
}

// TestFlagsAndUsage checks the usage a flag set writes (the program's name,
// the synopsis, the flags, the example), and that a bad flag, a stray
// argument and a count below 1 are usage errors naming the command.
func TestFlagsAndUsage(t *testing.T) {
	run := table()[0].Subs[0].Run
	var stderr bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, io.Discard, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"Usage: my-prog lab run [--runs N]\n", "\nFlags:\n  -runs int", "\nExample:\n  my-prog lab run --runs 3\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, stderr.String())
		}
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--runs", "x"}, `lab run: invalid value "x" for flag -runs`},
		{[]string{"extra"}, `lab run takes no arguments, got ["extra"]`},
		{[]string{"--runs", "0"}, "lab run: --runs 0: must be at least 1"},
	} {
		err := run(context.Background(), tt.args, io.Discard, io.Discard)
		if !IsUsage(err) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err = %v, want a usage error with %q", tt.args, err, tt.want)
		}
	}
	if IsUsage(errors.New("disk full")) {
		t.Error("an ordinary error counts as a usage error")
	}
}

// TestCompletionNamesTheProgram checks that the scripts are the program's:
// its name and its shell functions, never another program's, and that the
// bash script completes the table's subcommands and flags.
func TestCompletionNamesTheProgram(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		var out bytes.Buffer
		if err := RunCompletion(context.Background(), "my-prog", table(), []string{shell}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		if strings.Contains(s, "bandit") || strings.Contains(s, "{prog}") || strings.Contains(s, "{fn}") || !strings.Contains(s, "_my_prog") {
			t.Errorf("%s script is not my-prog's:\n%s", shell, s)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	var out bytes.Buffer
	if err := RunCompletion(context.Background(), "my-prog", table(), []string{"bash"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "completion.bash")
	if err := os.WriteFile(script, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"my-prog l":              "lab",
		"my-prog lab ":           "run",
		"my-prog lab run --r":    "--runs",
		"my-prog lab --out /t r": "run",
	} {
		words := strings.Split(line, " ")
		cmd := exec.Command("bash", "--norc", "-c", "source "+script+`
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
_my_prog
printf '%s\n' "${COMPREPLY[@]}"`, "bash")
		cmd.Args = append(cmd.Args, words...)
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: bash: %v\n%s", line, err, got)
		}
		if strings.TrimSpace(string(got)) != want {
			t.Errorf("%q offers %q, want %q", line, got, want)
		}
	}
}
