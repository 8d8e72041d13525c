package sdnotify

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen opens a unix datagram socket at addr, as the service manager does.
func listen(t *testing.T, addr string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// receive reads one datagram from conn.
func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestNotify(t *testing.T) {
	tests := []struct {
		name string
		addr string
	}{
		{"path", filepath.Join(t.TempDir(), "notify")},
		{"abstract", fmt.Sprintf("@bandit-node-sdnotify-test-%d", os.Getpid())},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := listen(t, tt.addr)
			n, err := New(func(k string) string { return map[string]string{Socket: tt.addr}[k] })
			if err != nil || !n.Enabled() {
				t.Fatalf("New: %v, %v", n, err)
			}
			if err := n.Notify(Ready, Status("serving\n2 peers")); err != nil {
				t.Fatal(err)
			}
			if got, want := receive(t, conn), "READY=1\nSTATUS=serving 2 peers\n"; got != want {
				t.Errorf("received %q, want %q", got, want)
			}
			if err := n.Notify(Stopping); err != nil {
				t.Fatal(err)
			}
			if got := receive(t, conn); got != "STOPPING=1\n" {
				t.Errorf("received %q, want STOPPING=1", got)
			}
		})
	}
}

// TestUnset checks that without NOTIFY_SOCKET nothing is sent and nothing
// fails.
func TestUnset(t *testing.T) {
	n, err := New(func(string) string { return "" })
	if err != nil || n != nil || n.Enabled() {
		t.Fatalf("New without %s = %v, %v; want nil, nil", Socket, n, err)
	}
	if err := n.Notify(Ready); err != nil {
		t.Errorf("Notify on nil: %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, addr := range []string{"relative/notify", "@"} {
		if _, err := New(func(string) string { return addr }); err == nil || !strings.Contains(err.Error(), Socket) {
			t.Errorf("New(%q): err = %v, want one naming %s", addr, err, Socket)
		}
	}
	gone := &Notifier{addr: filepath.Join(t.TempDir(), "nobody-listens")}
	if err := gone.Notify(Ready); err == nil || !strings.Contains(err.Error(), "nobody-listens") {
		t.Errorf("Notify to a missing socket: err = %v, want one naming it", err)
	}
	n := &Notifier{addr: filepath.Join(t.TempDir(), "x")}
	if err := n.Notify("READY"); err == nil {
		t.Error("Notify accepted an assignment without =")
	}
}
