package cli

import (
	"slices"
	"testing"
)

func TestSchedtraceEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    []string // nil: runs as it is
	}{
		{"no GODEBUG", []string{"HOME=/root"}, []string{"HOME=/root", "GODEBUG=" + schedtraceSetting}},
		{"empty environment", nil, []string{"GODEBUG=" + schedtraceSetting}},
		{"other GODEBUG settings kept", []string{"GODEBUG=madvdontneed=1", "X=1"}, []string{"GODEBUG=madvdontneed=1," + schedtraceSetting, "X=1"}},
		{"two GODEBUG entries: the first counts", []string{"GODEBUG=a=1", "GODEBUG=schedtrace=5"}, []string{"GODEBUG=a=1," + schedtraceSetting, "GODEBUG=schedtrace=5"}},
		{"empty GODEBUG", []string{"GODEBUG="}, []string{"GODEBUG=" + schedtraceSetting}},
		{"schedtrace already set", []string{"GODEBUG=gctrace=1, schedtrace=1000"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := schedtraceEnv(tc.environ)
			if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("schedtraceEnv(%q) = %q, want %q", tc.environ, got, tc.want)
			}
		})
	}
}
