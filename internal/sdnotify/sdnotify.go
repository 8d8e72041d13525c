// Package sdnotify tells the service manager (systemd) how the daemon is
// doing, through the notification protocol of sd_notify(3): datagrams of
// newline-separated VAR=VALUE assignments, such as READY=1, STOPPING=1 or
// STATUS=..., sent to the unix datagram socket named by the NOTIFY_SOCKET
// environment variable. A name starting with "@" is in Linux's abstract
// namespace. When NOTIFY_SOCKET is unset nothing is sent at all, so a
// daemon started by hand or by another supervisor is unaffected.
//
// The protocol is the one systemd documents as stable
// (https://systemd.io/NOTIFY/ "without linking to libsystemd"); this
// package needs neither cgo nor a dependency.
package sdnotify

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Socket is the environment variable that names the notification socket.
const Socket = "NOTIFY_SOCKET"

// Well-known assignments (sd_notify(3)).
const (
	// Ready says the service finished starting up.
	Ready = "READY=1"
	// Stopping says the service began shutting down.
	Stopping = "STOPPING=1"
	// Reloading says the service began reloading its configuration; it is
	// to be followed by Ready once done.
	Reloading = "RELOADING=1"
)

// Status returns the assignment of a free-form status line, which
// `systemctl status` shows. Newlines in s become spaces.
func Status(s string) string {
	return "STATUS=" + strings.ReplaceAll(s, "\n", " ")
}

// Notifier sends notifications to one socket. The zero value and a nil
// *Notifier send nothing.
type Notifier struct {
	addr string
}

// New returns the Notifier for the socket named by getenv(Socket), such as
// os.Getenv; with no socket named it returns nil, which sends nothing. A
// name that is neither an absolute path nor an abstract "@" name is an
// error: the service manager could never have set it.
func New(getenv func(string) string) (*Notifier, error) {
	addr := getenv(Socket)
	switch {
	case addr == "":
		return nil, nil
	case strings.HasPrefix(addr, "/"), strings.HasPrefix(addr, "@") && len(addr) > 1:
		return &Notifier{addr: addr}, nil
	}
	return nil, fmt.Errorf("%s=%q: want an absolute path or an abstract @name", Socket, addr)
}

// Enabled reports whether n sends anything.
func (n *Notifier) Enabled() bool { return n != nil && n.addr != "" }

// Notify sends the assignments, such as Ready and Status("listening"), in
// one datagram. It does nothing when n is not Enabled.
func (n *Notifier) Notify(assignments ...string) error {
	if !n.Enabled() || len(assignments) == 0 {
		return nil
	}
	for _, a := range assignments {
		if !strings.Contains(a, "=") || strings.Contains(a, "\n") {
			return fmt.Errorf("notifying the service manager: %q is not one VAR=VALUE assignment", a)
		}
	}
	// Go's net package maps a leading "@" to Linux's abstract namespace.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: n.addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notifying the service manager at %s=%s: %w", Socket, n.addr, err)
	}
	msg := strings.Join(assignments, "\n") + "\n"
	_, werr := conn.Write([]byte(msg))
	cerr := conn.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("notifying the service manager at %s=%s: %w", Socket, n.addr, err)
	}
	return nil
}
