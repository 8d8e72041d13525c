package environment

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// Session says which role of which session an environment answers: the
// exec hello carries it, and errors name it.
type Session struct {
	// ID is the session's ID.
	ID string
	// Protocol is the family's name (samba, mpccb, bai, pfcb) and Role the
	// role's (data_owner, agent…).
	Protocol, Role string
	// Index is the party's index among the role's parties (a SAMBA data
	// owner's arm, a BAI agent's number); 0 for a role with one party.
	Index int
	// Org is the organization playing the role, for errors; it may be "".
	Org string
}

// Label names the role for errors: "samba data_owner[3] of acme".
func (s Session) Label() string {
	l := s.Protocol + " " + s.Role + "[" + strconv.Itoa(s.Index) + "]"
	if s.Org != "" {
		l += " of " + s.Org
	}
	return l
}

// Source says where a role's outcomes come from: the value of the key
// source of its [local.<protocol>.<role>] table.
type Source string

// The sources.
const (
	// SourceSimulated is the family's own simulated environment
	// (distributions, qualities, prepared data files), the default. This
	// package does not build it.
	SourceSimulated Source = "simulated"
	// SourceExec is the organization's own program (ExecConfig).
	SourceExec Source = "exec"
	// SourceHTTP is the organization's own service (HTTPConfig).
	SourceHTTP Source = "http"
	// SourceReplay is a CSV file replayed (ReplayConfig).
	SourceReplay Source = "replay"
)

// Config is a role's environment as its [local.<protocol>.<role>] table
// configures it: Source says which of Exec, HTTP and Replay applies (none
// for SourceSimulated).
type Config struct {
	// Source is the key source; "" is SourceSimulated.
	Source Source
	// Exec configures SourceExec.
	Exec ExecConfig
	// HTTP configures SourceHTTP.
	HTTP HTTPConfig
	// Replay configures SourceReplay.
	Replay ReplayConfig
}

// Simulated reports whether the family's own simulated environment
// applies (source = "simulated" or no source key).
func (c Config) Simulated() bool { return c.Source == SourceSimulated || c.Source == "" }

// Validate checks the configuration of c's source.
func (c Config) Validate() error {
	switch c.Source {
	case SourceSimulated, "":
		return nil
	case SourceExec:
		return c.Exec.Validate()
	case SourceHTTP:
		return c.HTTP.Validate()
	case SourceReplay:
		return c.Replay.Validate()
	}
	return fmt.Errorf("source: unknown source %q; want \"simulated\", \"exec\", \"http\" or \"replay\"", c.Source)
}

// New returns the environment c configures, for the role s: an *Exec, an
// *HTTP or a *Replay. rand is the randomness of a replay sampled with
// replacement (a seeded stream in a simulation, crypto/rand otherwise);
// the others ignore it. For SourceSimulated it returns ErrSimulated.
func (c Config) New(s Session, rand io.Reader) (protocol.Environment, error) {
	switch c.Source {
	case SourceSimulated, "":
		return nil, ErrSimulated
	case SourceExec:
		return NewExec(c.Exec, s)
	case SourceHTTP:
		return NewHTTP(c.HTTP, s)
	case SourceReplay:
		cfg := c.Replay
		if cfg.Label == "" {
			cfg.Label = s.Label()
		}
		return NewReplay(cfg, rand)
	}
	return nil, c.Validate()
}

// Check checks, at admission, what c names outside the config: that an
// exec program exists and is executable, that a replay file is readable
// and well formed with exactly columns columns and at least steps rows
// (0: any; see CheckReplay). A daemon calls it before it accepts a session.
func (c Config) Check(columns int, steps int64) error {
	switch c.Source {
	case SourceExec:
		if d := c.Exec.Dir; d != "" {
			if fi, err := os.Stat(d); err != nil {
				return fmt.Errorf("dir: %w", err)
			} else if !fi.IsDir() {
				return fmt.Errorf("dir: %s is not a directory", d)
			}
		}
		prog := c.Exec.Command[0]
		if !strings.ContainsRune(prog, filepath.Separator) {
			if _, err := exec.LookPath(prog); err != nil {
				return fmt.Errorf("command: %w", err)
			}
			return nil
		}
		if !filepath.IsAbs(prog) && c.Exec.Dir != "" {
			prog = filepath.Join(c.Exec.Dir, prog)
		}
		fi, err := os.Stat(prog)
		if err != nil {
			return fmt.Errorf("command: %w", err)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("command: %s is not an executable file", prog)
		}
	case SourceReplay:
		return CheckReplay(c.Replay.File, columns, steps, c.Replay.Order)
	}
	return nil
}

// sourceKeys returns the keys of a [local.<protocol>.<role>] table that
// belong to source s; "source" itself belongs to all.
func sourceKeys(s Source) []string {
	switch s {
	case SourceExec:
		return []string{"command", "dir", "env", "start_timeout", "request_timeout", "max_restarts", "restart_window", "backoff_min", "backoff_max", "stop_grace"}
	case SourceHTTP:
		return []string{"url", "request_timeout"}
	case SourceReplay:
		return []string{"file", "order"}
	}
	return nil
}

// DecodeConfig takes the environment's keys out of a role's
// [local.<protocol>.<role>] table, as the config's TOML decoder found it
// (strings, int64, []any, map[string]any; durations as strings such as
// "5s"), and returns the environment's Config, validated, and the other
// keys, untouched, which belong to the family. A nil table, or one without
// source, is SourceSimulated. Relative paths (dir, file, and a command
// with a separator, through dir) are taken from the table's Dir, the
// config file's directory, which is also the program's working directory
// unless dir says otherwise. An error names the key:
// local.samba.data_owner.request_timeout: "x" is not a duration.
func DecodeConfig(t *protocol.LocalTable) (Config, map[string]any, error) {
	c := Config{Source: SourceSimulated}
	if t == nil {
		return c, nil, nil
	}
	rest := make(map[string]any, len(t.Raw))
	for k, v := range t.Raw {
		rest[k] = v
	}
	d := tableDecoder{t: t, rest: rest}
	if v, ok := d.take("source"); ok {
		s, ok := v.(string)
		if !ok {
			return c, nil, d.errorf("source", "want text, one of \"simulated\", \"exec\", \"http\", \"replay\"; got %s", protocol.DescribeValue(v))
		}
		c.Source = Source(s)
	}
	// Keys of a source other than the one chosen are a mistake.
	chosen := map[string]bool{}
	for _, k := range sourceKeys(c.Source) {
		chosen[k] = true
	}
	var stray []string
	seen := map[string]bool{}
	for _, src := range []Source{SourceExec, SourceHTTP, SourceReplay} {
		for _, k := range sourceKeys(src) {
			if _, ok := rest[k]; ok && !chosen[k] && !seen[k] {
				seen[k] = true
				stray = append(stray, fmt.Sprintf("%s.%s (a key of source = %q)", t.Key, k, src))
			}
		}
	}
	if len(stray) > 0 {
		sort.Strings(stray)
		return c, nil, fmt.Errorf("%s: this role's source is %q; remove %s or set source", t.Key, c.Source, strings.Join(stray, ", "))
	}
	switch c.Source {
	case SourceSimulated:
	case SourceExec:
		c.Exec = DefaultExecConfig()
		e := &c.Exec
		if v, ok := d.take("command"); ok {
			e.Command = d.strings("command", v)
		}
		if len(e.Command) == 0 && d.err == nil {
			d.err = d.errorf("command", "want the program and its arguments, such as [\"python3\", \"owner.py\"]")
		}
		e.Dir = t.Dir
		if v, ok := d.take("dir"); ok {
			e.Dir = t.Path(d.string("dir", v))
		}
		if v, ok := d.take("env"); ok {
			e.Env = d.env("env", v)
		}
		d.duration("start_timeout", &e.StartTimeout)
		d.duration("request_timeout", &e.RequestTimeout)
		d.duration("restart_window", &e.RestartWindow)
		d.duration("backoff_min", &e.BackoffMin)
		d.duration("backoff_max", &e.BackoffMax)
		d.duration("stop_grace", &e.StopGrace)
		if v, ok := d.take("max_restarts"); ok {
			e.MaxRestarts = d.int("max_restarts", v)
		}
	case SourceHTTP:
		c.HTTP = DefaultHTTPConfig()
		if v, ok := d.take("url"); ok {
			c.HTTP.URL = d.string("url", v)
		} else if d.err == nil {
			d.err = d.errorf("url", "missing; want the service's URL, such as \"http://127.0.0.1:8080/answer\"")
		}
		d.duration("request_timeout", &c.HTTP.RequestTimeout)
	case SourceReplay:
		c.Replay = ReplayConfig{Order: OrderSequential}
		if v, ok := d.take("file"); ok {
			c.Replay.File = t.Path(d.string("file", v))
		} else if d.err == nil {
			d.err = d.errorf("file", "missing; want the CSV file to replay")
		}
		if v, ok := d.take("order"); ok {
			c.Replay.Order = Order(d.string("order", v))
		}
	default:
		return c, nil, d.errorf("source", "unknown source %q; want \"simulated\", \"exec\", \"http\" or \"replay\"", c.Source)
	}
	if d.err != nil {
		return c, nil, d.err
	}
	if err := c.Validate(); err != nil {
		return c, nil, fmt.Errorf("%s.%w", t.Key, err)
	}
	return c, rest, nil
}

// tableDecoder takes keys out of rest; the first error sticks.
type tableDecoder struct {
	t    *protocol.LocalTable
	rest map[string]any
	err  error
}

func (d *tableDecoder) take(key string) (any, bool) {
	v, ok := d.rest[key]
	delete(d.rest, key)
	return v, ok
}

func (d *tableDecoder) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%s.%s: %s", d.t.Key, key, fmt.Sprintf(format, args...))
}

func (d *tableDecoder) fail(key, format string, args ...any) {
	if d.err == nil {
		d.err = d.errorf(key, format, args...)
	}
}

func (d *tableDecoder) string(key string, v any) string {
	s, ok := v.(string)
	if !ok {
		d.fail(key, "want text, got %s", protocol.DescribeValue(v))
	}
	return s
}

func (d *tableDecoder) strings(key string, v any) []string {
	switch v := v.(type) {
	case []string:
		return append([]string(nil), v...)
	case []any:
		out := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				d.fail(key, "want an array of text, such as [\"python3\", \"owner.py\"]; element %d is %s", i+1, protocol.DescribeValue(x))
				return nil
			}
			out[i] = s
		}
		return out
	}
	d.fail(key, "want an array of text, such as [\"python3\", \"owner.py\"] (no shell runs it); got %s", protocol.DescribeValue(v))
	return nil
}

func (d *tableDecoder) env(key string, v any) []string {
	var m map[string]string
	switch v := v.(type) {
	case map[string]string:
		m = v
	case map[string]any:
		m = make(map[string]string, len(v))
		for name, x := range v {
			s, ok := x.(string)
			if !ok {
				d.fail(key+"."+name, "want text, got %s", protocol.DescribeValue(x))
				return nil
			}
			m[name] = s
		}
	default:
		d.fail(key, "want a table of variables, such as { DB = \"ratings.db\" }; got %s", protocol.DescribeValue(v))
		return nil
	}
	names := make([]string, 0, len(m))
	for name := range m {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			d.fail(key, "%q is not a variable name", name)
			return nil
		}
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = name + "=" + m[name]
	}
	return out
}

func (d *tableDecoder) int(key string, v any) int {
	switch v := v.(type) {
	case int64:
		if v >= 0 && v <= 1<<31 {
			return int(v)
		}
	case int:
		if v >= 0 && v <= 1<<31 {
			return v
		}
	default:
		d.fail(key, "want a whole number, got %s", protocol.DescribeValue(v))
		return 0
	}
	d.fail(key, "want a whole number ≥ 0, got %v", v)
	return 0
}

// duration decodes key, if present, into *dst: a positive duration
// written as text ("5s", "1m30s").
func (d *tableDecoder) duration(key string, dst *time.Duration) {
	v, ok := d.take(key)
	if !ok {
		return
	}
	s, ok := v.(string)
	if !ok {
		d.fail(key, "want a duration as text, such as \"5s\"; got %s", protocol.DescribeValue(v))
		return
	}
	dur, err := time.ParseDuration(s)
	if err != nil {
		d.fail(key, "%q is not a duration; want one such as \"5s\" or \"500ms\"", s)
		return
	}
	if dur <= 0 {
		d.fail(key, "want a positive duration, got %q", s)
		return
	}
	*dst = dur
}
