//go:build linux

package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// environWithout returns the test's environment without the variables
// named.
func environWithout(names ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && k != n
		}
		if keep {
			env = append(env, kv)
		}
	}
	return env
}

// logLines sends the lines read from r on the returned channel, which is
// closed at EOF.
func logLines(r io.Reader) <-chan string {
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines
}

// notification is one datagram received on the notify socket.
type notification struct {
	text string
	pid  int32 // the sender's, from SCM_CREDENTIALS
}

// notifySocket plays systemd's side of the notification protocol: a unix
// datagram socket that, like systemd's, asks the kernel for each sender's
// credentials (SO_PASSCRED), the way NotifyAccess=main tells the main
// process from others.
type notifySocket struct {
	conn *net.UnixConn
	path string
}

func newNotifySocket(t *testing.T) *notifySocket {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_PASSCRED, 1)
	}); err != nil || serr != nil {
		t.Fatalf("SO_PASSCRED: %v %v", err, serr)
	}
	return &notifySocket{conn: conn, path: path}
}

// receive waits up to limit for the next datagram.
func (s *notifySocket) receive(t *testing.T, limit time.Duration) notification {
	t.Helper()
	if err := s.conn.SetReadDeadline(time.Now().Add(limit)); err != nil {
		t.Fatal(err)
	}
	buf, oob := make([]byte, 4096), make([]byte, syscall.CmsgSpace(syscall.SizeofUcred))
	n, oobn, _, _, err := s.conn.ReadMsgUnix(buf, oob)
	if err != nil {
		t.Fatalf("reading the notify socket: %v", err)
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the notification came without its sender's credentials: %d messages, %v", len(msgs), err)
	}
	cred, err := syscall.ParseUnixCredentials(&msgs[0])
	if err != nil {
		t.Fatal(err)
	}
	return notification{text: string(buf[:n]), pid: cred.Pid}
}

// TestNotifySocket runs the real binary's `run` as systemd's Type=notify
// does: with NOTIFY_SOCKET set, it must send READY=1 once it serves, and
// STOPPING=1 when SIGTERM starts its shutdown, both from the process
// systemd started (NotifyAccess=main), although it restarts itself first
// for [runtime] schedtrace.
func TestNotifySocket(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts a daemon")
	}
	dir := t.TempDir()
	bin := buildBinary(t, nil)
	nodeDir := filepath.Join(dir, "acme")
	if out, err := exec.Command(bin, "init", "--dir", nodeDir, "--listen", "/ip4/127.0.0.1/tcp/0",
		"--api", "127.0.0.1:0").CombinedOutput(); err != nil {
		t.Fatalf("init: %v\n%s", err, out)
	}
	sock := newNotifySocket(t)
	cmd := exec.Command(bin, "run", "--config", filepath.Join(nodeDir, "config.toml"))
	cmd.Env = append(environWithout("GODEBUG", "NOTIFY_SOCKET"), "NOTIFY_SOCKET="+sock.path)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := logLines(stderr)

	ready := sock.receive(t, 30*time.Second)
	if !strings.HasPrefix(ready.text, "READY=1\n") || !strings.Contains(ready.text, "STATUS=acme: ") {
		t.Errorf("first notification %q, want READY=1 and a STATUS line", ready.text)
	}
	if ready.pid != int32(cmd.Process.Pid) {
		t.Errorf("READY=1 came from PID %d, not the main process %d: NotifyAccess=main would drop it", ready.pid, cmd.Process.Pid)
	}
	// By READY=1 the daemon has restarted itself and logged that it started.
	var restarted, started bool
	for !started {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("the daemon's log ended before it started: %v", cmd.Wait())
			}
			restarted = restarted || strings.Contains(l, "restarting with GODEBUG")
			started = strings.Contains(l, `msg="node started"`)
		case <-time.After(30 * time.Second):
			t.Fatal("no \"node started\" log line within 30 s of READY=1")
		}
	}
	if !restarted {
		t.Error("the daemon did not restart itself for [runtime] schedtrace: the test does not cover the restart")
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stopping := sock.receive(t, 30*time.Second)
	if !strings.HasPrefix(stopping.text, "STOPPING=1\n") || stopping.pid != int32(cmd.Process.Pid) {
		t.Errorf("after SIGTERM: %q from PID %d, want STOPPING=1 from %d", stopping.text, stopping.pid, cmd.Process.Pid)
	}
	go func() {
		for range lines {
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the daemon did not stop cleanly on SIGTERM: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop within 30 s of SIGTERM")
	}
	if err := sock.conn.SetReadDeadline(time.Now()); err != nil {
		t.Fatal(err)
	}
	if n, _, _, _, err := sock.conn.ReadMsgUnix(make([]byte, 4096), nil); err == nil {
		t.Errorf("a notification after STOPPING=1 (%d bytes)", n)
	}
}
