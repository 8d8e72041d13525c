package cli

import (
	"runtime"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/internal/buildinfo"
	"github.com/bandit-node/bandit-node/internal/testutil"
)

// TestVersion checks both forms of `version`: the one line names the
// program, its version and the Go version; --json carries buildinfo.Info.
func TestVersion(t *testing.T) {
	out, _, err := run(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	if want := "bandit-node " + Version + " ("; !strings.HasPrefix(out, want) || !strings.Contains(out, runtime.Version()+")\n") {
		t.Errorf("version printed %q, want %q...%s)", out, want, runtime.Version())
	}
	out, _, err = run(t, "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	info := testutil.DecodeJSON[buildinfo.Info](t, []byte(out))
	if info != buildinfo.Read(Version) || info.GoVersion != runtime.Version() || info.Version != Version {
		t.Errorf("version --json = %+v, want %+v", info, buildinfo.Read(Version))
	}
	if !strings.Contains(out, `"go_version"`) {
		t.Errorf("version --json lacks go_version:\n%s", out)
	}
}
