package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Schedule says when a standing session is due: once at boot, every
// period, or at a time of day (every day, or on one day of the week). Its
// methods are pure: the clock is an argument.
type Schedule struct {
	OnBoot bool
	Every  time.Duration
	// A time of day, when neither of the above: hour:minute in loc, on
	// weekday or, if daily, every day.
	daily        bool
	weekday      time.Weekday
	hour, minute int
	loc          *time.Location // nil: time.Local
}

// String writes the schedule as the config does.
func (s Schedule) String() string {
	switch {
	case s.OnBoot:
		return "start = " + startOnBoot
	case s.Every > 0:
		return "every = " + shortDuration(s.Every)
	case s.daily:
		return fmt.Sprintf("at = %02d:%02d", s.hour, s.minute)
	}
	return fmt.Sprintf("at = %s %02d:%02d", s.weekday.String()[:3], s.hour, s.minute)
}

// shortDuration writes d as time.Duration does, without its zero minutes
// and seconds: "168h", "1h30m", "90s".
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// parseAt parses at = "Mon 02:00" (weekly) or "02:00" (daily).
func parseAt(text string) (Schedule, error) {
	s := Schedule{daily: true}
	clock := strings.TrimSpace(text)
	if day, rest, ok := strings.Cut(clock, " "); ok {
		wd, err := parseWeekday(day)
		if err != nil {
			return Schedule{}, fmt.Errorf("%q: %w", text, err)
		}
		s.daily, s.weekday, clock = false, wd, strings.TrimSpace(rest)
	}
	t, err := time.Parse("15:04", clock)
	if err != nil {
		return Schedule{}, fmt.Errorf("%q is not a time such as \"Mon 02:00\" (weekly) or \"02:00\" (daily), 24-hour local time", text)
	}
	s.hour, s.minute = t.Hour(), t.Minute()
	return s, nil
}

// parseWeekday parses a day's three-letter English abbreviation, or its
// full name, in any case.
func parseWeekday(day string) (time.Weekday, error) {
	for d := time.Sunday; d <= time.Saturday; d++ {
		name := d.String()
		if strings.EqualFold(day, name) || strings.EqualFold(day, name[:3]) {
			return d, nil
		}
	}
	return 0, errors.New("the day is not one of Mon, Tue, Wed, Thu, Fri, Sat, Sun")
}

// First is when a session with this schedule and no earlier runs is due,
// the daemon having started (or the session having been added) at now: at
// once for on-boot and every, at the next time of day for at.
func (s Schedule) First(now time.Time) time.Time {
	if s.OnBoot || s.Every > 0 {
		return now
	}
	return s.nextAt(now.Add(-time.Nanosecond))
}

// Next is when a session is next due after the run that was due at due
// was proposed at now (now is due, or later when the daemon was down or
// the run was retried or skipped): the first due time after now. The due
// times missed in between collapse into that one; every keeps its cadence
// from due. On-boot sessions are not due again (zero time) until the next
// boot.
func (s Schedule) Next(due, now time.Time) time.Time {
	switch {
	case s.OnBoot:
		return time.Time{}
	case s.Every > 0:
		t := due.Add(s.Every)
		if !t.After(now) {
			k := now.Sub(due)/s.Every + 1
			t = due.Add(k * s.Every)
		}
		return t
	}
	if due.After(now) {
		now = due
	}
	return s.nextAt(now)
}

// nextAt returns the first time of day of the schedule strictly after t.
func (s Schedule) nextAt(t time.Time) time.Time {
	loc := s.loc
	if loc == nil {
		loc = time.Local
	}
	lt := t.In(loc)
	for i := range 8 {
		c := time.Date(lt.Year(), lt.Month(), lt.Day()+i, s.hour, s.minute, 0, 0, loc)
		if c.After(t) && (s.daily || c.Weekday() == s.weekday) {
			return c
		}
	}
	// Unreachable: a week and a day hold every weekday at every time.
	return t.Add(24 * time.Hour)
}
