package environment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
)

// DefaultHTTPRequestTimeout is HTTPConfig.RequestTimeout's default.
const DefaultHTTPRequestTimeout = 5 * time.Second

// HTTPConfig configures an http environment: the organization's own
// service, which answers each request, POSTed as JSON, in the response
// body.
type HTTPConfig struct {
	// Label names the environment in every error; NewHTTP uses the
	// session's label when it is empty.
	Label string
	// URL is where requests are POSTed: https, or http to a loopback
	// address (127.0.0.0/8, ::1, localhost) only, since outcomes never
	// leave the machine in clear.
	URL string
	// RequestTimeout bounds each request, from connecting to reading the
	// whole answer.
	RequestTimeout time.Duration
}

// DefaultHTTPConfig returns an HTTPConfig with the default timeout and
// no URL.
func DefaultHTTPConfig() HTTPConfig {
	return HTTPConfig{RequestTimeout: DefaultHTTPRequestTimeout}
}

// Validate says what is wrong with c, if anything.
func (c HTTPConfig) Validate() error {
	if c.RequestTimeout <= 0 {
		return fmt.Errorf("request_timeout: want a positive duration, got %v", c.RequestTimeout)
	}
	u, err := url.Parse(c.URL)
	if err != nil || c.URL == "" {
		return fmt.Errorf("url: %q is not a URL such as \"http://127.0.0.1:8080/answer\"", c.URL)
	}
	if u.User != nil {
		return fmt.Errorf("url: %q holds credentials; a URL is logged, keep them out of it", u.Redacted())
	}
	switch u.Scheme {
	case "https":
		if u.Host == "" {
			return fmt.Errorf("url: %q has no host", c.URL)
		}
	case "http":
		if !loopback(u.Hostname()) {
			return fmt.Errorf("url: %q: plain http only to a loopback address (127.0.0.1, ::1, localhost); use https for another host", c.URL)
		}
	default:
		return fmt.Errorf("url: %q: want an http or https URL", c.URL)
	}
	return nil
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// HTTP is an http environment. Its client is its own (no global state),
// keeps connections alive and follows no redirects.
type HTTP struct {
	cfg    HTTPConfig
	s      Session
	client *http.Client
	closed context.Context // done once Close is called
	close  context.CancelFunc

	mu   sync.Mutex // serializes Answer; guards req and ans
	req  []byte
	body bytes.Buffer
	ans  answer
}

// NewHTTP returns an http environment for the session's role s.
func NewHTTP(cfg HTTPConfig, s Session) (*HTTP, error) {
	if cfg.Label == "" {
		cfg.Label = s.Label()
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Label, err)
	}
	tr := &http.Transport{
		Proxy:               nil, // the service is the organization's own
		DialContext:         (&net.Dialer{Timeout: cfg.RequestTimeout, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: cfg.RequestTimeout,
		ForceAttemptHTTP2:   true,
	}
	client := &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	closed, cancel := context.WithCancel(context.Background())
	return &HTTP{cfg: cfg, s: s, client: client, closed: closed, close: cancel}, nil
}

// Label returns the environment's label.
func (h *HTTP) Label() string { return h.cfg.Label }

// Answer POSTs q's request to the service and returns its answer. A
// failure — no connection, a timeout, a status other than 2xx, a
// malformed or mismatched body, an error answer — is returned as an
// *Error; nothing is retried.
func (h *HTTP) Answer(ctx context.Context, q protocol.Query) (protocol.Outcome, error) {
	fail := func(err error) (protocol.Outcome, error) {
		return protocol.Outcome{}, queryError(h.cfg.Label, &q, "", err)
	}
	if err := checkQuery(q); err != nil {
		return fail(fmt.Errorf("cannot ask: %w", err))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed.Err() != nil {
		return fail(ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, h.cfg.RequestTimeout)
	defer cancel()
	stop := context.AfterFunc(h.closed, cancel) // Close interrupts the request
	defer stop()
	h.req = appendRequest(h.req[:0], q)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, bytes.NewReader(h.req))
	if err != nil {
		return fail(fmt.Errorf("building the request: %w", err))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Bandit-Environment-Version", strconv.Itoa(Version))
	req.Header.Set("Bandit-Session", h.s.ID)
	req.Header.Set("Bandit-Role", h.s.Protocol+" "+h.s.Role+" "+strconv.Itoa(h.s.Index))
	resp, err := h.client.Do(req)
	if err != nil {
		if h.closed.Err() != nil {
			return fail(ErrClosed)
		}
		if ctx.Err() == context.DeadlineExceeded {
			return fail(fmt.Errorf("POST %s: no answer within %v", h.cfg.URL, h.cfg.RequestTimeout))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL again
		}
		return fail(fmt.Errorf("POST %s: %w", h.cfg.URL, err))
	}
	h.body.Reset()
	_, err = h.body.ReadFrom(io.LimitReader(resp.Body, MaxAnswerBytes+1))
	resp.Body.Close()
	body := h.body.Bytes()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(fmt.Errorf("POST %s: status %s, body %s", h.cfg.URL, resp.Status, excerpt(body)))
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return fail(fmt.Errorf("POST %s: the answer did not arrive within %v", h.cfg.URL, h.cfg.RequestTimeout))
		}
		return fail(fmt.Errorf("POST %s: reading the answer: %w", h.cfg.URL, err))
	}
	if len(body) > MaxAnswerBytes {
		return fail(fmt.Errorf("POST %s: the answer is longer than %d bytes", h.cfg.URL, MaxAnswerBytes))
	}
	if err := decodeAnswer(body, &h.ans); err != nil {
		return fail(fmt.Errorf("POST %s answered %s: %w", h.cfg.URL, excerpt(body), err))
	}
	o, err := outcome(q, &h.ans)
	if err != nil {
		var ae *answeredError
		if errors.As(err, &ae) {
			return fail(fmt.Errorf("POST %s: %w", h.cfg.URL, err))
		}
		return fail(fmt.Errorf("POST %s answered %s: %w", h.cfg.URL, excerpt(body), err))
	}
	return o, nil
}

// Close closes the client's idle connections; later queries fail.
func (h *HTTP) Close() error {
	h.close()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.client.CloseIdleConnections()
	return nil
}

// Immediate implements protocol.Environment: a service answers after a
// round trip, on the environment's own goroutine.
func (h *HTTP) Immediate() bool { return false }
