package api

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/events"
	"github.com/prometheus/client_golang/prometheus"
)

// readEvents reads n events ("id event data" lines) from an SSE stream.
func readEvents(t *testing.T, sc *bufio.Scanner, n int) []string {
	t.Helper()
	var out []string
	var cur []string
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(cur) > 0 {
				out = append(out, strings.Join(cur, " "))
				cur = nil
			}
		case strings.HasPrefix(line, ":"):
		default:
			_, v, _ := strings.Cut(line, ": ")
			cur = append(cur, v)
		}
	}
	if len(out) < n {
		t.Fatalf("read %d events, want %d (%v)", len(out), n, sc.Err())
	}
	return out
}

// TestEventStream: GET /v0/events streams what the hub publishes, as
// Server-Sent Events; a client resumes after the last event it read with
// Last-Event-ID, and learns when events it missed are no longer kept.
func TestEventStream(t *testing.T) {
	b := &fakeBackend{hub: events.New(4)}
	srv := httptest.NewServer(Handler(b, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry()))
	defer srv.Close()
	b.hub.Publish(events.KindPeer, map[string]any{"name": "globex", "connected": true}) // before: not streamed
	open := func(lastID string) (*bufio.Scanner, func()) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v0/events", nil)
		req.Header.Set("Authorization", "Bearer tok")
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
			t.Fatalf("%d %s", resp.StatusCode, ct)
		}
		return bufio.NewScanner(resp.Body), func() { cancel(); resp.Body.Close() }
	}
	sc, closeIt := open("")
	go func() {
		time.Sleep(50 * time.Millisecond)
		b.hub.Publish(events.KindSession, map[string]string{"id": "00000000000000a1", "state": "running"})
		b.hub.Publish(events.KindReload, map[string]string{"result": "refused"})
	}()
	got := readEvents(t, sc, 2)
	closeIt()
	if got[0] != `2 session {"id":"00000000000000a1","state":"running"}` || got[1] != `3 reload {"result":"refused"}` {
		t.Errorf("events %q", got)
	}
	// Resumed after event 2: event 3 again, then what came meanwhile.
	b.hub.Publish(events.KindPeer, map[string]any{"name": "globex", "connected": false})
	sc, closeIt = open("2")
	if got := readEvents(t, sc, 2); got[0] != `3 reload {"result":"refused"}` || !strings.HasPrefix(got[1], "4 peer ") {
		t.Errorf("resumed: %q", got)
	}
	closeIt()
	// Resumed after event 1 once the ring (4) holds 3–6 only: "lost" first.
	b.hub.Publish(events.KindPeer, 5)
	b.hub.Publish(events.KindPeer, 6)
	sc, closeIt = open("1")
	if got := readEvents(t, sc, 2); got[0] != `lost {"after":1}` || !strings.HasPrefix(got[1], "3 reload") {
		t.Errorf("fell behind: %q", got)
	}
	closeIt()
}
