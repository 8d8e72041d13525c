package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// StandingConfig is one [[sessions]] entry: a standing session, which the
// daemon proposes by itself when it is due (standing.go).
type StandingConfig struct {
	// Name labels the session's runs in list, status and logs, and in the
	// proposal its participants see: [a-z0-9._-], at most 64 characters,
	// unique in the config.
	Name string `toml:"name"`
	// Spec is the session spec file, relative to the config file's
	// directory (absolute after LoadConfig).
	Spec string `toml:"spec"`
	// Exactly one of Start, Every and At says when the session is due.
	// Start = "on-boot": once each time the daemon starts.
	Start string `toml:"start"`
	// Every: a run every period, the first when the daemon first has the
	// session.
	Every Duration `toml:"every"`
	// At: a weekly ("Mon 02:00") or daily ("02:00") time, local time.
	At string `toml:"at"`
	// Retry says how often, and after how long, a run that aborted is
	// tried again before the next due time.
	Retry RetryConfig `toml:"retry"`

	// SpecText is the spec file's contents, read and checked at load.
	SpecText []byte `toml:"-"`
	// Checked is SpecText parsed and checked at load, the one parse of
	// it: the scheduler, its runs and the API's listing use it. A reload
	// reads, parses and checks the file again.
	Checked *protocol.CheckedSpec `toml:"-"`
}

// RetryConfig is a standing session's retry = { attempts, backoff }.
type RetryConfig struct {
	// Attempts is how many times a run that aborted (or could not be
	// proposed) is tried again; 0 waits for the next due time.
	Attempts int `toml:"attempts"`
	// Backoff is how long after the abort a retry is proposed.
	Backoff Duration `toml:"backoff"`
}

// Defaults and limits of [[sessions]].
const (
	DefaultRetryAttempts = 0
	DefaultRetryBackoff  = 10 * time.Minute
	// MaxStandingNameLen bounds a standing session's name.
	MaxStandingNameLen = 64
	// minEvery is the shortest period of every: shorter would propose
	// sessions faster than their participants answer.
	minEvery = time.Second
	// maxRetryAttempts bounds retry.attempts.
	maxRetryAttempts = 100
)

// startOnBoot is the one value of start.
const startOnBoot = "on-boot"

// ValidSessionName reports whether name is a standing session's name: 1 to
// MaxStandingNameLen characters of [a-z0-9._-].
func ValidSessionName(name string) bool {
	if len(name) == 0 || len(name) > MaxStandingNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Schedule returns the session's schedule, parsed from start, every or at.
func (sc StandingConfig) Schedule() (Schedule, error) {
	set := 0
	for _, b := range []bool{sc.Start != "", sc.Every.Duration != 0, sc.At != ""} {
		if b {
			set++
		}
	}
	if set != 1 {
		return Schedule{}, errors.New(`give exactly one of start = "on-boot", every = "168h" or at = "Mon 02:00"`)
	}
	switch {
	case sc.Start != "":
		if sc.Start != startOnBoot {
			return Schedule{}, fmt.Errorf("start: %q is not %q (for a period use every, for a time of day at)", sc.Start, startOnBoot)
		}
		return Schedule{OnBoot: true}, nil
	case sc.Every.Duration != 0:
		if sc.Every.Duration < minEvery {
			return Schedule{}, fmt.Errorf("every: %v is shorter than %v", sc.Every, minEvery)
		}
		return Schedule{Every: sc.Every.Duration}, nil
	}
	s, err := parseAt(sc.At)
	if err != nil {
		return Schedule{}, fmt.Errorf("at: %w", err)
	}
	return s, nil
}

// loadSessions checks every [[sessions]] entry, makes its spec path
// absolute (from base, the config file's directory) and reads and checks
// its spec: the protocol and its parameters (reg), and that every
// organization it names is this node or in the address book.
func (c *Config) loadSessions(reg *protocol.Registry, base string) error {
	names := map[string]bool{}
	for i := range c.Sessions {
		sc := &c.Sessions[i]
		where := fmt.Sprintf("sessions[%d]", i)
		if sc.Name != "" {
			where = fmt.Sprintf("sessions[%d] (%s)", i, sc.Name)
		}
		if !ValidSessionName(sc.Name) {
			return fmt.Errorf("%s.name: %q is not a name of 1 to %d characters among a-z, 0-9, '.', '_' and '-'", where, sc.Name, MaxStandingNameLen)
		}
		if names[sc.Name] {
			return fmt.Errorf("%s.name: %q is used twice", where, sc.Name)
		}
		names[sc.Name] = true
		if _, err := sc.Schedule(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if sc.Retry.Backoff.Duration == 0 {
			sc.Retry.Backoff = Duration{DefaultRetryBackoff}
		}
		if sc.Retry.Attempts < 0 || sc.Retry.Attempts > maxRetryAttempts {
			return fmt.Errorf("%s.retry.attempts: %d is out of range [0, %d]", where, sc.Retry.Attempts, maxRetryAttempts)
		}
		if sc.Retry.Backoff.Duration < 0 {
			return fmt.Errorf("%s.retry.backoff: must be positive, got %v", where, sc.Retry.Backoff)
		}
		if sc.Spec == "" {
			return fmt.Errorf("%s.spec: give the session spec file, relative to the config file", where)
		}
		if !filepath.IsAbs(sc.Spec) {
			sc.Spec = filepath.Join(base, sc.Spec)
		}
		text, err := os.ReadFile(sc.Spec)
		if err != nil {
			return fmt.Errorf("%s.spec: %w", where, err)
		}
		checked, err := c.checkStandingSpec(reg, sc.Spec, text)
		if err != nil {
			return fmt.Errorf("%s.spec: %w", where, err)
		}
		sc.SpecText, sc.Checked = text, checked
	}
	return nil
}

// checkPolicySessions checks policy.<fam>.sessions: standing session
// names, "*" or "" (sessions started by hand).
func checkPolicySessions(fam string, names []string) error {
	for i, name := range names {
		if name != "*" && name != "" && !ValidSessionName(name) {
			return fmt.Errorf("policy.%s.sessions[%d]: %q is neither a session name (a-z, 0-9, '.', '_', '-'; at most %d), \"*\" (any) nor \"\" (sessions started by hand)",
				fam, i, name, MaxStandingNameLen)
		}
	}
	return nil
}

// checkStandingSpec checks a standing session's spec as StartSession would
// before proposing it, as far as the config alone can: it parses, its
// protocol and parameters are valid, and every organization it names is
// this node or in the address book. It returns the checked spec.
func (c *Config) checkStandingSpec(reg *protocol.Registry, path string, text []byte) (*protocol.CheckedSpec, error) {
	spec, err := protocol.ParseSpec(path, text)
	if err != nil {
		return nil, err
	}
	checked, err := reg.CheckSpec(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, role := range slices.Sorted(maps.Keys(spec.Roles.Roles)) {
		for j, name := range spec.Roles.Roles[role] {
			if _, ok := c.PeerByName(name); !ok && name != c.Node.Name {
				return nil, fmt.Errorf("%s: roles.%s[%d]: %q is neither this node (%s) nor in its address book", path, role, j, name, c.Node.Name)
			}
		}
	}
	return checked, nil
}
