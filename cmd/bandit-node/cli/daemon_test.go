package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
)

// startDaemon runs `bandit-node run --config cfg --log-level warn` in this
// process, as the tests' daemons. The returned stop cancels it and waits
// for it to return, 60 s at most, failing the test on its error; it runs
// once, when called or at the test's end.
func startDaemon(t *testing.T, cfg string) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{"run", "--config", cfg, "--log-level", "warn"}, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("daemon of %s: %v", cfg, err)
				}
			case <-time.After(60 * time.Second):
				t.Errorf("the daemon of %s did not stop in 60 s", cfg)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitServing waits, 20 s at most, for the daemon of cfg to answer on its
// control API.
func waitServing(t *testing.T, cfg string) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, "the daemon of "+cfg+" to serve its control API", func() bool {
		_, _, err := run(t, "peers", "--config", cfg)
		return err == nil
	})
}

// connectedToOne reports whether the daemon of cfg lists one peer, and
// that one connected.
func connectedToOne(t *testing.T, cfg string) func() bool {
	return func() bool {
		out, _, err := run(t, "peers", "--config", cfg, "--json")
		var peers []apitype.Peer
		return err == nil && json.Unmarshal([]byte(out), &peers) == nil && len(peers) == 1 && peers[0].Connected
	}
}

// pingSession starts the ping session spec from the daemon of cfg and
// waits for it (2 min at most); it fails the test unless the session
// completed with a median round trip. It returns the result and the
// command's stderr (its progress).
func pingSession(t *testing.T, cfg, spec, what string) (apitype.Result, string) {
	t.Helper()
	out, stderr, err := run(t, "session", "start", "--config", cfg, spec, "--wait", "--timeout", "2m", "--json")
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, stderr)
	}
	res := testutil.DecodeJSON[apitype.Result](t, []byte(out))
	if res.Session.State != apitype.StateCompleted || !strings.Contains(string(res.Result), "median_us") {
		t.Fatalf("%s: %+v", what, res)
	}
	return res, stderr
}
