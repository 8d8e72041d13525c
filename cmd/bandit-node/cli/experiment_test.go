package cli

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentFlagRanges checks that a count the operator typed as 0 or
// less is a usage error naming the flag, not a silent run of the default
// grid. The context is cancelled, so that a command that wrongly accepts its
// flags stops at once instead of running an experiment.
func TestExperimentFlagRanges(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"bai", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"bai", "--runs", "-3"}, "--runs -3: must be at least 1"},
		{[]string{"bai", "--workers", "0"}, "--workers 0: must be at least 1"},
		{[]string{"bai", "--problem", "0"}, "--problem 0: the paper has problems 1 and 2"},
		{[]string{"bai", "--problem", "3"}, "--problem 3"},
		{[]string{"pfcb", "--rounds", "0"}, "--rounds 0: must be at least 1"},
		{[]string{"pfcb", "--rounds", "-100"}, "--rounds -100: must be at least 1"},
		{[]string{"pfcb", "--instances", "0"}, "--instances 0: must be at least 1"},
		{[]string{"pfcb", "--instances", "-1"}, "--instances -1: must be at least 1"},
		{[]string{"pfcb", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"pfcb", "--workers", "-2"}, "--workers -2: must be at least 1"},
		{[]string{"mpccb", "--runs", "0"}, "--runs 0: must be at least 1"},
		{[]string{"mpccb", "--steps", "0"}, "--steps 0: must be at least 1"},
		{[]string{"mpccb", "--steps", "50"}, "--steps 50: must be within 100..60000"},
		{[]string{"mpccb", "--steps", "60001"}, "--steps 60001: must be within 100..60000"},
		{[]string{"mpccb", "--timing-steps", "0"}, "--timing-steps 0: must be at least 1"},
		{[]string{"mpccb", "--timing-repeats", "-1"}, "--timing-repeats -1: must be at least 1"},
		{[]string{"mpccb", "--workers", "0", "--quick"}, "--workers 0: must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := append([]string{"experiment"}, tt.args...)
			args = append(args, "--out", t.TempDir(), "--quiet")
			err := Run(ctx, args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || ExitCode(err) != 2 {
				t.Errorf("err = %v (exit %d), want a usage error with %q", err, ExitCode(err), tt.want)
			}
		})
	}
}

// TestExperimentFlagsAccepted checks that valid counts pass the checks: the
// cancelled context is the first thing the experiment meets.
func TestExperimentFlagsAccepted(t *testing.T) {
	for _, args := range [][]string{
		{"bai", "--runs", "1", "--agents", "64", "--workers", "1", "--problem", "2"},
		{"bai"},
		{"pfcb", "--rounds", "1000", "--instances", "1", "--runs", "1", "--workers", "1"},
		{"pfcb"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			args := append(append([]string{"experiment"}, args...), "--out", filepath.Join(t.TempDir(), "out"), "--quiet")
			if err := Run(ctx, args, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want context.Canceled (the flags accepted)", err)
			}
		})
	}
}
