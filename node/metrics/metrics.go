package metrics

import (
	"strings"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the daemon's Prometheus metrics, served at /metrics on the
// control API's listener (with its token) and on the metrics listener
// (metrics.listen, without one). They live in a registry of their own (no
// global one). The collectors that read the node when scraped (peers,
// sessions by state, build info) are registered by Node.registerCollectors.
type Metrics struct {
	Registry *prometheus.Registry
	sessions *prometheus.CounterVec // by final state
	Active   prometheus.Gauge
	Traffic  *Traffic
	Errors   *prometheus.CounterVec // by kind
	// RolePanics counts the panics recovered in a role's code, by
	// protocol: each aborted its session (see session.rolePanicked).
	RolePanics *prometheus.CounterVec
	// durations and aborts are observed when a session ends
	// (metrics_sessions.go).
	durations *prometheus.HistogramVec // by protocol and outcome
	aborts    *prometheus.CounterVec   // by protocol and abort class
}

// New returns the metrics of a node that speaks the protocol
// families named: their series exist from the start, at 0.
func New(families ...string) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_sessions_total", Help: "Sessions that ended on this node, by final state (completed, aborted).",
		}, []string{"state"}),
		Active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bandit_sessions_active", Help: "Sessions proposed or running on this node.",
		}),
		Traffic: newTraffic(families),
		Errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_errors_total", Help: "Errors, by kind (" + strings.Join(errorKinds, ", ") + ").",
		}, []string{"kind"}),
		RolePanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_role_panics_total", Help: "Panics in a role's code, by protocol; each aborted its session and nothing else.",
		}, []string{"protocol"}),
	}
	// Every series with labels from a fixed set starts at 0, so that a
	// rate is defined before the first event.
	for _, f := range families {
		m.RolePanics.WithLabelValues(f)
	}
	for _, st := range []string{apitype.StateCompleted, apitype.StateAborted} {
		m.sessions.WithLabelValues(st)
	}
	for _, k := range errorKinds {
		m.Errors.WithLabelValues(k)
	}
	m.durations, m.aborts = newSessionMetrics(families)
	m.Registry.MustRegister(m.sessions, m.Active, m.Traffic, m.Errors, m.RolePanics, m.durations, m.aborts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// CountTopic counts a topic message of a session of family in (in) or out.
// Control and role messages are counted by the messengers that carry them
// (traffic.streams).
func (m *Metrics) CountTopic(family string, in bool, size int) { m.Traffic.addTopic(family, in, size) }

// errorKinds are the kinds of bandit_errors_total: what fail is given.
var errorKinds = []string{"decode", "send", "rejected", "unknown_session", "role", "panic", "overflow"}

// Fail counts an error of kind, one of errorKinds.
func (m *Metrics) Fail(kind string) { m.Errors.WithLabelValues(kind).Inc() }
