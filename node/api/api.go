package api

import (
	"bytes"
	"context"
	"crypto/subtle"
	"crypto/tls"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/console"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Backend is the daemon as the control API sees it: each method answers one
// route. The daemon (package node) implements it.
type Backend interface {
	// NodeInfo describes the node: name, peer ID, addresses, version,
	// protocols, config warnings and the last reload.
	NodeInfo() apitype.NodeInfo
	// Policy describes what the node accepts: its protocols and roles,
	// for which initiators, within which limits, and what each role
	// learns.
	Policy() apitype.Policy
	// RefusedPeers lists the peers the connection gater refused, with
	// this node's own peer card.
	RefusedPeers() apitype.RefusedPeers
	// AddPeer adds the peer card card to the config file and reloads it
	// (the API's bandit-node peers add).
	AddPeer(ctx context.Context, card []byte) (apitype.PeerAdded, error)
	// Peers lists the address book's peers with their connection state.
	Peers() []apitype.Peer
	// Sessions lists the sessions, newest first, each as live as the node
	// knows it; with byName, only the runs of the standing session name.
	Sessions(name string, byName bool) []apitype.Session
	// Standing lists the standing sessions with their schedule and last
	// run.
	Standing() []apitype.Standing
	// Session returns the record of session id, live or stored; an error
	// that wraps fs.ErrNotExist when the node has none.
	Session(id string) (apitype.Result, error)
	// StartSession proposes the session of a spec's text and returns its
	// ID.
	StartSession(spec []byte) (string, error)
	// CancelSession aborts active session id.
	CancelSession(id string) error
	// SessionLogs returns the log lines kept of session id, those numbered
	// since and later.
	SessionLogs(id string, since int64) apitype.SessionLogs
	// Reload re-reads the config file and applies it, or returns why not.
	Reload(ctx context.Context) (apitype.ConfigChange, error)
	// CheckConfig is a reload's dry run on text, a candidate config file
	// (nil: the file on disk): what a reload would change, or why it
	// would be refused. Nothing is applied.
	CheckConfig(ctx context.Context, text []byte) (apitype.ConfigChange, error)
	// Events is the node's stream of events (GET /v0/events).
	Events() *events.Hub
}

// Handler returns the control API: local HTTP with JSON bodies, every route
// behind a bearer token of tokens, of the scope the route needs (ScopeOf).
// Routes are versioned under /v0/;
// /metrics serves registry, /debug/pprof/ Go's profiles; /ui/ serves the
// web console's files (package console) without a token. node is the
// node's name, for the answers that name it. The routes are those of
// Routes, each described in the OpenAPI document (openapi.json, served at
// GET /v0/openapi.json).
func Handler(b Backend, tokens Tokens, node string, registry *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	for _, r := range Routes(b, node, registry) {
		mux.Handle(r.Pattern, r.Handler)
	}
	outer := http.NewServeMux()
	// The web console's files carry no data and load without a token;
	// the page asks for one and reads everything through the routes
	// below (docs/console.md).
	outer.Handle("GET "+console.Prefix, console.Handler())
	outer.Handle("/", authenticate(tokens, jsonMuxErrors(mux)))
	return outer
}

// jsonMuxErrors answers, as every route does, as an RFC 9457 problem what
// the mux itself answers in plain text: 404 for a path no route has, 405
// (with its Allow header) for a method the path's routes do not take. The
// mux's redirects (a path to clean, a missing trailing slash) go through.
func jsonMuxErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// No route: the mux's answer says which of 404 and 405, and
		// which methods the path takes.
		probe := &statusProbe{header: http.Header{}}
		mux.ServeHTTP(probe, r)
		if allow := probe.header.Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		switch {
		case probe.code >= 300 && probe.code < 400:
			mux.ServeHTTP(w, r)
		case probe.code == http.StatusMethodNotAllowed:
			writeError(w, probe.code, "route.method_not_allowed", fmt.Errorf("%s %s: the method is not allowed (allowed: %s)", r.Method, r.URL.Path, probe.header.Get("Allow")))
		default:
			writeError(w, http.StatusNotFound, "route.not_found", fmt.Errorf("%s %s: no such route (see GET /v0/openapi.json)", r.Method, r.URL.Path))
		}
	})
}

// statusProbe is a ResponseWriter that keeps the status and the header
// written to it and drops the body.
type statusProbe struct {
	header http.Header
	code   int
}

func (p *statusProbe) Header() http.Header { return p.header }

func (p *statusProbe) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *statusProbe) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

// Route is one route of the control API: its ServeMux pattern ("GET
// /v0/sessions/{id}") and its handler.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Routes returns the control API's routes, answered from b.
func Routes(b Backend, node string, registry *prometheus.Registry) []Route {
	s := &server{b: b, node: node}
	f := func(pattern string, h http.HandlerFunc) Route { return Route{pattern, h} }
	return []Route{
		f("GET /v0/node", s.serveNode),
		f("GET /v0/auth/scope", serveScope),
		f("GET /v0/policy", s.servePolicy),
		f("GET /v0/peers", s.servePeers),
		f("GET /v0/peers/refused", s.serveRefusedPeers),
		f("POST /v0/peers", s.serveAddPeer),
		f("GET /v0/sessions", s.serveSessions),
		f("GET /v0/standing", s.serveStanding),
		f("POST /v0/sessions", s.serveStartSession),
		f("GET /v0/sessions/{id}", s.serveSession),
		f("GET /v0/sessions/{id}/result", s.serveResult),
		f("POST /v0/sessions/{id}/cancel", s.serveCancel),
		f("GET /v0/sessions/{id}/logs", s.serveSessionLogs),
		f("POST /v0/config/reload", s.serveReload),
		f("POST /v0/config/check", s.serveCheckConfig),
		f("GET /v0/events", s.serveEvents),
		f("GET /v0/openapi.json", serveOpenAPI),
		{"GET /metrics", promhttp.HandlerFor(registry, promhttp.HandlerOpts{})},
		// Go's profiles, for an operator chasing CPU or memory: e.g.
		// curl -H "Authorization: Bearer $(cat api.token)" ADDR/debug/pprof/profile?seconds=30 >cpu.pprof
		f("GET /debug/pprof/", pprof.Index),
		f("GET /debug/pprof/cmdline", pprof.Cmdline),
		f("GET /debug/pprof/profile", pprof.Profile),
		f("GET /debug/pprof/symbol", pprof.Symbol),
		f("GET /debug/pprof/trace", pprof.Trace),
	}
}

// openAPI is the control API's OpenAPI 3.1 document, written by hand (spec
// first) and held to the routes and to real answers by tests.
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the control API's OpenAPI 3.1 document (openapi.json).
func OpenAPI() []byte { return bytes.Clone(openAPI) }

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}

// Timeouts of the control API's server. A request (a spec of at most
// protocol.MaxSpecSize) has ReadTimeout to arrive, and its answer
// WriteTimeout to be written; a kept-alive connection is closed after
// IdleTimeout without a request. The CPU profile and the execution trace
// record for ?seconds=N before they write: net/http/pprof moves their write
// deadline to the server's WriteTimeout plus N seconds itself.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 2 * time.Minute
)

// NewServer returns an HTTP server of h with the control API's timeouts, its
// TLS config tlsConfig (nil for plain HTTP), and its errors logged to log at
// debug level.
func NewServer(h http.Handler, tlsConfig *tls.Config, log *slog.Logger) *http.Server {
	return &http.Server{Handler: h, TLSConfig: tlsConfig, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout}
}

// LoadTLS loads the control API's certificate and key (api.cert_file,
// api.key_file), or returns nil when the API serves plain HTTP. The key
// file must not be readable by others.
func LoadTLS(a config.APIConfig) (*tls.Config, error) {
	if !a.TLS() {
		return nil, nil
	}
	st, err := os.Stat(a.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("api.key_file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("api.key_file: %s is readable by others (mode %v); run chmod 600 %s", a.KeyFile, st.Mode().Perm(), a.KeyFile)
	}
	cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("api.cert_file and api.key_file: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// Tokens are the control API's bearer tokens: Operator (api.token_file)
// may do everything; Read (api.read_token_file), if not empty, may only
// read (ScopeRead).
type Tokens struct {
	Operator, Read string
}

// The scopes of the routes.
const (
	// ScopeRead: every GET route but Go's profiles — what monitoring and
	// a console need.
	ScopeRead = "read"
	// ScopeOperator: what changes the node (sessions started or
	// cancelled, a reload) and Go's profiles.
	ScopeOperator = "operator"
)

// ScopeOf is the scope a request of method on path needs.
func ScopeOf(method, path string) string {
	if (method == http.MethodGet || method == http.MethodHead) && !strings.HasPrefix(path, "/debug/") {
		return ScopeRead
	}
	return ScopeOperator
}

// scopeKey is the request context's key of the scope its token has.
type scopeKey struct{}

// TokenScope returns the scope of the token that authenticated r
// (ScopeRead or ScopeOperator); "" outside the control API's handler.
func TokenScope(r *http.Request) string {
	s, _ := r.Context().Value(scopeKey{}).(string)
	return s
}

func authenticate(tokens Tokens, next http.Handler) http.Handler {
	operator := []byte("Bearer " + tokens.Operator)
	read := []byte("Bearer " + tokens.Read)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		scope := ScopeOperator
		switch {
		case subtle.ConstantTimeCompare(got, operator) == 1:
		case tokens.Read != "" && subtle.ConstantTimeCompare(got, read) == 1:
			scope = ScopeRead
			if ScopeOf(r.Method, r.URL.Path) != ScopeRead {
				writeError(w, http.StatusForbidden, "scope.insufficient",
					fmt.Errorf("%s %s needs the operator token (api.token_file); this token may only read", r.Method, r.URL.Path))
				return
			}
		default:
			writeError(w, http.StatusUnauthorized, "unauthorized", errors.New("missing or wrong bearer token (see api.token_file)"))
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), scopeKey{}, scope)))
	})
}

// serveScope tells a token its scope, so that a client (the console)
// knows which actions it may offer without trying one.
func serveScope(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, apitype.Scope{Scope: TokenScope(r)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

// Error is an error a Backend returns with the class of the error for the
// answer: Code, one of the codes docs/api.md lists; Field, the spec's key
// at fault when there is one; Status, the HTTP status when not the route's
// (0). An error that is no Error is answered with the route's own status
// and code (or, for a protocol.KeyError, spec.<its code> and its key).
type Error struct {
	Code, Field string
	Status      int
	Err         error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the error.
func (e *Error) Unwrap() error { return e.Err }

// writeError answers err with status as an RFC 9457 problem: code, unless
// err says better (an Error, a protocol.KeyError).
func writeError(w http.ResponseWriter, status int, code string, err error) {
	field := ""
	var ae *Error
	var ke *protocol.KeyError
	switch {
	case errors.As(err, &ae):
		code, field = ae.Code, ae.Field
		if ae.Status != 0 {
			status = ae.Status
		}
	case errors.As(err, &ke):
		code, field = "spec."+ke.Code, ke.Key
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(apitype.Error{Type: "about:blank", Title: http.StatusText(status), Status: status,
		Detail: err.Error(), Code: code, Field: field, Error: err.Error()})
}

// server answers the routes from its backend.
type server struct {
	b    Backend
	node string
}

func (s *server) serveNode(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.NodeInfo())
}

func (s *server) servePolicy(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.Policy())
}

func (s *server) serveRefusedPeers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.RefusedPeers())
}

// serveAddPeer adds the peer card of the body (TOML, one [[peers]] block)
// to the config file and reloads it: 201 with the peer and what the reload
// changed; 400 for a card that is none, 409 for a peer already listed.
func (s *server) serveAddPeer(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, config.MaxPeerCardSize+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "request.invalid", err)
		return
	}
	if len(body) > config.MaxPeerCardSize {
		writeError(w, http.StatusBadRequest, "peer.card_invalid", fmt.Errorf("a card of more than %d bytes; a card is one [[peers]] block", config.MaxPeerCardSize))
		return
	}
	out, err := s.b.AddPeer(r.Context(), body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "config.refused", err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *server) servePeers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.Peers())
}

func (s *server) serveStartSession(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, protocol.MaxSpecSize+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "request.invalid", err)
		return
	}
	spec, err := specText(r.Header.Get("Content-Type"), body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "spec.invalid", err)
		return
	}
	id, err := s.b.StartSession(spec)
	if err != nil {
		writeError(w, http.StatusBadRequest, "spec.invalid", err)
		return
	}
	rec, err := s.b.Session(id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", err)
		return
	}
	writeJSON(w, http.StatusCreated, rec.Session)
}

// serveSessions lists the sessions, newest first; ?name=NAME only the runs
// of the standing session NAME. ?limit=N answers a page of at most N
// (1 to maxPage), with a Link header (rel="next") to the next page while
// there is one; ?before=ID starts after session ID. Without limit the list
// is whole, as the first v0 clients read it.
func (s *server) serveSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			writeError(w, http.StatusBadRequest, "request.invalid", fmt.Errorf("limit=%q: want a number from 1 to %d", v, maxPage))
			return
		}
		limit = n
	}
	out := s.b.Sessions(q.Get("name"), q.Has("name"))
	if before := q.Get("before"); before != "" {
		i := slices.IndexFunc(out, func(x apitype.Session) bool { return x.ID == before })
		if i < 0 {
			writeError(w, http.StatusBadRequest, "request.invalid",
				fmt.Errorf("before=%q: no such session in the list (the retention policy may have removed it); list again without before", before))
			return
		}
		out = out[i+1:]
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
		next := url.Values{"before": {out[limit-1].ID}, "limit": {strconv.Itoa(limit)}}
		if q.Has("name") {
			next.Set("name", q.Get("name"))
		}
		w.Header().Set("Link", fmt.Sprintf(`</v0/sessions?%s>; rel="next"`, next.Encode()))
	}
	for i := range out {
		out[i].Spec = ""
	}
	writeJSON(w, http.StatusOK, out)
}

// maxPage bounds a page of GET /v0/sessions.
const maxPage = 1000

// serveStanding lists the standing sessions with their next due time and
// last run.
func (s *server) serveStanding(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.b.Standing())
}

// sessionOr404 returns the record of session id, or answers 404 (or 500)
// and returns nil.
func (s *server) sessionOr404(w http.ResponseWriter, id string) *apitype.Result {
	rec, err := s.b.Session(id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			writeError(w, http.StatusNotFound, "session.not_found", errors.New("no session "+id+" on "+s.node))
			return nil
		}
		writeError(w, http.StatusInternalServerError, "internal", err)
		return nil
	}
	return &rec
}

func (s *server) serveSession(w http.ResponseWriter, r *http.Request) {
	if rec := s.sessionOr404(w, r.PathValue("id")); rec != nil {
		writeJSON(w, http.StatusOK, rec.Session)
	}
}

func (s *server) serveResult(w http.ResponseWriter, r *http.Request) {
	if rec := s.sessionOr404(w, r.PathValue("id")); rec != nil {
		writeJSON(w, http.StatusOK, rec)
	}
}

// serveSessionLogs answers the log lines kept of a session, those numbered
// ?since= and later (default all).
func (s *server) serveSessionLogs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil || since < 0 {
			writeError(w, http.StatusBadRequest, "request.invalid", fmt.Errorf("since=%q: want a line number, 0 or more", v))
			return
		}
	}
	if rec := s.sessionOr404(w, id); rec == nil {
		return
	}
	logs := s.b.SessionLogs(id, since)
	if logs.Lines == nil {
		logs.Lines = []string{}
	}
	writeJSON(w, http.StatusOK, logs)
}

func (s *server) serveCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if rec := s.sessionOr404(w, id); rec == nil {
		return
	}
	if err := s.b.CancelSession(id); err != nil {
		writeError(w, http.StatusConflict, "session.not_active", err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "cancelling"})
}

// maxConfigBody bounds a candidate config sent to POST /v0/config/check.
const maxConfigBody = 4 << 20

// serveCheckConfig is a reload's dry run: the body, if any, is a candidate
// config file (TOML); without one, the file on disk. 200 with what a
// reload would change, or 400 with why it would be refused.
func (s *server) serveCheckConfig(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxConfigBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "request.invalid", err)
		return
	}
	if len(body) > maxConfigBody {
		writeError(w, http.StatusBadRequest, "request.invalid", fmt.Errorf("a config of more than %d bytes", maxConfigBody))
		return
	}
	var text []byte
	if len(body) > 0 {
		text = body
	}
	ch, err := s.b.CheckConfig(r.Context(), text)
	if err != nil {
		writeError(w, http.StatusBadRequest, "config.refused", err)
		return
	}
	writeJSON(w, http.StatusOK, ch)
}

// serveReload re-reads the config file: 200 with what changed, or 400 with
// why the new config is refused (the running one stays in force).
func (s *server) serveReload(w http.ResponseWriter, r *http.Request) {
	ch, err := s.b.Reload(r.Context())
	if err != nil {
		writeError(w, http.StatusBadRequest, "config.refused", err)
		return
	}
	writeJSON(w, http.StatusOK, ch)
}
