package node

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// apiHandler is the control API: local HTTP with JSON bodies, every route
// behind the bearer token of api.token_file. Routes are versioned under /v0/.
func (n *Node) apiHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v0/node", n.serveNode)
	mux.HandleFunc("GET /v0/peers", n.servePeers)
	mux.HandleFunc("GET /v0/sessions", n.serveSessions)
	mux.HandleFunc("GET /v0/standing", n.serveStanding)
	mux.HandleFunc("POST /v0/sessions", n.serveStartSession)
	mux.HandleFunc("GET /v0/sessions/{id}", n.serveSession)
	mux.HandleFunc("GET /v0/sessions/{id}/result", n.serveResult)
	mux.HandleFunc("POST /v0/sessions/{id}/cancel", n.serveCancel)
	mux.HandleFunc("GET /v0/sessions/{id}/logs", n.serveSessionLogs)
	mux.HandleFunc("POST /v0/config/reload", n.serveReload)
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.Registry, promhttp.HandlerOpts{}))
	// Go's profiles, for an operator chasing CPU or memory: e.g.
	// curl -H "Authorization: Bearer $(cat api.token)" ADDR/debug/pprof/profile?seconds=30 >cpu.pprof
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return n.authenticate(mux)
}

// Timeouts of the control API's server. A request (a spec of at most
// protocol.MaxSpecSize) has apiReadTimeout to arrive, and its answer
// apiWriteTimeout to be written; a kept-alive connection is closed after
// apiIdleTimeout without a request. The CPU profile and the execution trace
// record for ?seconds=N before they write: net/http/pprof moves their write
// deadline to the server's WriteTimeout plus N seconds itself.
const (
	apiReadHeaderTimeout = 10 * time.Second
	apiReadTimeout       = 30 * time.Second
	apiWriteTimeout      = 30 * time.Second
	apiIdleTimeout       = 2 * time.Minute
)

// newAPIServer returns the control API's server, with its timeouts, and
// its TLS config when api.cert_file is set.
func (n *Node) newAPIServer() *http.Server {
	return &http.Server{Handler: n.apiHandler(), TLSConfig: n.apiTLS, ErrorLog: slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		ReadHeaderTimeout: apiReadHeaderTimeout, ReadTimeout: apiReadTimeout,
		WriteTimeout: apiWriteTimeout, IdleTimeout: apiIdleTimeout}
}

// loadAPITLS loads the control API's certificate and key (api.cert_file,
// api.key_file), or returns nil when the API serves plain HTTP. The key
// file must not be readable by others.
func loadAPITLS(a config.APIConfig) (*tls.Config, error) {
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

func (n *Node) authenticate(next http.Handler) http.Handler {
	want := []byte("Bearer " + n.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeError(w, http.StatusUnauthorized, errors.New("missing or wrong bearer token (see api.token_file)"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, apitype.Error{Error: err.Error()})
}

func (n *Node) serveNode(w http.ResponseWriter, r *http.Request) {
	cfg := n.config()
	info := apitype.NodeInfo{Name: cfg.Node.Name, PeerID: n.host.ID().String(), Version: n.version, Protocols: n.reg.Names(),
		Warnings: cfg.Warnings(), LastReload: n.reloads.lastReload()}
	for _, a := range n.host.Addrs() {
		info.Addrs = append(info.Addrs, a.String())
	}
	writeJSON(w, http.StatusOK, info)
}

func (n *Node) servePeers(w http.ResponseWriter, r *http.Request) {
	out := []apitype.Peer{}
	for _, p := range n.host.Peers() {
		ap := apitype.Peer{Name: p.Name, PeerID: p.ID.String(), Connected: p.Connected,
			LatencyMicros: float64(p.Latency.Nanoseconds()) / 1e3, LastError: p.LastError, Reason: p.Reason, Agent: p.Agent, Conn: p.Conn}
		for _, a := range p.Addrs {
			ap.Addrs = append(ap.Addrs, a.String())
		}
		out = append(out, ap)
	}
	writeJSON(w, http.StatusOK, out)
}

func (n *Node) serveStartSession(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, protocol.MaxSpecSize+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	id, err := n.StartSession(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	rec, err := n.sessionRecord(id)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err)
		return
	}
	writeJSON(w, http.StatusCreated, rec.Session)
}

// sessionRecord returns the live record of an active session, or the stored one.
func (n *Node) sessionRecord(id string) (*store.Record, error) {
	if s := n.lookup(id); s != nil {
		r := s.snapshot()
		return &r, nil
	}
	return n.store.Get(id)
}

// serveSessions lists the sessions, newest first; ?name=NAME only the runs
// of the standing session NAME.
func (n *Node) serveSessions(w http.ResponseWriter, r *http.Request) {
	recs, errs := n.store.List()
	for _, err := range errs {
		n.log.Warn("skipping an unreadable session record", "err", err)
	}
	name, byName := r.URL.Query().Get("name"), r.URL.Query().Has("name")
	out := make([]apitype.Session, 0, len(recs))
	for _, rec := range recs {
		if byName && rec.Session.Name != name {
			continue
		}
		if s := n.lookup(rec.Session.ID); s != nil {
			out = append(out, s.snapshot().Session)
			continue
		}
		out = append(out, rec.Session)
	}
	for i := range out {
		out[i].Spec = ""
	}
	writeJSON(w, http.StatusOK, out)
}

// serveStanding lists the standing sessions with their next due time and
// last run.
func (n *Node) serveStanding(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, n.store.WithSummaries(n.standing.List()))
}

func (n *Node) sessionOr404(w http.ResponseWriter, id string) *store.Record {
	rec, err := n.sessionRecord(id)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotSessionID) {
			writeError(w, http.StatusNotFound, errors.New("no session "+id+" on "+n.config().Node.Name))
			return nil
		}
		writeError(w, http.StatusInternalServerError, err)
		return nil
	}
	return rec
}

func (n *Node) serveSession(w http.ResponseWriter, r *http.Request) {
	if rec := n.sessionOr404(w, r.PathValue("id")); rec != nil {
		writeJSON(w, http.StatusOK, rec.Session)
	}
}

func (n *Node) serveResult(w http.ResponseWriter, r *http.Request) {
	if rec := n.sessionOr404(w, r.PathValue("id")); rec != nil {
		writeJSON(w, http.StatusOK, apitype.Result{Session: rec.Session, Result: rec.Result, Local: rec.Local})
	}
}

// serveSessionLogs answers the log lines kept of a session
// (sessionlog.go), those numbered ?since= and later (default all).
func (n *Node) serveSessionLogs(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var since int64
	if v := r.URL.Query().Get("since"); v != "" {
		var err error
		if since, err = strconv.ParseInt(v, 10, 64); err != nil || since < 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("since=%q: want a line number, 0 or more", v))
			return
		}
	}
	if rec := n.sessionOr404(w, id); rec == nil {
		return
	}
	logs, _ := n.slogs.Read(id, since)
	if logs.Lines == nil {
		logs.Lines = []string{}
	}
	writeJSON(w, http.StatusOK, logs)
}

func (n *Node) serveCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if rec := n.sessionOr404(w, id); rec == nil {
		return
	}
	if err := n.CancelSession(id); err != nil {
		writeError(w, http.StatusConflict, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "cancelling"})
}

// serveReload re-reads the config file: 200 with what changed, or 400 with
// why the new config is refused (the running one stays in force).
func (n *Node) serveReload(w http.ResponseWriter, r *http.Request) {
	ch, err := n.Reload(r.Context())
	if err != nil {
		n.log.Error("config reload refused", "err", err)
		writeError(w, http.StatusBadRequest, err)
		return
	}
	writeJSON(w, http.StatusOK, ch)
}
