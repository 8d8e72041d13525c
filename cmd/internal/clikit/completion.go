package clikit

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// RunCompletion runs program's completion command with args: it prints a
// shell completion script made from the command table cmds and the
// commands' own flag sets, so it cannot drift from them.
func RunCompletion(ctx context.Context, program string, cmds []Command, args []string, stdout, stderr io.Writer) error {
	fs := NewFlags(program, "completion", "completion bash|zsh|fish", strings.NewReplacer("{prog}", program).Replace(`
{prog} completion bash > /etc/bash_completion.d/{prog}
{prog} completion zsh > "${fpath[1]}/_{prog}"
{prog} completion fish > ~/.config/fish/completions/{prog}.fish`), stderr)
	pos, err := ParseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	gen, ok := map[string]func(script, []compCommand){"bash": writeBash, "zsh": writeZsh, "fish": writeFish}[pos[0]]
	if !ok {
		fs.Usage()
		return UsageError{fmt.Sprintf("completion: unknown shell %q (want bash, zsh or fish)", pos[0])}
	}
	tree, err := completionTree(ctx, cmds)
	if err != nil {
		return err
	}
	gen(newScript(stdout, program), tree)
	return nil
}

// script is a completion script being written to w for program: its
// templates name the program {prog} and prefix their shell functions with
// {fn} (program's name as an identifier, "_bandit_node").
type script struct {
	w       io.Writer
	program string
	names   *strings.Replacer
}

func newScript(w io.Writer, program string) script {
	fn := "_" + strings.ReplaceAll(program, "-", "_")
	return script{w: w, program: program, names: strings.NewReplacer("{prog}", program, "{fn}", fn)}
}

// line writes one line of template text with the names filled in.
func (s script) line(template string) { fmt.Fprintln(s.w, s.names.Replace(template)) }

// text writes template text with the names filled in.
func (s script) text(template string) { fmt.Fprint(s.w, s.names.Replace(template)) }

// compCommand is one command as completion sees it: its path of names
// ("" for the program itself, "session start"), its subcommands, its flags
// and whether its arguments are files.
type compCommand struct {
	path    string
	summary string
	subs    []compCommand
	flags   []compFlag
	files   bool
}

// compFlag is one flag of a command.
type compFlag struct {
	name  string
	usage string
	value bool // takes a value (is not a boolean flag)
	path  bool // the value is a file or directory
}

// flagProbe is the output writer completionTree hands a command run with
// -h: NewFlags sees it and records the command's flag set and synopsis,
// and the usage written to it is discarded.
type flagProbe struct {
	fs       *flag.FlagSet
	synopsis string
}

// Write discards p.
func (*flagProbe) Write(p []byte) (int, error) { return len(p), nil }

// completionTree returns every command, the program first, then depth
// first in the order of the command table.
func completionTree(ctx context.Context, cmds []Command) ([]compCommand, error) {
	root, err := compOf(ctx, "", Command{Subs: cmds})
	if err != nil {
		return nil, err
	}
	var all []compCommand
	var flatten func(c compCommand)
	flatten = func(c compCommand) {
		all = append(all, c)
		for _, s := range c.subs {
			flatten(s)
		}
	}
	flatten(root)
	return all, nil
}

// compOf returns command c, at path, and its subcommands as completion
// sees them. Running a command with -h defines its flags, then stops
// (flag.ErrHelp) before it does anything; NewFlags hands the flag set to
// the probe.
func compOf(ctx context.Context, path string, c Command) (compCommand, error) {
	cc := compCommand{path: path, summary: c.Summary}
	if c.Run != nil {
		probe := &flagProbe{}
		if err := c.Run(ctx, []string{"-h"}, io.Discard, probe); err != nil && !errors.Is(err, flag.ErrHelp) {
			return cc, fmt.Errorf("reading the flags of %q: %w", path, err)
		}
		if probe.fs != nil {
			probe.fs.VisitAll(func(f *flag.Flag) { cc.flags = append(cc.flags, newCompFlag(f)) })
			cc.files = filesArgs(probe.synopsis)
		}
	}
	for _, sub := range c.Subs {
		s, err := compOf(ctx, strings.TrimSpace(path+" "+sub.Name), sub)
		if err != nil {
			return cc, err
		}
		cc.subs = append(cc.subs, s)
	}
	return cc, nil
}

func newCompFlag(f *flag.Flag) compFlag {
	placeholder, usage := flag.UnquoteUsage(f)
	bf, isBool := f.Value.(interface{ IsBoolFlag() bool })
	cf := compFlag{name: f.Name, usage: usage, value: !(isBool && bf.IsBoolFlag())}
	switch {
	case !cf.value:
	case f.Name == "config", f.Name == "dir", f.Name == "out", f.Name == "csv", f.Name == "source":
		cf.path = true
	case placeholder == "FILE", placeholder == "DIR", placeholder == "PATH":
		cf.path = true
	}
	return cf
}

// filesArgs reports whether a command's synopsis ("session start --config
// FILE SPEC.toml [--wait]") has positional arguments that are files: what
// is left once the name, flags, their values and [optional] parts are
// taken out names a .toml file, a FILE or a CARD.
func filesArgs(synopsis string) bool {
	words := strings.Fields(synopsis)
	depth := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		open := strings.Count(w, "[") + strings.Count(w, "(")
		closed := strings.Count(w, "]") + strings.Count(w, ")")
		inside := depth > 0 || open > 0
		depth += open - closed
		if inside {
			continue
		}
		if strings.HasPrefix(w, "-") {
			if i+1 < len(words) && strings.ToUpper(words[i+1]) == words[i+1] {
				i++ // the flag's value
			}
			continue
		}
		if strings.HasSuffix(w, ".toml") || w == "FILE" || w == "CARD" {
			return true
		}
	}
	return false
}

// compKey is how the scripts name a flag of a command: "PATH NAME".
func compKey(path, flagName string) string { return path + " " + flagName }

// writeHelpers writes the shell functions the bash and zsh scripts share
// (POSIX case statements): the subcommands and flags of each command, the
// kind of each flag that takes a value, and which commands take files.
func writeHelpers(s script, tree []compCommand) {
	s.line("{fn}_subs() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if len(c.subs) > 0 {
			fmt.Fprintf(s.w, "\t%q) echo %q ;;\n", c.path, subNames(c.subs))
		}
	}
	s.line("\tesac\n}")
	s.line("{fn}_flags() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if len(c.flags) > 0 {
			var fl []string
			for _, f := range c.flags {
				fl = append(fl, "--"+f.name)
			}
			fmt.Fprintf(s.w, "\t%q) echo %q ;;\n", c.path, strings.Join(fl, " "))
		}
	}
	s.line("\tesac\n}")
	s.line("{fn}_flag_kind() {\n\tcase \"$1 $2\" in")
	for _, c := range tree {
		for _, f := range c.flags {
			switch {
			case f.path:
				fmt.Fprintf(s.w, "\t%q) echo path ;;\n", compKey(c.path, f.name))
			case f.value:
				fmt.Fprintf(s.w, "\t%q) echo value ;;\n", compKey(c.path, f.name))
			}
		}
	}
	s.line("\tesac\n}")
	s.line("{fn}_files() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if c.files {
			fmt.Fprintf(s.w, "\t%q) return 0 ;;\n", c.path)
		}
	}
	s.line("\tesac\n\treturn 1\n}")
}

func subNames(cmds []compCommand) string {
	var out []string
	for _, c := range cmds {
		out = append(out, c.path[strings.LastIndex(c.path, " ")+1:])
	}
	return strings.Join(out, " ")
}

// compWalk is the loop, valid in bash and zsh, that finds the command
// being completed: it walks the words before the cursor (from index first
// to before cur, in array words), skipping flags and their values and
// descending into each known subcommand.
const compWalk = `	cmdpath=""
	i=%[1]s
	while [ "$i" -lt "%[2]s" ]; do
		w=${%[3]s[$i]}
		i=$((i + 1))
		case "$w" in
		-*=*) continue ;;
		-*)
			w=${w#-}
			w=${w#-}
			if [ -n "$({fn}_flag_kind "$cmdpath" "$w")" ]; then
				i=$((i + 1))
			fi
			continue ;;
		esac
		case " $({fn}_subs "$cmdpath") " in
		*" $w "*) cmdpath=${cmdpath:+$cmdpath }$w ;;
		esac
	done
	prev=${%[3]s[$((%[2]s - 1))]}
	prevkind=""
	case "$prev" in
	-*=*) ;;
	-*)
		prev=${prev#-}
		prev=${prev#-}
		prevkind=$({fn}_flag_kind "$cmdpath" "$prev") ;;
	esac
`

func writeBash(s script, tree []compCommand) {
	s.line("# bash completion for {prog}; generated by `{prog} completion bash`.")
	s.line("# Install: {prog} completion bash > /etc/bash_completion.d/{prog}")
	s.line("#      or: echo 'source <({prog} completion bash)' >> ~/.bashrc")
	writeHelpers(s, tree)
	s.line("{fn}() {\n\tlocal cur cmdpath i w prev prevkind subs\n\tcur=${COMP_WORDS[COMP_CWORD]}")
	fmt.Fprintf(s.w, s.names.Replace(compWalk), "1", "$COMP_CWORD", "COMP_WORDS")
	s.text(`	case "$prevkind" in
	path)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
		return ;;
	value)
		COMPREPLY=()
		return ;;
	esac
	case "$cur" in
	-*)
		COMPREPLY=($(compgen -W "$({fn}_flags "$cmdpath")" -- "$cur"))
		return ;;
	esac
	subs=$({fn}_subs "$cmdpath")
	if [ -n "$subs" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	elif {fn}_files "$cmdpath"; then
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=()
	fi
}
complete -F {fn} {prog}
`)
}

func writeZsh(s script, tree []compCommand) {
	s.line("#compdef {prog}")
	s.line("# zsh completion for {prog}; generated by `{prog} completion zsh`.")
	s.line("# Install: {prog} completion zsh > \"${fpath[1]}/_{prog}\" (then restart zsh)")
	s.line("#      or, after compinit: source <({prog} completion zsh)")
	writeHelpers(s, tree)
	s.line("{fn}() {\n\tlocal cur cmdpath i w prev prevkind subs\n\tcur=${words[CURRENT]}")
	// zsh's words array counts from 1: the program is words[1].
	fmt.Fprintf(s.w, s.names.Replace(compWalk), "2", "$CURRENT", "words")
	s.text(`	case "$prevkind" in
	path)
		_files
		return ;;
	value)
		_message 'value'
		return ;;
	esac
	case "$cur" in
	-*)
		compadd -- $({fn}_flags "$cmdpath")
		return ;;
	esac
	subs=$({fn}_subs "$cmdpath")
	if [ -n "$subs" ]; then
		compadd -- $({fn}_subs "$cmdpath")
	elif {fn}_files "$cmdpath"; then
		_files
	fi
}
if [ "${zsh_eval_context[-1]}" = loadautofunc ]; then
	{fn} "$@"
else
	compdef {fn} {prog}
fi
`)
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(s script, tree []compCommand) {
	s.line("# fish completion for {prog}; generated by `{prog} completion fish`.")
	s.line("# Install: {prog} completion fish > ~/.config/fish/completions/{prog}.fish")
	s.line("function _{fn}_subs\n\tswitch \"$argv[1]\"")
	for _, c := range tree {
		if len(c.subs) > 0 {
			fmt.Fprintf(s.w, "\tcase %s\n\t\tprintf '%%s\\n' %s\n", fishQuote(c.path), subNames(c.subs))
		}
	}
	s.line("\tend\nend")
	s.line("function _{fn}_valued\n\tswitch \"$argv[1] $argv[2]\"")
	var valued []string
	for _, c := range tree {
		for _, f := range c.flags {
			if f.value {
				valued = append(valued, fishQuote(compKey(c.path, f.name)))
			}
		}
	}
	if len(valued) > 0 {
		fmt.Fprintf(s.w, "\tcase %s\n\t\treturn 0\n", strings.Join(valued, " "))
	}
	s.line("\tend\n\treturn 1\nend")
	s.text(`function _{fn}_path
	set -l words (commandline -opc)
	set -e words[1]
	set -l cmdpath ''
	set -l skip 0
	for w in $words
		if test $skip = 1
			set skip 0
			continue
		end
		switch $w
			case '-*=*'
				continue
			case '-*'
				if _{fn}_valued "$cmdpath" (string replace -r -- '^--?' '' $w)
					set skip 1
				end
				continue
		end
		if contains -- $w (_{fn}_subs "$cmdpath")
			set cmdpath (string trim -- "$cmdpath $w")
		end
	end
	echo $cmdpath
end
function _{fn}_at
	set -l p (_{fn}_path)
	test "$p" = "$argv[1]"
end
complete -c {prog} -f
`)
	for _, c := range tree {
		cond := fishQuote(s.names.Replace("_{fn}_at ") + fishQuote(c.path))
		for _, sub := range c.subs {
			fmt.Fprintf(s.w, "complete -c %s -n %s -a %s -d %s\n", s.program, cond, subNames([]compCommand{sub}), fishQuote(sub.summary))
		}
		for _, f := range c.flags {
			opts := ""
			switch {
			case f.path:
				opts = " -r -F"
			case f.value:
				opts = " -x"
			}
			fmt.Fprintf(s.w, "complete -c %s -n %s -l %s%s -d %s\n", s.program, cond, f.name, opts, fishQuote(usageFirstLine(f.usage)))
		}
		if c.files && len(c.subs) == 0 {
			fmt.Fprintf(s.w, "complete -c %s -n %s -F\n", s.program, cond)
		}
	}
}

func usageFirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
