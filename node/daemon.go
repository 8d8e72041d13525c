package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/api"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/metrics"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/node/standing"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/p2p"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/multiformats/go-multiaddr"
)

// New builds a node from its config: it loads the identity and the API token,
// opens the result store (marking sessions left running by a previous run as
// aborted), and creates the libp2p host. Run starts it.
func New(cfg *config.Config, reg *protocol.Registry, opts ...Option) (*Node, error) {
	n := &Node{reg: reg, log: slog.New(slog.DiscardHandler), version: "dev", started: time.Now().UTC(),
		retentionKick: make(chan struct{}, 1), metrics: metrics.New(reg.Names()...)}
	for _, o := range opts {
		if err := o(n); err != nil {
			return nil, err
		}
	}
	n.reloads = metrics.NewReloads(n.metrics.Registry)
	n.events = events.New(eventsKept)
	if err := cfg.CheckLocalData(); err != nil {
		return nil, err
	}
	key, err := p2p.LoadIdentity(cfg.Node.Identity)
	if err != nil {
		return nil, fmt.Errorf("node.identity: %w", err)
	}
	n.token, err = readToken(cfg.API.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("api.token_file: %w", err)
	}
	if cfg.API.ReadTokenFile != "" {
		if n.readToken, err = readToken(cfg.API.ReadTokenFile); err != nil {
			return nil, fmt.Errorf("api.read_token_file: %w", err)
		}
		if n.readToken == n.token {
			return nil, errors.New("api.read_token_file holds the same token as api.token_file: a read-only token must differ")
		}
	}
	if n.apiTLS, err = api.LoadTLS(cfg.API); err != nil {
		return nil, err
	}
	if n.store, err = store.Open(cfg.Node.DataDir); errors.Is(err, store.ErrNoDataDirLock) {
		n.log.Warn("running without a lock on the data directory", "err", err)
	} else if err != nil {
		return nil, err
	}
	if n.slogs, err = store.NewSessionLogs(filepath.Join(cfg.Node.DataDir, "logs"), store.DefaultSessionLogLimits()); err != nil {
		n.store.Close()
		return nil, err
	}
	n.log = slog.New(store.NewSessionLogHandler(n.log.Handler(), n.slogs))
	// The config is in force from here; the address book joins it once
	// the host, and so this node's own peer ID, exists (Attach).
	n.rt = sessions.New(sessions.Config{Config: cfg, Registry: reg, Logger: n.log, Version: n.version, Metrics: n.metrics,
		Store: n.store, Logs: n.slogs, Events: n.events, OnEnded: n.sessionEndedRetention})
	built := false
	defer func() {
		if !built {
			n.store.Close()
			n.slogs.Close()
		}
	}()
	if err := n.recoverSessions(); err != nil {
		return nil, err
	}
	n.standing = standing.New(n.standingDeps(), cfg, time.Now())
	var listen []multiaddr.Multiaddr
	for i, a := range cfg.Node.Listen {
		ma, err := multiaddr.NewMultiaddr(a)
		if err != nil {
			return nil, fmt.Errorf("node.listen[%d]: %q: %w", i, a, err)
		}
		listen = append(listen, ma)
	}
	book, err := n.rt.AddressBook(cfg)
	if err != nil {
		return nil, err
	}
	var relayVia peer.ID
	if cfg.Relay.Via != "" {
		if relayVia, err = sessions.RelayID(cfg, cfg.Relay.Via); err != nil {
			return nil, fmt.Errorf("relay.via: %w", err)
		}
	}
	n.host, err = p2p.NewHost(p2p.Config{Key: key, ListenAddrs: listen, DeferListen: true, Peers: book, MDNS: cfg.Discovery.MDNS,
		Logger: n.log, DialBackoffMin: cfg.Discovery.DialBackoffMin.Duration, DialBackoffMax: cfg.Discovery.DialBackoffMax.Duration,
		UserAgent: n.agent, RelayService: cfg.Relay.Service, RelayLimits: relayLimits(cfg.Relay), RelayVia: relayVia})
	if err != nil {
		return nil, fmt.Errorf("starting the libp2p host: %w", err)
	}
	n.registerCollectors()
	// The sessions' streams and gossip exist before anything can reach
	// them: the host listens only once they are registered.
	n.hostCtx, n.stop = context.WithCancel(context.Background())
	if err := n.rt.Attach(n.hostCtx, n.host, book); err != nil {
		n.stop()
		n.host.Close()
		return nil, err
	}
	if err := n.host.Listen(); err != nil {
		n.stop()
		n.host.Close()
		return nil, err
	}
	built = true
	return n, nil
}

// standingDeps is what the scheduler of standing sessions uses of n.
func (n *Node) standingDeps() standing.Deps {
	return standing.Deps{Log: n.log, Store: n.store, Registry: n.metrics.Registry, Start: n.rt.StartChecked, Done: n.rt.Done,
		Connected: func(name string) bool {
			if name == n.config().Node.Name {
				return true
			}
			id, ok := n.rt.PeerID(name)
			return ok && n.host.Connected(id)
		},
		ProposeTimeout: func() time.Duration { return n.config().Session.ProposeTimeout.Duration },
	}
}

// APIAddr returns the control API's address once Run has started it.
func (n *Node) APIAddr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.apiLn == nil {
		return ""
	}
	return n.apiLn.Addr().String()
}

// Run starts the node — dialing the address book, gossip, the control API —
// and serves until ctx ends. It then shuts down gracefully: every running
// session is aborted on every participant and recorded as aborted, and the
// host closes. ready, if non-nil, is closed once the API is listening.
func (n *Node) Run(ctx context.Context, ready chan<- struct{}) error {
	defer n.stop()
	n.host.Start(n.hostCtx)
	// The records the disk refused are written again until it takes
	// them, until the host's context ends at shutdown (flushRecords then
	// makes a last attempt).
	go n.store.KeepRecords(n.hostCtx, n.log)
	ln, err := net.Listen("tcp", n.config().API.Listen)
	if err != nil {
		n.shutdown()
		return fmt.Errorf("api.listen: %w", err)
	}
	n.mu.Lock()
	n.apiLn = ln
	n.mu.Unlock()
	n.api = api.NewServer(api.Handler(apiBackend{n}, api.Tokens{Operator: n.token, Read: n.readToken}, n.config().Node.Name, n.metrics.Registry), n.apiTLS, n.log)
	apiErr := make(chan error, 1)
	if n.apiTLS != nil {
		go func() { apiErr <- n.api.ServeTLS(ln, "", "") }()
	} else {
		go func() { apiErr <- n.api.Serve(ln) }()
	}
	metricsErr := make(chan error, 1)
	if err := n.startMetrics(metricsErr); err != nil {
		n.shutdown()
		return err
	}
	n.log.Info("node started", "name", n.config().Node.Name, "peer_id", n.host.ID().String(),
		"listen", fmt.Sprint(n.host.Addrs()), "api", ln.Addr().String(), "api_tls", n.apiTLS != nil, "peers", len(n.config().Peers))
	n.warnConfig(n.config())
	if ready != nil {
		close(ready)
	}
	// The standing sessions are proposed from now on, and no more once
	// the node starts to shut down.
	schedCtx, stopSched := context.WithCancel(ctx)
	schedDone := make(chan struct{})
	go func() { defer close(schedDone); n.standing.Run(schedCtx) }()
	// The records of ended sessions are removed by the retention policy.
	retentionDone := make(chan struct{})
	go func() { defer close(retentionDone); n.runRetention(schedCtx) }()
	select {
	case <-ctx.Done():
	case err = <-apiErr:
		err = fmt.Errorf("control API: %w", err)
	case err = <-metricsErr:
	}
	stopSched()
	select {
	case <-schedDone:
	case <-time.After(sessions.ShutdownGrace):
		n.log.Warn("the standing sessions' scheduler did not stop in time")
	}
	<-retentionDone
	n.shutdown()
	return err
}

// shutdown aborts every session, stops the API and closes the host.
func (n *Node) shutdown() {
	n.log.Info("shutting down", "name", n.config().Node.Name)
	n.rt.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if n.api != nil {
		n.api.Shutdown(ctx)
	}
	n.stopMetrics(ctx)
	// No frame arrives any more: the proposals being examined are the last
	// (they decline, since the node is closing).
	n.rt.Close()
	n.stop()
	n.host.Close()
	n.store.FlushRecords(n.log)
	n.store.Close()
	n.slogs.Close()
	n.log.Info("stopped", "name", n.config().Node.Name)
}

// recoverSessions marks the sessions a previous run left open as aborted.
func (n *Node) recoverSessions() error {
	moved, err := n.store.Tidy()
	for _, m := range moved {
		n.log.Warn("an unreadable session record was moved aside", "record", m)
	}
	if err != nil {
		// The daemon starts all the same: a record it cannot move is
		// skipped below, as list skips it.
		n.log.Error("could not tidy the result store", "err", err)
	}
	recs, errs := n.store.List()
	for _, err := range errs {
		n.log.Warn("skipping an unreadable session record", "err", err)
	}
	recs = n.replayJournal(recs)
	for _, rec := range recs {
		st := rec.Session.State
		if st == apitype.StateCompleted || st == apitype.StateAborted {
			continue
		}
		rec.Session.Reason = crashReason(n.config().Node.Name, rec.Session)
		rec.Session.State = apitype.StateAborted
		// The session ended at the crash, not now: its last stored
		// record is the latest moment it is known to have run, so that
		// its duration does not count the time the daemon was down.
		end := time.Now().UTC()
		if u := rec.Session.Updated; u != nil && u.Before(end) {
			end = *u
		}
		rec.Session.Finished = &end
		// A disk that refuses the record does not stop the daemon: the
		// record is kept and written again as a session's is.
		if _, err := n.store.Keep(rec); err != nil {
			n.log.Error("could not store session record; it is kept in memory and written again until the disk takes it",
				"session", rec.Session.ID, "state", rec.Session.State, "err", err)
		}
		n.log.Warn("session was open when the daemon stopped; recorded as aborted", "session", rec.Session.ID)
	}
	return nil
}

// replayJournal stores the records of the journal that are later than
// the stored ones of recs — the ends of sessions a previous run could not
// store (unsaved.go) — and returns recs with them in place. A session that
// completed is then not taken for one left open. A record the disk still
// refuses is kept in memory and written again.
func (n *Node) replayJournal(recs []*store.Record) []*store.Record {
	journal, errs := n.store.ReadJournal()
	for _, err := range errs {
		n.log.Warn("skipping an unreadable record of the journal of unsaved records", "err", err)
	}
	if len(journal) == 0 {
		return recs
	}
	byID := map[string]int{}
	for i, rec := range recs {
		byID[rec.Session.ID] = i
	}
	for _, j := range journal {
		i, stored := byID[j.Session.ID]
		var old *store.Record
		if stored {
			old = recs[i]
		}
		if !j.NewerThan(old) {
			// The record was stored after all; its copy is stale. (No
			// other write runs yet: no need to take its stripe.)
			n.store.Saved(j.Session.ID)
			continue
		}
		j = &store.Record{Session: j.Session, Peers: j.Peers, Result: j.Result, Local: j.Local} // kept: not to be changed below
		if _, err := n.store.Keep(j); err != nil {
			n.log.Error("could not store session record; it is kept in memory and written again until the disk takes it",
				"session", j.Session.ID, "state", j.Session.State, "err", err)
		} else {
			n.log.Info("stored a session record the previous run could not", "session", j.Session.ID, "state", j.Session.State)
		}
		cp := *j
		if stored {
			recs[i] = &cp
		} else {
			recs = append(recs, &cp)
		}
	}
	return recs
}

// crashReason explains a session that a crash of node left open: what its
// record last showed, and when.
func crashReason(node string, s apitype.Session) string {
	reason := fmt.Sprintf("%s restarted while the session was open", node)
	if s.Updated == nil || s.State != apitype.StateRunning {
		return reason
	}
	at := s.Updated.UTC().Format(time.DateTime + " UTC")
	switch p := s.Progress; {
	case p.Total > 0:
		return fmt.Sprintf("%s; its record, last stored at %s, showed step %d of %d", reason, at, p.Step, p.Total)
	case p.Activity > 0:
		return fmt.Sprintf("%s; its record, last stored at %s, showed %d units of work done", reason, at, p.Activity)
	}
	return fmt.Sprintf("%s; its record was last stored at %s", reason, at)
}

func readToken(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is readable by others (mode %v); run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 {
		return "", fmt.Errorf("%s holds no token of at least 16 characters", path)
	}
	return tok, nil
}
