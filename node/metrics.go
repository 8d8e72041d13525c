package node

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the daemon's Prometheus metrics, served on the control API's
// listener at /metrics. They live in a registry of their own (no global one).
type metrics struct {
	registry *prometheus.Registry
	sessions *prometheus.CounterVec // by final state
	active   prometheus.Gauge
	traffic  *traffic
	errors   *prometheus.CounterVec // by kind
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
		traffic: newTraffic(),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_errors_total", Help: "Errors, by kind (decode, send, rejected, unknown_session, role).",
		}, []string{"kind"}),
	}
	m.registry.MustRegister(m.sessions, m.active, m.traffic, m.errors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// count counts a message of kind (kindControl, kindRole, kindTopic) in or out.
func (m *metrics) count(in bool, kind, size int) { m.traffic.add(in, kind, size) }

// countRole counts a role message in (in) or out.
func (m *metrics) countRole(in bool, size int) { m.traffic.add(in, kindRole, size) }

func (m *metrics) fail(kind string) { m.errors.WithLabelValues(kind).Inc() }

// The kinds of session messages traffic counts.
const (
	kindControl = iota
	kindRole
	kindTopic
	numKinds
)

var kindNames = [numKinds]string{"control", "role", "topic"}

// traffic counts session messages and their bytes by direction and kind, and
// is the Prometheus collector of bandit_messages_total and bandit_bytes_total.
// Every role message is counted twice (its number and its bytes), in and
// out: the four counters of role messages sit side by side in one cache line
// rather than in four counters of a CounterVec, each its own object, which
// cost a data owner of a 103-daemon testnet as much as its AES-GCM.
type traffic struct {
	n        [numKinds][2]struct{ messages, bytes atomic.Uint64 } // by kind, then out (0) / in (1)
	msgDesc  *prometheus.Desc
	byteDesc *prometheus.Desc
}

func newTraffic() *traffic {
	labels := []string{"direction", "kind"}
	return &traffic{
		msgDesc: prometheus.NewDesc("bandit_messages_total",
			"Session messages sent and received, by direction (in, out) and kind (control, role, topic).", labels, nil),
		byteDesc: prometheus.NewDesc("bandit_bytes_total",
			"Bytes of session messages sent and received, by direction and kind.", labels, nil),
	}
}

func (t *traffic) add(in bool, kind, size int) {
	d := 0
	if in {
		d = 1
	}
	c := &t.n[kind][d]
	c.messages.Add(1)
	c.bytes.Add(uint64(size))
}

// Describe implements prometheus.Collector.
func (t *traffic) Describe(ch chan<- *prometheus.Desc) {
	ch <- t.msgDesc
	ch <- t.byteDesc
}

// Collect implements prometheus.Collector.
func (t *traffic) Collect(ch chan<- prometheus.Metric) {
	for k, name := range kindNames {
		for d, dir := range [2]string{"out", "in"} {
			c := &t.n[k][d]
			ch <- prometheus.MustNewConstMetric(t.msgDesc, prometheus.CounterValue, float64(c.messages.Load()), dir, name)
			ch <- prometheus.MustNewConstMetric(t.byteDesc, prometheus.CounterValue, float64(c.bytes.Load()), dir, name)
		}
	}
}
