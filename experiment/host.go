package experiment

import (
	"os"
	"strings"

	"github.com/bandit-node/bandit-node/internal/buildinfo"
)

// loadAverage reads the load averages on Linux, or returns "".
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// buildRevision is the VCS revision the binary was built from, if stamped,
// such as "3f69a06, with uncommitted changes".
func buildRevision() string {
	info := buildinfo.Read("")
	rev := info.ShortRevision()
	if info.Modified {
		rev = strings.TrimSuffix(rev, "+modified") + ", with uncommitted changes"
	}
	return rev
}
