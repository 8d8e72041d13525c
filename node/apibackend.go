package node

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"time"

	"github.com/bandit-node/bandit-node/node/api"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/node/sessions"
	"github.com/bandit-node/bandit-node/node/store"
)

// apiBackend answers the control API's routes (package api) from the node.
type apiBackend struct{ n *Node }

var _ api.Backend = apiBackend{}

func (b apiBackend) NodeInfo() apitype.NodeInfo {
	n := b.n
	cfg := n.config()
	info := apitype.NodeInfo{Name: cfg.Node.Name, PeerID: n.host.ID().String(), Version: n.version, Protocols: n.reg.Names(),
		Warnings: cfg.Warnings(), LastReload: n.reloads.Last(), StorageProblem: n.storageProblem(),
		Started: n.started, UptimeSeconds: time.Since(n.started).Round(time.Second).Seconds()}
	info.NotReady, info.Ready = n.ready()
	info.Environments = n.environmentHealth()
	for _, a := range n.host.Addrs() {
		info.Addrs = append(info.Addrs, a.String())
	}
	return info
}

func (b apiBackend) Policy() apitype.Policy { return b.n.policyView() }

func (b apiBackend) RefusedPeers() apitype.RefusedPeers { return b.n.refusedPeers() }

// AddPeer adds a peer card to the config and reloads it; an error says its
// class for the API: a card that is no card or this node's own (400
// peer.card_invalid), a peer already in the address book (409
// peer.exists), a config refused (400 config.refused).
func (b apiBackend) AddPeer(ctx context.Context, card []byte) (apitype.PeerAdded, error) {
	out, err := b.n.AddPeer(ctx, card)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, config.ErrPeerKnown):
		return out, &api.Error{Code: "peer.exists", Status: http.StatusConflict, Err: err}
	case errors.Is(err, config.ErrBadPeerCard):
		return out, &api.Error{Code: "peer.card_invalid", Status: http.StatusBadRequest, Err: err}
	default:
		b.n.log.Error("adding a peer card refused", "err", err)
		return out, &api.Error{Code: "config.refused", Status: http.StatusBadRequest, Err: err}
	}
}

func (b apiBackend) Peers() []apitype.Peer {
	out := []apitype.Peer{}
	for _, p := range b.n.host.Peers() {
		ap := apitype.Peer{Name: p.Name, PeerID: p.ID.String(), Connected: p.Connected,
			LatencyMicros: float64(p.Latency.Nanoseconds()) / 1e3, LastError: p.LastError, Reason: p.Reason, Agent: p.Agent, Conn: p.Conn}
		for _, a := range p.Addrs {
			ap.Addrs = append(ap.Addrs, a.String())
		}
		out = append(out, ap)
	}
	return out
}

func (b apiBackend) Sessions(name string, byName bool) []apitype.Session {
	n := b.n
	recs, errs := n.store.List()
	for _, err := range errs {
		n.log.Warn("skipping an unreadable session record", "err", err)
	}
	out := make([]apitype.Session, 0, len(recs))
	for _, rec := range recs {
		if byName && rec.Session.Name != name {
			continue
		}
		if live, ok := n.rt.Snapshot(rec.Session.ID); ok {
			out = append(out, live.Session)
			continue
		}
		out = append(out, rec.Session)
	}
	return out
}

func (b apiBackend) Standing() []apitype.Standing {
	return b.n.store.WithSummaries(b.n.standing.List())
}

// Session returns the record of session id; a name that cannot be a
// session's ID is no session either (404 in the API).
func (b apiBackend) Session(id string) (apitype.Result, error) {
	rec, err := b.n.sessionRecord(id)
	if errors.Is(err, store.ErrNotSessionID) {
		return apitype.Result{}, fmt.Errorf("%w (%w)", err, fs.ErrNotExist)
	}
	if err != nil {
		return apitype.Result{}, err
	}
	return apitype.Result{Session: rec.Session, Result: rec.Result, Local: rec.Local}, nil
}

// StartSession proposes the session of spec; an error says its class for
// the API: the spec's key at fault (a protocol.KeyError, or an
// organization not in the address book), this node's policy (403), an
// environment this node cannot play, or a node that takes no session now
// (503).
func (b apiBackend) StartSession(spec []byte) (string, error) {
	id, err := b.n.StartSession(spec)
	var se *sessions.StartError
	if errors.As(err, &se) {
		status := 0
		switch se.Code {
		case "policy.declined":
			status = http.StatusForbidden
		case "node.unavailable":
			status = http.StatusServiceUnavailable
		}
		return "", &api.Error{Code: se.Code, Field: se.Field, Status: status, Err: err}
	}
	return id, err
}

func (b apiBackend) CancelSession(id string) error { return b.n.CancelSession(id) }

func (b apiBackend) SessionLogs(id string, since int64) apitype.SessionLogs {
	logs, _ := b.n.slogs.Read(id, since)
	return logs
}

func (b apiBackend) Reload(ctx context.Context) (apitype.ConfigChange, error) {
	ch, err := b.n.Reload(ctx)
	if err != nil {
		b.n.log.Error("config reload refused", "err", err)
	}
	return ch, err
}

func (b apiBackend) CheckConfig(ctx context.Context, text []byte) (apitype.ConfigChange, error) {
	return b.n.CheckConfig(ctx, text)
}

func (b apiBackend) Events() *events.Hub { return b.n.events }

// sessionRecord returns the live record of an active session, or the stored one.
func (n *Node) sessionRecord(id string) (*store.Record, error) {
	if r, ok := n.rt.Snapshot(id); ok {
		return &r, nil
	}
	return n.store.Get(id)
}
