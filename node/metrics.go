package node

import (
	"sync/atomic"

	"github.com/bandit-node/bandit-node/p2p"
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
	// rolePanics counts the panics recovered in a role's code, by
	// protocol: each aborted its session (see session.rolePanicked).
	rolePanics *prometheus.CounterVec
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
			Name: "bandit_errors_total", Help: "Errors, by kind (decode, send, rejected, unknown_session, role, panic, overflow).",
		}, []string{"kind"}),
		rolePanics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_role_panics_total", Help: "Panics in a role's code, by protocol; each aborted its session and nothing else.",
		}, []string{"protocol"}),
	}
	m.registry.MustRegister(m.sessions, m.active, m.traffic, m.errors, m.rolePanics,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// countTopic counts a topic message in (in) or out. Control and role
// messages are counted by the messengers that carry them (traffic.streams).
func (m *metrics) countTopic(in bool, size int) { m.traffic.addTopic(in, size) }

func (m *metrics) fail(kind string) { m.errors.WithLabelValues(kind).Inc() }

// The kinds of session messages traffic counts.
const (
	kindControl = iota
	kindRole
	kindTopic
	numKinds
)

var kindNames = [numKinds]string{"control", "role", "topic"}

// frameCounter is what traffic reads of a messenger: p2p.Messenger.Stats.
type frameCounter interface{ Stats() p2p.MessengerStats }

// traffic is the Prometheus collector of bandit_messages_total and
// bandit_bytes_total, by direction and kind. Control and role messages
// travel in the frames of p2p messengers, which count them (frames and
// payload bytes, in and out) anyway, so traffic reads their counters when
// scraped rather than counting every message a second time: on a 103-daemon
// testnet every cache line a message touches is a miss, and the daemon's own
// counters were one more per message. Topic messages, which go through
// gossipsub, are counted here. All six direction × kind series are exported
// from the start, at 0 until used.
type traffic struct {
	topic    [2]struct{ messages, bytes atomic.Uint64 } // out (0) / in (1)
	streams  [numKinds][]frameCounter                   // control and role: the messengers carrying them
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

// carry makes traffic report the frames of c as messages of kind
// (kindControl or kindRole). Call it before the metrics are served.
func (t *traffic) carry(kind int, c frameCounter) { t.streams[kind] = append(t.streams[kind], c) }

func (t *traffic) addTopic(in bool, size int) {
	d := 0
	if in {
		d = 1
	}
	c := &t.topic[d]
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
		var n [2]struct{ messages, bytes uint64 } // out (0) / in (1)
		if k == kindTopic {
			for d := range n {
				n[d].messages, n[d].bytes = t.topic[d].messages.Load(), t.topic[d].bytes.Load()
			}
		}
		for _, c := range t.streams[k] {
			st := c.Stats()
			n[0].messages += st.FramesSent
			n[0].bytes += st.BytesSent
			n[1].messages += st.FramesReceived
			n[1].bytes += st.BytesReceived
		}
		for d, dir := range [2]string{"out", "in"} {
			ch <- prometheus.MustNewConstMetric(t.msgDesc, prometheus.CounterValue, float64(n[d].messages), dir, name)
			ch <- prometheus.MustNewConstMetric(t.byteDesc, prometheus.CounterValue, float64(n[d].bytes), dir, name)
		}
	}
}
