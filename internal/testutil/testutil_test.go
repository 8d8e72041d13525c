package testutil

import (
	"fmt"
	"net"
	"testing"
	"time"
)

func TestFreePortIsFree(t *testing.T) {
	port := FreePort(t)
	if port < 20000 || port >= 32000 {
		t.Fatalf("port %d outside [20000, 32000)", port)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d is not free: %v", port, err)
	}
	ln.Close()
}

func TestWaitForReturnsOnceTrue(t *testing.T) {
	calls := 0
	WaitFor(t, 5*time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("cond called %d times, want 3", calls)
	}
}

func TestDecodeJSON(t *testing.T) {
	got := DecodeJSON[struct {
		A int    `json:"a"`
		B string `json:"b"`
	}](t, []byte(`{"a": 1, "b": "x"}`))
	if got.A != 1 || got.B != "x" {
		t.Errorf("decoded %+v", got)
	}
}
