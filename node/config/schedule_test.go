package config

import (
	"strings"
	"testing"
	"time"
)

// utc3 is a fixed local time for the schedule tests, free of DST.
var utc3 = time.FixedZone("UTC+3", 3*3600)

func at3(s string) time.Time {
	t, err := time.ParseInLocation("2006-01-02 15:04:05", s, utc3)
	if err != nil {
		panic(err)
	}
	return t
}

func TestParseAt(t *testing.T) {
	tests := []struct {
		in   string
		want string // schedule.String, or a part of the error
	}{
		{"Mon 02:00", "at = Mon 02:00"},
		{"monday 23:59", "at = Mon 23:59"},
		{"SUN 00:00", "at = Sun 00:00"},
		{"02:00", "at = 02:00"},
		{" 7:05 ", "at = 07:05"},
		{"Mon 24:00", "is not a time such as"},
		{"Mon 2am", "is not a time such as"},
		{"Mo 02:00", "the day is not one of"},
		{"", "is not a time such as"},
		{"Mon Tue 02:00", "is not a time such as"},
	}
	for _, tt := range tests {
		s, err := parseAt(tt.in)
		switch {
		case err != nil && strings.Contains(err.Error(), tt.want):
		case err == nil && s.String() == tt.want:
		default:
			t.Errorf("parseAt(%q) = %v, %v; want %q", tt.in, s, err, tt.want)
		}
	}
}

func TestScheduleString(t *testing.T) {
	for every, want := range map[time.Duration]string{
		168 * time.Hour: "every = 168h", 90 * time.Minute: "every = 1h30m", 2 * time.Second: "every = 2s",
		time.Hour + time.Second: "every = 1h0m1s", 1500 * time.Millisecond: "every = 1.5s", 10 * time.Minute: "every = 10m",
	} {
		if got := (Schedule{Every: every}).String(); got != want {
			t.Errorf("every %v: %q, want %q", every, got, want)
		}
	}
}

func TestScheduleFirstAndNext(t *testing.T) {
	weekly, _ := parseAt("Mon 02:00")
	weekly.loc = utc3
	daily, _ := parseAt("02:00")
	daily.loc = utc3
	every := Schedule{Every: time.Hour}
	boot := Schedule{OnBoot: true}
	// 2026-11-23 is a Monday.
	tests := []struct {
		name     string
		s        Schedule
		due, now string // due "" for first(now)
		want     string // "" for none
	}{
		{"every: first at once", every, "", "2026-11-23 10:17:00", "2026-11-23 10:17:00"},
		{"every: on time", every, "2026-11-23 10:00:00", "2026-11-23 10:00:00", "2026-11-23 11:00:00"},
		{"every: late by less than a period keeps the cadence", every, "2026-11-23 10:00:00", "2026-11-23 10:40:00", "2026-11-23 11:00:00"},
		{"every: missed periods collapse into one", every, "2026-11-23 10:00:00", "2026-11-23 15:30:00", "2026-11-23 16:00:00"},
		{"every: exactly on a later period", every, "2026-11-23 10:00:00", "2026-11-23 12:00:00", "2026-11-23 13:00:00"},
		{"on-boot: first at once", boot, "", "2026-11-23 10:17:00", "2026-11-23 10:17:00"},
		{"on-boot: never again", boot, "2026-11-23 10:17:00", "2026-11-23 10:17:00", ""},
		{"weekly: first later the same day", weekly, "", "2026-11-23 01:00:00", "2026-11-23 02:00:00"},
		{"weekly: first right on time", weekly, "", "2026-11-23 02:00:00", "2026-11-23 02:00:00"},
		{"weekly: first next week", weekly, "", "2026-11-23 02:00:01", "2026-11-30 02:00:00"},
		{"weekly: first from a Thursday", weekly, "", "2026-11-26 12:00:00", "2026-11-30 02:00:00"},
		{"weekly: on time", weekly, "2026-11-23 02:00:00", "2026-11-23 02:00:00", "2026-11-30 02:00:00"},
		{"weekly: three weeks missed collapse", weekly, "2026-11-02 02:00:00", "2026-11-24 09:00:00", "2026-11-30 02:00:00"},
		{"daily: first tomorrow", daily, "", "2026-11-23 03:00:00", "2026-11-24 02:00:00"},
		{"daily: on time", daily, "2026-11-23 02:00:00", "2026-11-23 02:00:00", "2026-11-24 02:00:00"},
		{"daily: across a month", daily, "2026-11-30 02:00:00", "2026-11-30 02:00:05", "2026-12-01 02:00:00"},
		{"daily: days missed collapse", daily, "2026-11-20 02:00:00", "2026-11-23 01:59:00", "2026-11-23 02:00:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := at3(tt.now)
			var got time.Time
			if tt.due == "" {
				got = tt.s.First(now)
			} else {
				got = tt.s.Next(at3(tt.due), now)
			}
			var want time.Time
			if tt.want != "" {
				want = at3(tt.want)
			}
			if !got.Equal(want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}
