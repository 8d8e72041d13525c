package main

import (
	"slices"
	"testing"
)

func TestSysmonEnv(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		environ []string
		want    []string // nil: no re-exec
	}{
		{"run, no GODEBUG", []string{"run", "--config", "c.toml"}, []string{"HOME=/root"}, []string{"HOME=/root", "GODEBUG=" + sysmonTrace}},
		{"bench", []string{"bench", "pattern"}, nil, []string{"GODEBUG=" + sysmonTrace}},
		{"other GODEBUG settings kept", []string{"run"}, []string{"GODEBUG=madvdontneed=1", "X=1"}, []string{"GODEBUG=madvdontneed=1," + sysmonTrace, "X=1"}},
		{"two GODEBUG entries: the first counts", []string{"run"}, []string{"GODEBUG=a=1", "GODEBUG=schedtrace=5"}, []string{"GODEBUG=a=1," + sysmonTrace, "GODEBUG=schedtrace=5"}},
		{"empty GODEBUG", []string{"run"}, []string{"GODEBUG="}, []string{"GODEBUG=" + sysmonTrace}},
		{"schedtrace already set", []string{"run"}, []string{"GODEBUG=gctrace=1, schedtrace=1000"}, nil},
		{"opted out", []string{"run"}, []string{sysmonOptOut + "=default"}, nil},
		{"other opt-out value", []string{"run"}, []string{sysmonOptOut + "=on"}, []string{sysmonOptOut + "=on", "GODEBUG=" + sysmonTrace}},
		{"help runs as it is", []string{"run", "-h"}, nil, nil},
		{"simulate runs as it is", []string{"simulate", "spec.toml"}, nil, nil},
		{"session runs as it is", []string{"session", "list"}, nil, nil},
		{"no command", nil, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sysmonEnv(tc.args, tc.environ)
			if (got == nil) != (tc.want == nil) || !slices.Equal(got, tc.want) {
				t.Errorf("sysmonEnv(%q, %q) = %q, want %q", tc.args, tc.environ, got, tc.want)
			}
		})
	}
}
