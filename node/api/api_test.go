package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/prometheus/client_golang/prometheus"
)

// fakeBackend holds one session, "00000000000000a1", and refuses to cancel
// it.
type fakeBackend struct {
	started []string
	extra   int // sessions listed after knownID
	hub     *events.Hub
}

func (f *fakeBackend) Events() *events.Hub {
	if f.hub == nil {
		f.hub = events.New(8)
	}
	return f.hub
}

const knownID = "00000000000000a1"

func (f *fakeBackend) NodeInfo() apitype.NodeInfo { return apitype.NodeInfo{Name: "acme"} }
func (f *fakeBackend) Peers() []apitype.Peer      { return []apitype.Peer{{Name: "globex"}} }
func (f *fakeBackend) RefusedPeers() apitype.RefusedPeers {
	return apitype.RefusedPeers{PeerCard: "[[peers]]\nname = \"acme\"\n", Refused: []apitype.RefusedPeer{{PeerID: "12D3KooWstranger", Count: 3}}}
}

// AddPeer takes a card naming "initech", refuses one naming "globex" as
// known and anything else as no card.
func (f *fakeBackend) AddPeer(ctx context.Context, card []byte) (apitype.PeerAdded, error) {
	switch {
	case strings.Contains(string(card), `"initech"`):
		return apitype.PeerAdded{Name: "initech", PeerID: "12D3KooWinitech", Change: apitype.ConfigChange{PeersAdded: []string{"initech"}}}, nil
	case strings.Contains(string(card), `"globex"`):
		return apitype.PeerAdded{}, &Error{Code: "peer.exists", Status: http.StatusConflict, Err: errors.New("the address book already has a peer named \"globex\"")}
	}
	return apitype.PeerAdded{}, &Error{Code: "peer.card_invalid", Status: http.StatusBadRequest, Err: errors.New("not a peer card")}
}

func (f *fakeBackend) Policy() apitype.Policy {
	return apitype.Policy{Node: "acme", Protocols: []apitype.ProtocolPolicy{{Protocol: "samba", Enabled: true, Initiators: []string{"globex"},
		Roles:  []apitype.RolePolicy{{Role: "data_owner", Accepted: true, Environment: "simulated"}},
		Limits: []apitype.PolicyLimit{{Key: "paillier_bits", Bound: "min", Value: 2048, Default: true}}}}}
}
func (f *fakeBackend) Sessions(name string, byName bool) []apitype.Session {
	out := []apitype.Session{{ID: knownID, Name: "weekly", Spec: "secret spec text"}}
	for i := range f.extra {
		out = append(out, apitype.Session{ID: fmt.Sprintf("%016x", 0xb0+i)})
	}
	return out
}
func (f *fakeBackend) Standing() []apitype.Standing { return nil }
func (f *fakeBackend) Session(id string) (apitype.Result, error) {
	if id != knownID {
		return apitype.Result{}, fmt.Errorf("no record of %s: %w", id, fs.ErrNotExist)
	}
	return apitype.Result{Session: apitype.Session{ID: knownID, State: apitype.StateRunning}}, nil
}
func (f *fakeBackend) StartSession(spec []byte) (string, error) {
	if !strings.Contains(string(spec), "protocol") {
		return "", errors.New("spec: missing protocol")
	}
	if strings.Contains(string(spec), "cont") {
		return "", fmt.Errorf("spec: %w", &protocol.KeyError{Code: protocol.KeyUnknown, Key: "params.cont", Err: errors.New("unknown key params.cont")})
	}
	if strings.Contains(string(spec), "weak") {
		return "", &Error{Code: "policy.declined", Status: http.StatusForbidden, Err: errors.New("paillier_bits 512 is under acme's minimum 2048")}
	}
	f.started = append(f.started, string(spec))
	return knownID, nil
}
func (f *fakeBackend) CancelSession(id string) error { return errors.New("session already ended") }
func (f *fakeBackend) SessionLogs(id string, since int64) apitype.SessionLogs {
	return apitype.SessionLogs{}
}
func (f *fakeBackend) Reload(ctx context.Context) (apitype.ConfigChange, error) {
	return apitype.ConfigChange{}, errors.New("config: node.name: changing it needs a restart")
}

func (f *fakeBackend) CheckConfig(ctx context.Context, text []byte) (apitype.ConfigChange, error) {
	return f.Reload(ctx)
}

// TestRoutes: each route's status and body for the Backend's answers,
// behind the token.
func TestRoutes(t *testing.T) {
	b := &fakeBackend{}
	h := Handler(b, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	for _, tc := range []struct {
		method, path, token, body string
		code                      int
		want                      string // in the body
	}{
		{"GET", "/v0/node", "", "", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"GET", "/v0/node", "wrong", "", http.StatusUnauthorized, "missing or wrong bearer token"},
		{"GET", "/v0/node", "tok", "", http.StatusOK, `"name": "acme"`},
		{"GET", "/v0/peers", "tok", "", http.StatusOK, `"name": "globex"`},
		{"GET", "/v0/policy", "readtok", "", http.StatusOK, `"key": "paillier_bits"`},
		{"GET", "/v0/peers/refused", "readtok", "", http.StatusOK, `"count": 3`},
		{"POST", "/v0/peers", "readtok", `name = "initech"`, http.StatusForbidden, "needs the operator token"},
		{"POST", "/v0/peers", "tok", "[[peers]]\nname = \"initech\"\n", http.StatusCreated, `"peers_added": [`},
		{"POST", "/v0/peers", "tok", strings.Repeat("#", 64<<10+1), http.StatusBadRequest, "more than 65536 bytes"},
		{"GET", "/v0/sessions", "tok", "", http.StatusOK, `"id": "00000000000000a1"`},
		{"GET", "/v0/sessions/00000000000000ff", "tok", "", http.StatusNotFound, "no session 00000000000000ff on acme"},
		{"GET", "/v0/sessions/" + knownID, "tok", "", http.StatusOK, `"state": "running"`},
		{"GET", "/v0/sessions/" + knownID + "/result", "tok", "", http.StatusOK, `"session"`},
		{"GET", "/v0/sessions/" + knownID + "/logs?since=-1", "tok", "", http.StatusBadRequest, "want a line number"},
		{"GET", "/v0/sessions/" + knownID + "/logs", "tok", "", http.StatusOK, `"lines": []`},
		{"POST", "/v0/sessions", "tok", "nothing", http.StatusBadRequest, "spec: missing protocol"},
		{"POST", "/v0/sessions", "tok", `protocol = "ping"`, http.StatusCreated, `"id": "00000000000000a1"`},
		{"POST", "/v0/sessions/" + knownID + "/cancel", "tok", "", http.StatusConflict, "already ended"},
		{"POST", "/v0/config/reload", "tok", "", http.StatusBadRequest, "needs a restart"},
		{"GET", "/metrics", "tok", "", http.StatusOK, ""},
		{"GET", "/v0/nothing", "tok", "", http.StatusNotFound, "GET /v0/nothing: no such route"},
		{"GET", "/debug/pprof", "tok", "", http.StatusTemporaryRedirect, "/debug/pprof/"},
		{"DELETE", "/v0/sessions/" + knownID, "tok", "", http.StatusMethodNotAllowed, "allowed: GET, HEAD"},
		{"GET", "/v0/nothing", "", "", http.StatusUnauthorized, "missing or wrong bearer token"},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("%d %s, want %d with %q", rec.Code, rec.Body, tc.code, tc.want)
			}
			if tc.code >= 400 {
				var e apitype.Error
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" || e.Detail != e.Error ||
					e.Status != tc.code || e.Code == "" || e.Type != "about:blank" {
					t.Errorf("error body %q is not a problem with a code", rec.Body)
				}
				if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
					t.Errorf("error answered as %q, want application/problem+json", ct)
				}
			}
		})
	}
	if len(b.started) != 1 {
		t.Errorf("started %d sessions, want 1", len(b.started))
	}
}

// TestErrorCodes: an error answers with its class: the route's code, a
// KeyError's key and code, or the Backend's own Error (and its status).
func TestErrorCodes(t *testing.T) {
	h := Handler(&fakeBackend{}, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	for _, c := range []struct {
		method, path, body string
		status             int
		code, field        string
	}{
		{"POST", "/v0/sessions", "nothing", 400, "spec.invalid", ""},
		{"POST", "/v0/sessions", "protocol = \"ping\"\n[params]\ncont = 3\n", 400, "spec.unknown_key", "params.cont"},
		{"POST", "/v0/sessions", "protocol = \"samba\"\n# weak\n", 403, "policy.declined", ""},
		{"GET", "/v0/sessions/00000000000000ff", "", 404, "session.not_found", ""},
		{"GET", "/v0/nothing", "", 404, "route.not_found", ""},
		{"PUT", "/v0/node", "", 405, "route.method_not_allowed", ""},
		{"POST", "/v0/sessions/" + knownID + "/cancel", "", 409, "session.not_active", ""},
		{"POST", "/v0/config/reload", "", 400, "config.refused", ""},
		{"POST", "/v0/peers", "[[peers]]\nname = \"globex\"\n", 409, "peer.exists", ""},
		{"POST", "/v0/peers", "nonsense", 400, "peer.card_invalid", ""},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var e apitype.Error
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != c.status || e.Status != c.status || e.Code != c.code || e.Field != c.field {
			t.Errorf("%s %s: %d %s, want %d with code %q field %q", c.method, c.path, rec.Code, rec.Body, c.status, c.code, c.field)
		}
	}
}

// TestSessionPages: ?limit pages the list of sessions, newest first, with a
// Link to the next page; following the links lists every session once.
func TestSessionPages(t *testing.T) {
	h := Handler(&fakeBackend{extra: 6}, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	get := func(path string) (*httptest.ResponseRecorder, []apitype.Session) {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out []apitype.Session
		json.Unmarshal(rec.Body.Bytes(), &out)
		return rec, out
	}
	var seen []string
	path, pages := "/v0/sessions?limit=3", 0
	for path != "" {
		rec, page := get(path)
		if rec.Code != 200 || len(page) == 0 || len(page) > 3 {
			t.Fatalf("%s: %d, %d sessions", path, rec.Code, len(page))
		}
		for _, s := range page {
			seen = append(seen, s.ID)
		}
		pages++
		path = ""
		if link := rec.Header().Get("Link"); link != "" {
			path = link[strings.Index(link, "<")+1 : strings.Index(link, ">")]
		}
	}
	if pages != 3 || len(seen) != 7 || seen[0] != knownID || seen[6] != fmt.Sprintf("%016x", 0xb5) {
		t.Errorf("%d pages, sessions %v; want 3 pages of the 7 in order", pages, seen)
	}
	if _, all := get("/v0/sessions"); len(all) != 7 {
		t.Errorf("without limit: %d sessions, want all 7", len(all))
	}
	for _, bad := range []string{"/v0/sessions?limit=0", "/v0/sessions?limit=x", "/v0/sessions?before=ffffffffffffffff"} {
		if rec, _ := get(bad); rec.Code != 400 || !strings.Contains(rec.Body.String(), "request.invalid") {
			t.Errorf("%s: %d %s, want 400 request.invalid", bad, rec.Code, rec.Body)
		}
	}
}

// TestSessionListHidesSpecs: the list of sessions leaves out each spec's
// text; a session's own route has it.
func TestSessionListHidesSpecs(t *testing.T) {
	h := Handler(&fakeBackend{}, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	req := httptest.NewRequest("GET", "/v0/sessions", nil)
	req.Header.Set("Authorization", "Bearer tok")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), "secret spec text") {
		t.Errorf("the session list carries a spec's text: %s", rec.Body)
	}
}

// TestTokenScope: GET /v0/auth/scope tells each token its own scope.
func TestTokenScope(t *testing.T) {
	h := Handler(&fakeBackend{}, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	for _, c := range []struct{ token, want string }{{"readtok", ScopeRead}, {"tok", ScopeOperator}} {
		req := httptest.NewRequest("GET", "/v0/auth/scope", nil)
		req.Header.Set("Authorization", "Bearer "+c.token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var got apitype.Scope
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 || got.Scope != c.want {
			t.Errorf("token %q: %d %s, want 200 with scope %q", c.token, rec.Code, rec.Body, c.want)
		}
	}
}

// TestScopes: the read-only token reads every GET route but Go's profiles,
// and is refused, with a code, what changes the node; the operator token
// does everything; openapi.json says each operation's scope (x-scope) as the
// server enforces it.
func TestScopes(t *testing.T) {
	h := Handler(&fakeBackend{}, Tokens{Operator: "tok", Read: "readtok"}, "acme", prometheus.NewRegistry())
	for _, c := range []struct {
		method, path, token string
		code                int
	}{
		{"GET", "/v0/node", "readtok", 200},
		{"GET", "/v0/sessions", "readtok", 200},
		{"GET", "/metrics", "readtok", 200},
		{"POST", "/v0/sessions", "readtok", 403},
		{"POST", "/v0/config/reload", "readtok", 403},
		{"GET", "/debug/pprof/cmdline", "readtok", 403},
		{"GET", "/debug/pprof/cmdline", "tok", 200},
		{"GET", "/v0/node", "", 401},
		{"GET", "/v0/auth/scope", "readtok", 200},
		{"GET", "/v0/auth/scope", "tok", 200},
		{"GET", "/v0/auth/scope", "", 401},
	} {
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(`protocol = "ping"`))
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.code || (c.code == 403 && !strings.Contains(rec.Body.String(), `"scope.insufficient"`)) {
			t.Errorf("%s %s with %q: %d %s, want %d", c.method, c.path, c.token, rec.Code, rec.Body, c.code)
		}
	}
	// Without a read-only token, "" is no token.
	h = Handler(&fakeBackend{}, Tokens{Operator: "tok"}, "acme", prometheus.NewRegistry())
	req := httptest.NewRequest("GET", "/v0/node", nil)
	req.Header.Set("Authorization", "Bearer ")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("an empty token with no read-only token configured: %d, want 401", rec.Code)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Scope string `json:"x-scope"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	for path, ops := range doc.Paths {
		for m, op := range ops {
			if want := ScopeOf(strings.ToUpper(m), path); op.Scope != want {
				t.Errorf("openapi.json: %s %s has x-scope %q, the server enforces %q", m, path, op.Scope, want)
			}
		}
	}
}
