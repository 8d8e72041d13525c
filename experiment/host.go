package experiment

import (
	"os"
	"strings"

	"github.com/bandit-node/bandit-node/internal/buildinfo"
)

// LoadAverage reads the load averages on Linux, or returns "".
func LoadAverage() string {
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

// BuildRevision is the VCS revision the binary was built from, if stamped,
// such as "3f69a06, with uncommitted changes".
func BuildRevision() string {
	info := buildinfo.Read("")
	rev := info.ShortRevision()
	if info.Modified {
		rev = strings.TrimSuffix(rev, "+modified") + ", with uncommitted changes"
	}
	return rev
}
