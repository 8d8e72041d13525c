package node

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// TestEventsOnDaemons: a client of GET /v0/events on a daemon sees a
// session it started run and complete, the refused reload it asked for,
// and its peer going when that daemon stops — each once, in order.
func TestEventsOnDaemons(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	tn := nodes[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+tn.APIAddr()+"/v0/events", nil)
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("t", 32))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	type event struct {
		kind string
		data string
	}
	evs := make(chan event, 100)
	go func() {
		defer close(evs)
		sc := bufio.NewScanner(resp.Body)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				e.kind = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
			case line == "" && e.kind != "":
				evs <- e
				e = event{}
			}
		}
	}()
	next := func(what string, match func(event) bool) {
		t.Helper()
		for {
			select {
			case e, ok := <-evs:
				if !ok {
					t.Fatalf("the stream ended before %s", what)
				}
				if match(e) {
					return
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("no event of %s", what)
			}
		}
	}
	id, err := tn.StartSession(pingSpec(3, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	state := func(want string) func(event) bool {
		return func(e event) bool {
			var s apitype.Session
			return e.kind == "session" && json.Unmarshal([]byte(e.data), &s) == nil && s.ID == id && s.State == want && s.Spec == ""
		}
	}
	next("the session running", state(stateRunning))
	next("the session completed", state(stateCompleted))
	if _, err := tn.Reload(ctx); err == nil {
		t.Fatal("a reload of a daemon started without a file succeeded")
	}
	next("the refused reload", func(e event) bool { return e.kind == "reload" && strings.Contains(e.data, `"result":"refused"`) })
	nodes[1].stop()
	next("node2 going", func(e event) bool {
		return e.kind == "peer" && strings.Contains(e.data, `"name":"node2"`) && strings.Contains(e.data, `"connected":false`)
	})
}
