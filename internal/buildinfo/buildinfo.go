// Package buildinfo says which build of bandit-node is running: its
// version, the VCS revision and time it was built from, and the Go version
// that built it, as the Go toolchain stamps them into the binary
// (runtime/debug.ReadBuildInfo).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"strings"
)

// Info describes one build.
type Info struct {
	// Version is the program's version: the one set at link time, else
	// the module's version as the toolchain stamped it ("(devel)" for a
	// build from a work tree).
	Version string `json:"version"`
	// Module is the main module's path.
	Module string `json:"module,omitempty"`
	// Revision is the VCS revision built from, if stamped.
	Revision string `json:"revision,omitempty"`
	// Time is the VCS revision's commit time (RFC 3339), if stamped.
	Time string `json:"time,omitempty"`
	// Modified says the work tree had uncommitted changes.
	Modified bool `json:"modified,omitempty"`
	// GoVersion is the version of Go that built the binary.
	GoVersion string `json:"go_version"`
}

// Read returns the running binary's Info. version, when not empty, is the
// version set at link time and overrides the module's.
func Read(version string) Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{Version: orDevel(version), GoVersion: runtime.Version()}
	}
	return fromBuildInfo(bi, version)
}

// fromBuildInfo is Read on bi.
func fromBuildInfo(bi *debug.BuildInfo, version string) Info {
	info := Info{Version: version, Module: bi.Main.Path, GoVersion: bi.GoVersion}
	if info.Version == "" {
		info.Version = bi.Main.Version
	}
	info.Version = orDevel(info.Version)
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

func orDevel(v string) string {
	if v == "" {
		return "(devel)"
	}
	return v
}

// ShortRevision returns the first 7 digits of the revision, with
// "+modified" after it when the work tree had uncommitted changes, or "".
func (i Info) ShortRevision() string {
	if i.Revision == "" {
		return ""
	}
	rev := i.Revision
	if len(rev) > 7 {
		rev = rev[:7]
	}
	if i.Modified {
		rev += "+modified"
	}
	return rev
}

// String gives the build in one line, such as
// "0.1.0-dev (3f69a06+modified, 2026-11-27T01:40:00Z, go1.24.4)".
func (i Info) String() string {
	var parts []string
	if r := i.ShortRevision(); r != "" {
		parts = append(parts, r)
	}
	if i.Time != "" {
		parts = append(parts, i.Time)
	}
	parts = append(parts, i.GoVersion)
	return i.Version + " (" + strings.Join(parts, ", ") + ")"
}
