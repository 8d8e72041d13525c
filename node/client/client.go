// Package client is the typed client of a bandit-node daemon's control API,
// used by the CLI and the test harnesses. It never reaches into the daemon's
// internals.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// Client talks to one daemon's control API.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// New returns a client of the API at addr (host:port) authenticating with
// token, over plain HTTP.
func New(addr, token string) *Client {
	return &Client{base: "http://" + addr, token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// NewTLS returns a client of the API at addr (host:port) served over TLS
// (api.cert_file), authenticating with token. It trusts only the PEM
// certificates in trusted — the daemon's own certificate, or the authority
// that signed it — and checks that the daemon's certificate names addr's
// host; an addr on 0.0.0.0 or :: (a daemon listening on every address) is
// reached, and checked, as "localhost".
func NewTLS(addr, token string, trusted []byte) (*Client, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(trusted) {
		return nil, errors.New("no PEM certificate to trust for the control API's TLS")
	}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
			addr = net.JoinHostPort("localhost", port)
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return &Client{base: "https://" + addr, token: token, http: &http.Client{Timeout: 30 * time.Second, Transport: tr}}, nil
}

// FromFiles reads the token from tokenFile. With a trustFile (api.ca_file,
// or else api.cert_file), the client speaks TLS and trusts the
// certificates in it (NewTLS); without, plain HTTP.
func FromFiles(addr, tokenFile, trustFile string) (*Client, error) {
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("reading the API token: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if trustFile == "" {
		return New(addr, token), nil
	}
	pem, err := os.ReadFile(trustFile)
	if err != nil {
		return nil, fmt.Errorf("reading the certificate to trust for the control API: %w", err)
	}
	c, err := NewTLS(addr, token, pem)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", trustFile, err)
	}
	return c, nil
}

// Error is an error answered by the daemon: its HTTP status, its message,
// and, from a daemon that sends them, its stable code and the spec's key at
// fault (apitype.Error).
type Error struct {
	Status  int
	Message string
	Code    string
	Field   string
}

func (e *Error) Error() string { return e.Message }

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/toml")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("reaching the daemon's control API at %s (is `bandit-node run` up?): %w", c.base, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("reading the daemon's answer: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e apitype.Error
		if json.Unmarshal(data, &e) == nil && (e.Detail != "" || e.Error != "") {
			msg := e.Detail
			if msg == "" {
				msg = e.Error
			}
			return &Error{Status: resp.StatusCode, Message: msg, Code: e.Code, Field: e.Field}
		}
		return &Error{Status: resp.StatusCode, Message: fmt.Sprintf("%s %s: %s", method, path, resp.Status)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the daemon's answer to %s %s: %w", method, path, err)
	}
	return nil
}

// Node returns the daemon's identity and addresses.
func (c *Client) Node(ctx context.Context) (apitype.NodeInfo, error) {
	var v apitype.NodeInfo
	return v, c.do(ctx, http.MethodGet, "/v0/node", nil, &v)
}

// Scope returns the scope of the client's token: "read" or "operator".
func (c *Client) Scope(ctx context.Context) (string, error) {
	var v apitype.Scope
	return v.Scope, c.do(ctx, http.MethodGet, "/v0/auth/scope", nil, &v)
}

// Policy returns what the daemon accepts: its protocols and roles, for
// which initiators, within which limits, and what each role learns.
func (c *Client) Policy(ctx context.Context) (apitype.Policy, error) {
	var v apitype.Policy
	return v, c.do(ctx, http.MethodGet, "/v0/policy", nil, &v)
}

// RefusedPeers lists the peers that tried to connect without being in the
// address book, with the daemon's own peer card to send their operators.
func (c *Client) RefusedPeers(ctx context.Context) (apitype.RefusedPeers, error) {
	var v apitype.RefusedPeers
	return v, c.do(ctx, http.MethodGet, "/v0/peers/refused", nil, &v)
}

// AddPeer adds a partner's peer card (one [[peers]] block) to the daemon's
// config file and reloads it: the API's bandit-node peers add. A card
// refused is an *Error with code peer.card_invalid or peer.exists.
func (c *Client) AddPeer(ctx context.Context, card []byte) (apitype.PeerAdded, error) {
	var v apitype.PeerAdded
	return v, c.do(ctx, http.MethodPost, "/v0/peers", card, &v)
}

// Peers returns the address book with connection states.
func (c *Client) Peers(ctx context.Context) ([]apitype.Peer, error) {
	var v []apitype.Peer
	return v, c.do(ctx, http.MethodGet, "/v0/peers", nil, &v)
}

// StartSession submits a spec; the daemon proposes it to the participants.
func (c *Client) StartSession(ctx context.Context, spec []byte) (apitype.Session, error) {
	var v apitype.Session
	return v, c.do(ctx, http.MethodPost, "/v0/sessions", spec, &v)
}

// Sessions lists the sessions the daemon knows, newest first.
func (c *Client) Sessions(ctx context.Context) ([]apitype.Session, error) {
	var v []apitype.Session
	return v, c.do(ctx, http.MethodGet, "/v0/sessions", nil, &v)
}

// SessionsNamed lists the runs of the standing session name, newest first.
func (c *Client) SessionsNamed(ctx context.Context, name string) ([]apitype.Session, error) {
	var v []apitype.Session
	return v, c.do(ctx, http.MethodGet, "/v0/sessions?name="+url.QueryEscape(name), nil, &v)
}

// Standing lists the node's standing sessions with their next due time and
// last run.
func (c *Client) Standing(ctx context.Context) ([]apitype.Standing, error) {
	var v []apitype.Standing
	return v, c.do(ctx, http.MethodGet, "/v0/standing", nil, &v)
}

// Session returns one session's state and progress.

func (c *Client) Session(ctx context.Context, id string) (apitype.Session, error) {
	var v apitype.Session
	return v, c.do(ctx, http.MethodGet, "/v0/sessions/"+url.PathEscape(id), nil, &v)
}

// Result returns a session's result as this daemon holds it.
func (c *Client) Result(ctx context.Context, id string) (apitype.Result, error) {
	var v apitype.Result
	return v, c.do(ctx, http.MethodGet, "/v0/sessions/"+url.PathEscape(id)+"/result", nil, &v)
}

// SessionLogs returns the log lines the daemon keeps of a session, those
// numbered since and later (0: all it keeps).
func (c *Client) SessionLogs(ctx context.Context, id string, since int64) (apitype.SessionLogs, error) {
	var v apitype.SessionLogs
	return v, c.do(ctx, http.MethodGet, "/v0/sessions/"+url.PathEscape(id)+"/logs?since="+strconv.FormatInt(since, 10), nil, &v)
}

// Cancel aborts a session everywhere.
func (c *Client) Cancel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/v0/sessions/"+url.PathEscape(id)+"/cancel", nil, nil)
}

// Reload has the daemon re-read its config file and returns what changed. A
// refused config is an *Error (status 400) saying why; the daemon keeps the
// config it runs.
func (c *Client) Reload(ctx context.Context) (apitype.ConfigChange, error) {
	var v apitype.ConfigChange
	return v, c.do(ctx, http.MethodPost, "/v0/config/reload", nil, &v)
}

// CheckConfig is a reload's dry run on text, a candidate config file (nil:
// the file on disk): what a reload would change, or a *Error with code
// config.refused saying why it would be refused. Nothing is applied.
func (c *Client) CheckConfig(ctx context.Context, text []byte) (apitype.ConfigChange, error) {
	var v apitype.ConfigChange
	if text != nil && len(text) == 0 {
		text = nil
	}
	return v, c.do(ctx, http.MethodPost, "/v0/config/check", text, &v)
}

// Wait polls a session until it has ended or ctx ends, calling onUpdate (if
// set) with each state seen.
func (c *Client) Wait(ctx context.Context, id string, every time.Duration, onUpdate func(apitype.Session)) (apitype.Session, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s, err := c.Session(ctx, id)
		if err != nil {
			return s, err
		}
		if onUpdate != nil {
			onUpdate(s)
		}
		if s.State == apitype.StateCompleted || s.State == apitype.StateAborted {
			return s, nil
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-t.C:
		}
	}
}
