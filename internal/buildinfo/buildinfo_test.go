package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.24.4",
		Main:      debug.Module{Path: "github.com/bandit-node/bandit-node", Version: "v0.2.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3f69a06aa0b1c2d3e4f5"},
			{Key: "vcs.time", Value: "2026-11-27T01:40:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	tests := []struct {
		name    string
		bi      *debug.BuildInfo
		version string
		want    string
	}{
		{"stamped", stamped, "", "v0.2.0 (3f69a06+modified, 2026-11-27T01:40:00Z, go1.24.4)"},
		{"linker version wins", stamped, "0.1.0-dev", "0.1.0-dev (3f69a06+modified, 2026-11-27T01:40:00Z, go1.24.4)"},
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.24.4"}, "", "(devel) (go1.24.4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromBuildInfo(tt.bi, tt.version).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadRunningBinary(t *testing.T) {
	i := Read("")
	if i.Version == "" || i.GoVersion == "" {
		t.Errorf("Read() = %+v, want a version and a Go version", i)
	}
}
