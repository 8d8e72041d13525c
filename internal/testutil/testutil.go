// Package testutil holds the helpers that the tests of several packages
// share. It is for tests only and imports nothing of this module's, so that
// the tests of any package may use it.
package testutil

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port that was free a moment ago. It picks
// from below the kernel's ephemeral range (32768 and up), so that outgoing
// connections, which take ephemeral ports, cannot grab it before the node
// listens on it.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		return port
	}
	t.Fatal("no free loopback port in [20000, 32000)")
	return 0
}

// WaitFor calls cond every 20 ms until it returns true, and fails the test
// if it has not within limit; what names the awaited condition in the
// failure.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// DecodeJSON decodes data into a value of T, or fails the test showing what
// it could not decode.
func DecodeJSON[T any](t testing.TB, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %T: %v\n%s", v, err, data)
	}
	return v
}
