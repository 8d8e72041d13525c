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
// unless dir says otherwise. The keys are decoded by protocol.DecodeTable,
// so an error names the key:
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
	var src sourceTable
	if err := protocol.DecodeTable(t.Key, take(rest, "source"), &src); err != nil {
		return c, nil, err
	}
	if src.Source != "" {
		c.Source = Source(src.Source)
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
	own := take(rest, sourceKeys(c.Source)...)
	missing := func(key, want string) error {
		if _, ok := own[key]; ok {
			return nil
		}
		return fmt.Errorf("%s.%s: missing; want %s", t.Key, key, want)
	}
	switch c.Source {
	case SourceSimulated:
	case SourceExec:
		var e execTable
		if err := protocol.DecodeTable(t.Key, own, &e); err != nil {
			return c, nil, err
		}
		if len(e.Command) == 0 {
			return c, nil, fmt.Errorf("%s.command: want the program and its arguments, such as [\"python3\", \"owner.py\"]", t.Key)
		}
		env, err := envList(e.Env)
		if err != nil {
			return c, nil, fmt.Errorf("%s.env: %w", t.Key, err)
		}
		if e.MaxRestarts != nil && (*e.MaxRestarts < 0 || *e.MaxRestarts > 1<<31) {
			return c, nil, fmt.Errorf("%s.max_restarts: want a whole number ≥ 0, got %d", t.Key, *e.MaxRestarts)
		}
		c.Exec = DefaultExecConfig()
		x := &c.Exec
		x.Command, x.Env, x.Dir = e.Command, env, t.Dir
		if e.Dir != nil {
			x.Dir = t.Path(*e.Dir)
		}
		if e.MaxRestarts != nil {
			x.MaxRestarts = int(*e.MaxRestarts)
		}
		e.StartTimeout.set(&x.StartTimeout)
		e.RequestTimeout.set(&x.RequestTimeout)
		e.RestartWindow.set(&x.RestartWindow)
		e.BackoffMin.set(&x.BackoffMin)
		e.BackoffMax.set(&x.BackoffMax)
		e.StopGrace.set(&x.StopGrace)
	case SourceHTTP:
		if err := missing("url", `the service's URL, such as "http://127.0.0.1:8080/answer"`); err != nil {
			return c, nil, err
		}
		var h httpTable
		if err := protocol.DecodeTable(t.Key, own, &h); err != nil {
			return c, nil, err
		}
		c.HTTP = DefaultHTTPConfig()
		c.HTTP.URL = h.URL
		h.RequestTimeout.set(&c.HTTP.RequestTimeout)
	case SourceReplay:
		if err := missing("file", "the CSV file to replay"); err != nil {
			return c, nil, err
		}
		r := replayTable{Order: string(OrderSequential)}
		if err := protocol.DecodeTable(t.Key, own, &r); err != nil {
			return c, nil, err
		}
		c.Replay = ReplayConfig{File: t.Path(r.File), Order: Order(r.Order)}
	default:
		return c, nil, fmt.Errorf("%s.source: unknown source %q; want \"simulated\", \"exec\", \"http\" or \"replay\"", t.Key, c.Source)
	}
	if err := c.Validate(); err != nil {
		return c, nil, fmt.Errorf("%s.%w", t.Key, err)
	}
	return c, rest, nil
}

// take removes keys from m and returns them as a table of their own.
func take(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
			delete(m, k)
		}
	}
	return out
}

// sourceTable is the key every environment shares.
type sourceTable struct {
	Source string `toml:"source" want:"text, one of \"simulated\", \"exec\", \"http\", \"replay\""`
}

// execTable is the shape of source = "exec"'s keys.
type execTable struct {
	Command        []string          `toml:"command" want:"an array of text, such as [\"python3\", \"owner.py\"] (no shell runs it)"`
	Dir            *string           `toml:"dir"`
	Env            map[string]string `toml:"env" want:"a table of variables, such as { DB = \"ratings.db\" }"`
	StartTimeout   textDuration      `toml:"start_timeout" want:"a duration as text, such as \"5s\""`
	RequestTimeout textDuration      `toml:"request_timeout" want:"a duration as text, such as \"5s\""`
	MaxRestarts    *int64            `toml:"max_restarts"`
	RestartWindow  textDuration      `toml:"restart_window" want:"a duration as text, such as \"5s\""`
	BackoffMin     textDuration      `toml:"backoff_min" want:"a duration as text, such as \"5s\""`
	BackoffMax     textDuration      `toml:"backoff_max" want:"a duration as text, such as \"5s\""`
	StopGrace      textDuration      `toml:"stop_grace" want:"a duration as text, such as \"5s\""`
}

// httpTable is the shape of source = "http"'s keys.
type httpTable struct {
	URL            string       `toml:"url"`
	RequestTimeout textDuration `toml:"request_timeout" want:"a duration as text, such as \"5s\""`
}

// replayTable is the shape of source = "replay"'s keys.
type replayTable struct {
	File  string `toml:"file"`
	Order string `toml:"order"`
}

// textDuration is a positive duration written as text ("5s", "1m30s"),
// and whether the table gave it.
type textDuration struct {
	d     time.Duration
	given bool
}

// UnmarshalText parses a positive duration.
func (t *textDuration) UnmarshalText(b []byte) error {
	d, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration; want one such as \"5s\" or \"500ms\"", b)
	}
	if d <= 0 {
		return fmt.Errorf("want a positive duration, got %q", b)
	}
	t.d, t.given = d, true
	return nil
}

// set stores the duration in *dst if the table gave one.
func (t textDuration) set(dst *time.Duration) {
	if t.given {
		*dst = t.d
	}
}

// envList turns env's variables into NAME=value entries, sorted by name.
func envList(env map[string]string) ([]string, error) {
	if env == nil {
		return nil, nil
	}
	names := make([]string, 0, len(env))
	for name := range env {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fmt.Errorf("%q is not a variable name", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = name + "=" + env[name]
	}
	return out, nil
}
