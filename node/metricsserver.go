package node

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/bandit-node/bandit-node/node/api"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler is the metrics listener's (metrics.listen): read-only and
// without a token, for a monitoring system. It serves GET and HEAD only —
// another method is answered 405, another path 404 — and nothing it serves
// changes anything:
//
//   - /metrics: the daemon's Prometheus metrics, as on the control API;
//   - /healthz: 200 "ok" while the process serves HTTP at all;
//   - /readyz: 200 when the libp2p host is listening, the data directory
//     takes the session records and logs, and at least metrics.min_peers
//     address-book peers are connected; 503 with the reason otherwise.
func (n *Node) metricsHandler() http.Handler {
	mux := http.NewServeMux()
	// "GET" patterns match HEAD too; net/http answers other methods on
	// these paths 405 (with Allow) and other paths 404.
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if reason, ok := n.ready(); !ok {
			writeText(w, http.StatusServiceUnavailable, "not ready: "+reason)
			return
		}
		writeText(w, http.StatusOK, "ok")
	})
	return mux
}

// writeText answers code with body, a line of plain text.
func writeText(w http.ResponseWriter, code int, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, body)
}

// newMetricsServer returns the metrics listener's server, with the control
// API's timeouts.
func (n *Node) newMetricsServer() *http.Server {
	return api.NewServer(n.metricsHandler(), nil, n.log)
}

// startMetrics starts the metrics listener, if metrics.listen is set. Its
// server's errors go to errc.
func (n *Node) startMetrics(errc chan<- error) error {
	if n.config().Metrics.Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", n.config().Metrics.Listen)
	if err != nil {
		return fmt.Errorf("metrics.listen: %w", err)
	}
	srv := n.newMetricsServer()
	n.mu.Lock()
	n.metricsLn, n.metricsSrv = ln, srv
	n.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("metrics listener: %w", err)
		}
	}()
	n.log.Info("metrics listener started", "listen", ln.Addr().String(), "min_peers", n.config().Metrics.MinPeers)
	return nil
}

// stopMetrics stops the metrics listener, if it runs.
func (n *Node) stopMetrics(ctx context.Context) {
	n.mu.Lock()
	srv := n.metricsSrv
	n.mu.Unlock()
	if srv != nil {
		srv.Shutdown(ctx)
	}
}

// MetricsAddr returns the metrics listener's address once Run has started
// it, or "" when metrics.listen is not set.
func (n *Node) MetricsAddr() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.metricsLn == nil {
		return ""
	}
	return n.metricsLn.Addr().String()
}
