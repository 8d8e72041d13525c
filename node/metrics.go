package node

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the daemon's Prometheus metrics, served on the control API's
// listener at /metrics. They live in a registry of their own (no global one).
type metrics struct {
	registry *prometheus.Registry
	sessions *prometheus.CounterVec // by final state
	active   prometheus.Gauge
	messages *prometheus.CounterVec // by direction and kind
	bytes    *prometheus.CounterVec // by direction and kind
	errors   *prometheus.CounterVec // by kind

	// The role-message counters, resolved once: they are counted for every
	// message of a session and a label lookup hashes both labels.
	roleIn, roleOut           prometheus.Counter
	roleInBytes, roleOutBytes prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_sessions_total", Help: "Sessions that ended on this node, by final state (completed, aborted).",
		}, []string{"state"}),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bandit_sessions_active", Help: "Sessions proposed or running on this node.",
		}),
		messages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_messages_total", Help: "Session messages sent and received, by direction (in, out) and kind (control, role, topic).",
		}, []string{"direction", "kind"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_bytes_total", Help: "Bytes of session messages sent and received, by direction and kind.",
		}, []string{"direction", "kind"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_errors_total", Help: "Errors, by kind (decode, send, rejected, unknown_session, role).",
		}, []string{"kind"}),
	}
	m.registry.MustRegister(m.sessions, m.active, m.messages, m.bytes, m.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.roleIn, m.roleInBytes = m.messages.WithLabelValues("in", "role"), m.bytes.WithLabelValues("in", "role")
	m.roleOut, m.roleOutBytes = m.messages.WithLabelValues("out", "role"), m.bytes.WithLabelValues("out", "role")
	return m
}

func (m *metrics) count(direction, kind string, size int) {
	m.messages.WithLabelValues(direction, kind).Inc()
	m.bytes.WithLabelValues(direction, kind).Add(float64(size))
}

// countRole counts a role message in (in) or out.
func (m *metrics) countRole(in bool, size int) {
	if in {
		m.roleIn.Inc()
		m.roleInBytes.Add(float64(size))
		return
	}
	m.roleOut.Inc()
	m.roleOutBytes.Add(float64(size))
}

func (m *metrics) fail(kind string) { m.errors.WithLabelValues(kind).Inc() }
