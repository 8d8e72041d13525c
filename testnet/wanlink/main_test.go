package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// echoServer accepts connections on loopback and echoes what they send.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// TestProxyAddsTheProfileLatency sends round trips through a proxy of each
// profile without faults, to an echo server, and checks that each took at
// least twice the one-way latency less the jitter (a lower bound the toxic
// guarantees whatever the machine's load; no upper bound is asserted), and
// that the bytes came back intact.
func TestProxyAddsTheProfileLatency(t *testing.T) {
	for _, name := range []string{"lan", "metro", "continental"} {
		t.Run(name, func(t *testing.T) {
			prof := profiles()[name]
			c := dialEcho(t, prof, 30*time.Second)
			min := 2 * time.Duration(prof.OneWayMicros-prof.JitterMicros) * time.Microsecond
			for i := 0; i < 5; i++ {
				msg := []byte(strings.Repeat("x", 100) + string(rune('a'+i)))
				start := time.Now()
				if _, err := c.Write(msg); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(c, got); err != nil {
					t.Fatal(err)
				}
				if rtt := time.Since(start); rtt < min {
					t.Errorf("round trip %d took %v; the %s profile must add at least %v", i, rtt, name, min)
				}
				if !bytes.Equal(got, msg) {
					t.Errorf("round trip %d echoed %q, want %q", i, got, msg)
				}
			}
		})
	}
}

// TestEveryProfileStarts checks that Toxiproxy accepts every profile's toxics.
func TestEveryProfileStarts(t *testing.T) {
	for _, name := range profileNames() {
		t.Run(name, func(t *testing.T) {
			server, err := startProxies([]link{{"a-b", "127.0.0.1:0", "127.0.0.1:1"}}, profiles()[name], nil, 0, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			server.Collection.Clear()
		})
	}
}

func TestReadLinks(t *testing.T) {
	tests := []struct {
		name, text, wantErr string
		want                int
	}{
		{"two", "# comment\na-b 10.77.0.11:20002 127.0.0.1:4001\n\nb-a 10.77.0.12:20001 127.0.0.1:4001\n", "", 2},
		{"missing upstream", "a-b 10.77.0.11:20002\n", "want \"NAME LISTEN UPSTREAM\"", 0},
		{"empty", "# nothing\n", "lists no proxies", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "links")
			if err := os.WriteFile(path, []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			links, err := readLinks(path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("readLinks: error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(links) != tt.want {
				t.Fatalf("readLinks: %d links, error %v; want %d", len(links), err, tt.want)
			}
		})
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"unknown profile", []string{"-profile", "moon", "-links", "x"}, `unknown profile "moon"`},
		{"no links", []string{"-profile", "lan"}, "-links is required"},
		{"stray argument", []string{"-links", "x", "extra"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(context.Background(), tt.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("run(%q): error %v, want one containing %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// TestCloseAfterClosesAnOpenConnection checks the lossy profile's fault: with
// close_after on every direction, a connection first carries data (the echo
// comes back) and is then closed, which the client sees rather than a hang.
func TestCloseAfterClosesAnOpenConnection(t *testing.T) {
	prof := profile{CloseToxicity: 1, CloseAfterMillis: 50}
	c := dialEcho(t, prof, 20*time.Second)
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection was still open after 20 s; close_after did not fire")
	}
	if string(got) != "hello" {
		t.Errorf("before the close the connection carried %q, want %q", got, "hello")
	}
}

// TestCloseLinksTargetsOnlyTheNamedLink checks -close-links: the named
// proxy's connection is closed after its delay, while another proxy of the
// same process, with a profile that closes nothing, keeps its connection.
func TestCloseLinksTargetsOnlyTheNamedLink(t *testing.T) {
	echo := echoServer(t)
	server, err := startProxies([]link{{"a-b", "127.0.0.1:0", echo}, {"a-c", "127.0.0.1:0", echo}},
		profiles()["none"], map[string]bool{"a-b": true}, 50, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Collection.Clear() })
	dial := func(name string) net.Conn {
		t.Helper()
		p, err := server.Collection.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.DialTimeout("tcp", p.Listen, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		return c
	}
	closed, kept := dial("a-b"), dial("a-c")
	if err := closed.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(closed)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a-b was still open after 20 s; -close-links did not close it")
	}
	if string(got) != "hello" {
		t.Errorf("a-b carried %q before its close, want %q", got, "hello")
	}
	// a-b has been closed, 50 ms after its first byte; a-c, opened at the
	// same time, must still echo.
	if err := kept.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(kept, buf[:5]); err != nil {
		t.Fatalf("a-c: %v", err)
	}
	if _, err := kept.Write([]byte("again")); err != nil {
		t.Fatalf("a-c was closed, though only a-b is targeted: %v", err)
	}
	if _, err := io.ReadFull(kept, buf[5:]); err != nil {
		t.Fatalf("a-c was closed, though only a-b is targeted: %v", err)
	}
}

// dialEcho starts a proxy "a-b" of prof in front of an echo server and
// returns a connection to it, closed with the test, whose reads and writes
// fail after deadline.
func dialEcho(t *testing.T, prof profile, deadline time.Duration) net.Conn {
	t.Helper()
	server, err := startProxies([]link{{"a-b", "127.0.0.1:0", echoServer(t)}}, prof, nil, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Collection.Clear() })
	p, err := server.Collection.Get("a-b")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", p.Listen, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(deadline)); err != nil {
		t.Fatal(err)
	}
	return c
}
