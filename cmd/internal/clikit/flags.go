package clikit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NewFlags returns a flag set for the command name of program whose usage,
// written to out, shows the synopsis, the flags (if any) and an example.
// The flag package's own error messages are discarded: ParseArgs returns
// them as usage errors, which the caller prints once, after the usage.
func NewFlags(program, name, synopsis, example string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if p, ok := out.(*flagProbe); ok {
		// completion is reading the command's flags (completion.go).
		p.fs, p.synopsis = fs, synopsis
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: %s %s\n", program, synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(out, "\nFlags:")
			fs.SetOutput(out)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		fmt.Fprintf(out, "\nExample:\n  %s\n", strings.ReplaceAll(strings.TrimSpace(example), "\n", "\n  "))
	}
	return fs
}

// ParseArgs parses flags interspersed with positional arguments and returns
// the positional ones, checking their number. A flag the command does not
// know, or a flag value that does not parse, is a usage error (exit code 2);
// the usage has already been written by then.
func ParseArgs(fs *flag.FlagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, UsageError{fmt.Sprintf("%s: %v", fs.Name(), err)}
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) < minPos || len(pos) > maxPos {
		fs.Usage()
		if maxPos == 0 {
			return nil, UsageError{fmt.Sprintf("%s takes no arguments, got %q", fs.Name(), pos)}
		}
		return nil, UsageError{fmt.Sprintf("%s: wrong number of arguments (%d)", fs.Name(), len(pos))}
	}
	return pos, nil
}

// SetFlags returns the names of the flags the command line set.
func SetFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// AtLeastOne returns a usage error naming the first of the named integer
// flags that the command line set below 1. Only a flag left out takes its
// default (which may be 0, meaning "chosen for you"): a 0 or a negative
// number typed by the operator is a mistake, not a request for the default.
func AtLeastOne(fs *flag.FlagSet, names ...string) error {
	set := SetFlags(fs)
	for _, name := range names {
		f := fs.Lookup(name)
		if f == nil {
			panic("AtLeastOne: no flag --" + name)
		}
		if !set[name] {
			continue
		}
		v, err := strconv.ParseInt(f.Value.String(), 10, 64)
		if err != nil {
			panic(fmt.Sprintf("AtLeastOne: --%s is not an integer flag: %v", name, err))
		}
		if v < 1 {
			return UsageError{fmt.Sprintf("%s: --%s %d: must be at least 1 (leave the flag out for its default)", fs.Name(), name, v)}
		}
	}
	return nil
}
