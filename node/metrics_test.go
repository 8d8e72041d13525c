package node

import (
	"testing"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/prometheus/client_golang/prometheus"
)

// fixedCounter is a frameCounter with fixed counts.
type fixedCounter p2p.MessengerStats

func (c fixedCounter) Stats() p2p.MessengerStats { return p2p.MessengerStats(c) }

func TestTrafficMetrics(t *testing.T) {
	m := newMetrics()
	// Two role messengers (two families), one control messenger; topic
	// messages are counted by traffic itself.
	m.traffic.carry(kindRole, fixedCounter{FramesReceived: 1, BytesReceived: 100, FramesSent: 1, BytesSent: 7})
	m.traffic.carry(kindRole, fixedCounter{FramesReceived: 1, BytesReceived: 20})
	m.traffic.carry(kindControl, fixedCounter{FramesSent: 1, BytesSent: 3, Errors: 5})
	m.countTopic(true, 11)
	m.countTopic(true, 1)

	got := trafficSeries(t, m.registry)
	tests := []struct {
		key  string
		want float64
	}{
		{"bandit_messages_total in role", 2},
		{"bandit_bytes_total in role", 120},
		{"bandit_messages_total out role", 1},
		{"bandit_bytes_total out role", 7},
		{"bandit_messages_total out control", 1},
		{"bandit_bytes_total out control", 3},
		{"bandit_messages_total in control", 0},
		{"bandit_messages_total in topic", 2},
		{"bandit_bytes_total in topic", 12},
		{"bandit_messages_total out topic", 0},
	}
	for _, tc := range tests {
		v, ok := got[tc.key]
		if !ok {
			t.Errorf("%s: not exported", tc.key)
			continue
		}
		if v != tc.want {
			t.Errorf("%s = %v, want %v", tc.key, v, tc.want)
		}
	}
	if len(got) != 12 {
		t.Errorf("%d series exported, want 12 (2 metrics × 2 directions × 3 kinds): %v", len(got), got)
	}
}

// trafficSeries gathers bandit_messages_total and bandit_bytes_total from
// reg, keyed "NAME DIRECTION KIND".
func trafficSeries(t testing.TB, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "bandit_messages_total" && f.GetName() != "bandit_bytes_total" {
			continue
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[f.GetName()+" "+labels["direction"]+" "+labels["kind"]] = mt.GetCounter().GetValue()
		}
	}
	return got
}
