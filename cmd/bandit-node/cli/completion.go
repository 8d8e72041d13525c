package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// runCompletion prints a shell completion script made from the command
// table and the commands' own flag sets, so it cannot drift from them.
func runCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "completion bash|zsh|fish", `
bandit-node completion bash > /etc/bash_completion.d/bandit-node
bandit-node completion zsh > "${fpath[1]}/_bandit-node"
bandit-node completion fish > ~/.config/fish/completions/bandit-node.fish`, stderr)
	pos, err := parseArgs(fs, args, 1, 1)
	if err != nil {
		return err
	}
	gen, ok := map[string]func(io.Writer, []compCommand){"bash": writeBash, "zsh": writeZsh, "fish": writeFish}[pos[0]]
	if !ok {
		fs.Usage()
		return usageError{fmt.Sprintf("completion: unknown shell %q (want bash, zsh or fish)", pos[0])}
	}
	tree, err := completionTree(ctx)
	if err != nil {
		return err
	}
	gen(stdout, tree)
	return nil
}

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
// -h: newFlags sees it and records the command's flag set and synopsis,
// and the usage written to it is discarded.
type flagProbe struct {
	fs       *flag.FlagSet
	synopsis string
}

// Write discards p.
func (*flagProbe) Write(p []byte) (int, error) { return len(p), nil }

// completionTree returns every command, the program first, then depth
// first in the order of the command table.
func completionTree(ctx context.Context) ([]compCommand, error) {
	root, err := compOf(ctx, "", command{subs: commands(nil)})
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
// (flag.ErrHelp) before it does anything; newFlags hands the flag set to
// the probe.
func compOf(ctx context.Context, path string, c command) (compCommand, error) {
	cc := compCommand{path: path, summary: c.summary}
	if c.run != nil {
		probe := &flagProbe{}
		if err := c.run(ctx, []string{"-h"}, io.Discard, probe); err != nil && !errors.Is(err, flag.ErrHelp) {
			return cc, fmt.Errorf("reading the flags of %q: %w", path, err)
		}
		if probe.fs != nil {
			probe.fs.VisitAll(func(f *flag.Flag) { cc.flags = append(cc.flags, newCompFlag(f)) })
			cc.files = filesArgs(probe.synopsis)
		}
	}
	for _, sub := range c.subs {
		s, err := compOf(ctx, strings.TrimSpace(path+" "+sub.name), sub)
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
func writeHelpers(w io.Writer, tree []compCommand) {
	fmt.Fprintln(w, "_bandit_node_subs() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "\t%q) echo %q ;;\n", c.path, subNames(c.subs))
		}
	}
	fmt.Fprintln(w, "\tesac\n}")
	fmt.Fprintln(w, "_bandit_node_flags() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if len(c.flags) > 0 {
			var fl []string
			for _, f := range c.flags {
				fl = append(fl, "--"+f.name)
			}
			fmt.Fprintf(w, "\t%q) echo %q ;;\n", c.path, strings.Join(fl, " "))
		}
	}
	fmt.Fprintln(w, "\tesac\n}")
	fmt.Fprintln(w, "_bandit_node_flag_kind() {\n\tcase \"$1 $2\" in")
	for _, c := range tree {
		for _, f := range c.flags {
			switch {
			case f.path:
				fmt.Fprintf(w, "\t%q) echo path ;;\n", compKey(c.path, f.name))
			case f.value:
				fmt.Fprintf(w, "\t%q) echo value ;;\n", compKey(c.path, f.name))
			}
		}
	}
	fmt.Fprintln(w, "\tesac\n}")
	fmt.Fprintln(w, "_bandit_node_files() {\n\tcase \"$1\" in")
	for _, c := range tree {
		if c.files {
			fmt.Fprintf(w, "\t%q) return 0 ;;\n", c.path)
		}
	}
	fmt.Fprintln(w, "\tesac\n\treturn 1\n}")
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
			if [ -n "$(_bandit_node_flag_kind "$cmdpath" "$w")" ]; then
				i=$((i + 1))
			fi
			continue ;;
		esac
		case " $(_bandit_node_subs "$cmdpath") " in
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
		prevkind=$(_bandit_node_flag_kind "$cmdpath" "$prev") ;;
	esac
`

func writeBash(w io.Writer, tree []compCommand) {
	fmt.Fprintln(w, "# bash completion for bandit-node; generated by `bandit-node completion bash`.")
	fmt.Fprintln(w, "# Install: bandit-node completion bash > /etc/bash_completion.d/bandit-node")
	fmt.Fprintln(w, "#      or: echo 'source <(bandit-node completion bash)' >> ~/.bashrc")
	writeHelpers(w, tree)
	fmt.Fprintln(w, "_bandit_node() {\n\tlocal cur cmdpath i w prev prevkind subs\n\tcur=${COMP_WORDS[COMP_CWORD]}")
	fmt.Fprintf(w, compWalk, "1", "$COMP_CWORD", "COMP_WORDS")
	fmt.Fprint(w, `	case "$prevkind" in
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
		COMPREPLY=($(compgen -W "$(_bandit_node_flags "$cmdpath")" -- "$cur"))
		return ;;
	esac
	subs=$(_bandit_node_subs "$cmdpath")
	if [ -n "$subs" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	elif _bandit_node_files "$cmdpath"; then
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
	else
		COMPREPLY=()
	fi
}
complete -F _bandit_node bandit-node
`)
}

func writeZsh(w io.Writer, tree []compCommand) {
	fmt.Fprintln(w, "#compdef bandit-node")
	fmt.Fprintln(w, "# zsh completion for bandit-node; generated by `bandit-node completion zsh`.")
	fmt.Fprintln(w, "# Install: bandit-node completion zsh > \"${fpath[1]}/_bandit-node\" (then restart zsh)")
	fmt.Fprintln(w, "#      or, after compinit: source <(bandit-node completion zsh)")
	writeHelpers(w, tree)
	fmt.Fprintln(w, "_bandit_node() {\n\tlocal cur cmdpath i w prev prevkind subs\n\tcur=${words[CURRENT]}")
	// zsh's words array counts from 1: the program is words[1].
	fmt.Fprintf(w, compWalk, "2", "$CURRENT", "words")
	fmt.Fprint(w, `	case "$prevkind" in
	path)
		_files
		return ;;
	value)
		_message 'value'
		return ;;
	esac
	case "$cur" in
	-*)
		compadd -- $(_bandit_node_flags "$cmdpath")
		return ;;
	esac
	subs=$(_bandit_node_subs "$cmdpath")
	if [ -n "$subs" ]; then
		compadd -- $(_bandit_node_subs "$cmdpath")
	elif _bandit_node_files "$cmdpath"; then
		_files
	fi
}
if [ "${zsh_eval_context[-1]}" = loadautofunc ]; then
	_bandit_node "$@"
else
	compdef _bandit_node bandit-node
fi
`)
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, tree []compCommand) {
	fmt.Fprintln(w, "# fish completion for bandit-node; generated by `bandit-node completion fish`.")
	fmt.Fprintln(w, "# Install: bandit-node completion fish > ~/.config/fish/completions/bandit-node.fish")
	fmt.Fprintln(w, "function __bandit_node_subs\n\tswitch \"$argv[1]\"")
	for _, c := range tree {
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "\tcase %s\n\t\tprintf '%%s\\n' %s\n", fishQuote(c.path), subNames(c.subs))
		}
	}
	fmt.Fprintln(w, "\tend\nend")
	fmt.Fprintln(w, "function __bandit_node_valued\n\tswitch \"$argv[1] $argv[2]\"")
	var valued []string
	for _, c := range tree {
		for _, f := range c.flags {
			if f.value {
				valued = append(valued, fishQuote(compKey(c.path, f.name)))
			}
		}
	}
	if len(valued) > 0 {
		fmt.Fprintf(w, "\tcase %s\n\t\treturn 0\n", strings.Join(valued, " "))
	}
	fmt.Fprintln(w, "\tend\n\treturn 1\nend")
	fmt.Fprint(w, `function __bandit_node_path
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
				if __bandit_node_valued "$cmdpath" (string replace -r -- '^--?' '' $w)
					set skip 1
				end
				continue
		end
		if contains -- $w (__bandit_node_subs "$cmdpath")
			set cmdpath (string trim -- "$cmdpath $w")
		end
	end
	echo $cmdpath
end
function __bandit_node_at
	set -l p (__bandit_node_path)
	test "$p" = "$argv[1]"
end
complete -c bandit-node -f
`)
	for _, c := range tree {
		cond := fishQuote("__bandit_node_at " + fishQuote(c.path))
		for _, s := range c.subs {
			fmt.Fprintf(w, "complete -c bandit-node -n %s -a %s -d %s\n", cond, subNames([]compCommand{s}), fishQuote(s.summary))
		}
		for _, f := range c.flags {
			opts := ""
			switch {
			case f.path:
				opts = " -r -F"
			case f.value:
				opts = " -x"
			}
			fmt.Fprintf(w, "complete -c bandit-node -n %s -l %s%s -d %s\n", cond, f.name, opts, fishQuote(usageFirstLine(f.usage)))
		}
		if c.files && len(c.subs) == 0 {
			fmt.Fprintf(w, "complete -c bandit-node -n %s -F\n", cond)
		}
	}
}

func usageFirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
