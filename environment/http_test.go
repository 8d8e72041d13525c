package environment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// testService answers requests as envprog does, or misbehaves as the
// request's step says: 100 a 500, 101 a bad body, 102 late, 103 a
// mismatched id, 104 an error answer, 105 a huge body.
func testService(t *testing.T) *httptest.Server {
	t.Helper()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var q struct {
			ID   uint64 `json:"id"`
			Kind string `json:"kind"`
			Step int64  `json:"step"`
			Arms []int  `json:"arms"`
		}
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" ||
			r.Header.Get("Bandit-Environment-Version") != "1" || r.Header.Get("Bandit-Session") != "s-1" || r.Header.Get("Bandit-Role") != "samba data_owner 3" {
			http.Error(w, "bad request headers", http.StatusBadRequest)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&q); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch q.Step {
		case 100:
			http.Error(w, "database unavailable", http.StatusInternalServerError)
		case 101:
			io.WriteString(w, "<html>hello</html>")
		case 102:
			select {
			case <-time.After(10 * time.Second):
			case <-stop:
			case <-r.Context().Done():
			}
		case 103:
			fmt.Fprintf(w, `{"id":%d,"reward":1}`, q.ID+1)
		case 104:
			fmt.Fprintf(w, `{"id":%d,"error":"no such arm"}`, q.ID)
		case 105:
			io.WriteString(w, strings.Repeat(" ", MaxAnswerBytes+10))
		default:
			fmt.Fprintf(w, `{"id":%d,"reward":%d.5}`, q.ID, q.Arms[0])
		}
	}))
	t.Cleanup(func() {
		close(stop)
		srv.Close()
	})
	return srv
}

func newTestHTTP(t *testing.T, url string) *HTTP {
	t.Helper()
	cfg := DefaultHTTPConfig()
	cfg.URL = url
	cfg.RequestTimeout = 300 * time.Millisecond
	h, err := NewHTTP(cfg, testSession())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestHTTP(t *testing.T) {
	srv := testService(t)
	h := newTestHTTP(t, srv.URL+"/answer")
	for i := int64(0); i < 3; i++ {
		o, err := h.Answer(context.Background(), pull(uint64(i+1), i, 2))
		if err != nil {
			t.Fatal(err)
		}
		if want := (protocol.Outcome{ID: uint64(i + 1), Rewards: []float64{2.5}}); !reflect.DeepEqual(o, want) {
			t.Errorf("got %+v, want %+v", o, want)
		}
	}
	tests := []struct {
		step int64
		want string
	}{
		{100, `status 500 Internal Server Error, body "database unavailable"`},
		{101, `answered "<html>hello</html>": malformed answer`},
		{102, "no answer within 300ms"},
		{103, "the answer's id is 12, want 11"},
		{104, `it answered with an error: "no such arm"`},
		{105, "longer than 1048576 bytes"},
	}
	for _, tt := range tests {
		_, err := h.Answer(context.Background(), pull(11, tt.step, 0))
		want := fmt.Sprintf("%s: pull at step %d: POST %s/answer", testLabel, tt.step, srv.URL)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("step %d: got %v, want %q and %q", tt.step, err, want, tt.want)
		}
	}
	// The environment goes on after a failed request.
	if _, err := h.Answer(context.Background(), pull(12, 5, 1)); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if _, err := h.Answer(context.Background(), pull(13, 6, 1)); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: got %v, want ErrClosed", err)
	}
}

func TestHTTPUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	h := newTestHTTP(t, url)
	_, err := h.Answer(context.Background(), pull(1, 4, 0))
	if err == nil || !strings.Contains(err.Error(), testLabel+": pull at step 4: POST "+url) {
		t.Errorf("got %v", err)
	}
}

func TestHTTPCloseDuringAnswer(t *testing.T) {
	srv := testService(t)
	cfg := DefaultHTTPConfig()
	cfg.URL = srv.URL
	h, err := NewHTTP(cfg, testSession())
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := h.Answer(context.Background(), pull(1, 102, 0))
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	h.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("got %v, want ErrClosed", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Answer did not return after Close")
	}
}

func TestHTTPConfigValidate(t *testing.T) {
	tests := []struct {
		url  string
		want string // "" for valid
	}{
		{"http://127.0.0.1:8080/answer", ""},
		{"http://localhost:8080/", ""},
		{"http://[::1]:8080/", ""},
		{"https://env.acme.example/answer", ""},
		{"http://10.0.0.5:8080/", "plain http only to a loopback address"},
		{"ftp://127.0.0.1/", "want an http or https URL"},
		{"https://user:secret@env.acme.example/", "holds credentials"},
		{"", "is not a URL"},
		{"https:///path", "has no host"},
	}
	for _, tt := range tests {
		c := DefaultHTTPConfig()
		c.URL = tt.url
		err := c.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%q: got %v, want %q", tt.url, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows the password: %v", tt.url, err)
		}
	}
	c := DefaultHTTPConfig()
	c.URL = "http://127.0.0.1/"
	c.RequestTimeout = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "request_timeout") {
		t.Errorf("got %v", err)
	}
}

// TestHTTPKeepAlive: queries reuse one connection.
func TestHTTPKeepAlive(t *testing.T) {
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":1,"reward":1}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	h := newTestHTTP(t, srv.URL)
	for i := int64(0); i < 5; i++ {
		if _, err := h.Answer(context.Background(), pull(1, i, 0)); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 {
		t.Errorf("5 queries opened %d connections, want 1", conns)
	}
}
