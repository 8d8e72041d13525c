package metrics

import (
	"sync/atomic"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/prometheus/client_golang/prometheus"
)

// The kinds of session messages traffic counts.
const (
	KindControl = iota
	KindRole
	kindTopic
	numKinds
)

var kindNames = [numKinds]string{"control", "role", "topic"}

// ControlProtocol is the protocol label of control messages: they belong
// to the session-control protocol (ControlProtocol), whatever the family
// of their session.
const ControlProtocol = "session"

// frameCounter is what traffic reads of a messenger: p2p.Messenger.Stats.
type frameCounter interface{ Stats() p2p.MessengerStats }

// topicCounter counts the topic messages of one family, out (0) and in (1).
type topicCounter [2]struct{ messages, bytes atomic.Uint64 }

// carried is a messenger whose frames traffic reports as messages of a
// kind and protocol.
type carried struct {
	kind     int
	protocol string
	c        frameCounter
}

// Traffic is the Prometheus collector of bandit_messages_total and
// bandit_bytes_total, by direction, kind and protocol. Control and role
// messages travel in the frames of p2p messengers, which count them (frames
// and payload bytes, in and out) anyway, so traffic reads their counters
// when scraped rather than counting every message a second time: on a
// 103-daemon testnet every cache line a message touches is a miss, and the
// daemon's own counters were one more per message. Topic messages, which
// go through gossipsub, are counted here, by family. Every series —
// control of protocol "session", role and topic of every family — is
// exported from the start, at 0 until used.
type Traffic struct {
	families []string
	// topic has a counter for every family, made by newTraffic: the map
	// is read-only after, so counting needs no lock.
	topic     map[string]*topicCounter
	streams   []carried // control and role: the messengers carrying them
	msgDesc   *prometheus.Desc
	byteDesc  *prometheus.Desc
	writeDesc *prometheus.Desc
	// linkDesc and unackedDesc report the messengers' links (p2p link.go):
	// frames resent across a lost connection, copies dropped at the
	// receiver, frames given up on; frames awaiting acknowledgement.
	linkDesc    *prometheus.Desc
	unackedDesc *prometheus.Desc
}

func newTraffic(families []string) *Traffic {
	labels := []string{"direction", "kind", "protocol"}
	t := &Traffic{
		families: families,
		topic:    make(map[string]*topicCounter, len(families)),
		msgDesc: prometheus.NewDesc("bandit_messages_total",
			"Session messages sent and received, by direction (in, out), kind (control, role, topic) and protocol "+
				"(the family, or \"session\" for control messages).", labels, nil),
		byteDesc: prometheus.NewDesc("bandit_bytes_total",
			"Bytes of session messages sent and received, by direction, kind and protocol.", labels, nil),
		writeDesc: prometheus.NewDesc("bandit_writes_total",
			"Writes to the network that carried the control and role messages sent, by kind (control, role) and protocol: "+
				"a burst of messages to one peer goes in one write, so messages sent / writes is the messages a write carried.",
			[]string{"kind", "protocol"}, nil),
		linkDesc: prometheus.NewDesc("bandit_link_frames_total",
			"Control and role frames by what a lost connection made of them: resent on a new stream (resent), "+
				"received again and dropped (duplicate), given up on after resend_timeout or a peer that refuses them (dropped).",
			[]string{"event"}, nil),
		unackedDesc: prometheus.NewDesc("bandit_link_unacknowledged_frames",
			"Control and role frames sent and not yet acknowledged by their peers.", nil, nil),
	}
	for _, f := range families {
		t.topic[f] = &topicCounter{}
	}
	return t
}

// Carry makes traffic report the frames of c as messages of kind
// (kindControl or kindRole) and protocol (controlProtocol, or the family
// of a role messenger). Call it before the metrics are served.
func (t *Traffic) Carry(kind int, protocol string, c frameCounter) {
	t.streams = append(t.streams, carried{kind: kind, protocol: protocol, c: c})
}

// addTopic counts a topic message of family. Sessions exist only of the
// families the node was built with, which all have a counter.
func (t *Traffic) addTopic(family string, in bool, size int) {
	tc := t.topic[family]
	if tc == nil {
		return // a Node built without New, in a test
	}
	d := 0
	if in {
		d = 1
	}
	c := &tc[d]
	c.messages.Add(1)
	c.bytes.Add(uint64(size))
}

// Describe implements prometheus.Collector.
func (t *Traffic) Describe(ch chan<- *prometheus.Desc) {
	ch <- t.msgDesc
	ch <- t.byteDesc
	ch <- t.writeDesc
	ch <- t.linkDesc
	ch <- t.unackedDesc
}

// trafficKey is one series of traffic, but for its direction.
type trafficKey struct {
	kind     int
	protocol string
}

// Collect implements prometheus.Collector.
func (t *Traffic) Collect(ch chan<- prometheus.Metric) {
	type counts [2]struct{ messages, bytes, writes uint64 } // out (0) / in (1); writes out only
	sums := map[trafficKey]*counts{{KindControl, ControlProtocol}: {}}
	order := []trafficKey{{KindControl, ControlProtocol}}
	for _, f := range t.families {
		for _, k := range []int{KindRole, kindTopic} {
			key := trafficKey{k, f}
			sums[key] = &counts{}
			order = append(order, key)
		}
	}
	for f, tc := range t.topic {
		n := sums[trafficKey{kindTopic, f}]
		for d := range n {
			n[d].messages, n[d].bytes = tc[d].messages.Load(), tc[d].bytes.Load()
		}
	}
	var resent, dups, dropped, unacked uint64
	for _, s := range t.streams {
		key := trafficKey{s.kind, s.protocol}
		n := sums[key]
		if n == nil {
			n = &counts{}
			sums[key] = n
			order = append(order, key)
		}
		st := s.c.Stats()
		resent += st.FramesResent
		dups += st.Duplicates
		dropped += st.FramesDropped
		unacked += st.Unacknowledged
		n[0].messages += st.FramesSent
		n[0].bytes += st.BytesSent
		n[0].writes += st.Writes
		n[1].messages += st.FramesReceived
		n[1].bytes += st.BytesReceived
	}
	for _, key := range order {
		n := sums[key]
		for d, dir := range [2]string{"out", "in"} {
			ch <- prometheus.MustNewConstMetric(t.msgDesc, prometheus.CounterValue, float64(n[d].messages), dir, kindNames[key.kind], key.protocol)
			ch <- prometheus.MustNewConstMetric(t.byteDesc, prometheus.CounterValue, float64(n[d].bytes), dir, kindNames[key.kind], key.protocol)
		}
		if key.kind != kindTopic {
			ch <- prometheus.MustNewConstMetric(t.writeDesc, prometheus.CounterValue, float64(n[0].writes), kindNames[key.kind], key.protocol)
		}
	}
	for _, e := range []struct {
		event string
		n     uint64
	}{{"resent", resent}, {"duplicate", dups}, {"dropped", dropped}} {
		ch <- prometheus.MustNewConstMetric(t.linkDesc, prometheus.CounterValue, float64(e.n), e.event)
	}
	ch <- prometheus.MustNewConstMetric(t.unackedDesc, prometheus.GaugeValue, float64(unacked))
}
