package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RetentionAge is how long the records of ended sessions are kept
// (session.keep): a Go duration ("2160h"), a number of days ("90d"), or
// "0", the default, for forever.
type RetentionAge struct{ time.Duration }

// UnmarshalText parses a retention age.
func (a *RetentionAge) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 32)
		if err != nil || n > 100*365 {
			return fmt.Errorf("%q is not a number of days such as \"90d\"", b)
		}
		a.Duration = time.Duration(n) * 24 * time.Hour
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration such as \"90d\" or \"720h\" (\"0\" keeps records forever)", b)
	}
	a.Duration = v
	return nil
}

// MarshalText formats the age in days when it is a whole number of them.
func (a RetentionAge) MarshalText() ([]byte, error) {
	if a.Duration > 0 && a.Duration%(24*time.Hour) == 0 {
		return []byte(strconv.FormatInt(int64(a.Duration/(24*time.Hour)), 10) + "d"), nil
	}
	return []byte(a.Duration.String()), nil
}

// Defaults of session.keep and session.keep_count: records are kept
// forever. A record holds a session's result, which the daemon cannot
// recompute; removing results is the operator's decision, not a default.
const (
	DefaultKeep      = 0
	DefaultKeepCount = 0
)

// validateRetention checks session.keep and session.keep_count.
func (s *SessionConfig) validateRetention() error {
	if s.Keep.Duration < 0 {
		return fmt.Errorf("session.keep = %q: must not be negative (\"0\" keeps records forever)", s.Keep.Duration)
	}
	if s.Keep.Duration > 0 && s.Keep.Duration < time.Hour {
		return fmt.Errorf("session.keep = %q: keep records at least an hour (\"0\" keeps them forever)", s.Keep.Duration)
	}
	if s.KeepCount < 0 {
		return fmt.Errorf("session.keep_count = %d: must not be negative (0 keeps every record)", s.KeepCount)
	}
	return nil
}
