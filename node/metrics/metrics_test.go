package metrics

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/p2p"
	"github.com/prometheus/client_golang/prometheus"
)

// fixedCounter is a frameCounter with fixed counts.
type fixedCounter p2p.MessengerStats

func (c fixedCounter) Stats() p2p.MessengerStats { return p2p.MessengerStats(c) }

func TestTrafficMetrics(t *testing.T) {
	m := New("ping", "samba")
	// A role messenger for each family, one control messenger; topic
	// messages are counted by traffic itself, by family.
	m.Traffic.Carry(KindRole, "ping", fixedCounter{FramesReceived: 1, BytesReceived: 100, FramesSent: 1, BytesSent: 7})
	m.Traffic.Carry(KindRole, "samba", fixedCounter{FramesReceived: 1, BytesReceived: 20})
	m.Traffic.Carry(KindControl, ControlProtocol, fixedCounter{FramesSent: 1, BytesSent: 3, Errors: 5})
	m.CountTopic("samba", true, 11)
	m.CountTopic("samba", true, 1)
	m.CountTopic("ping", false, 5)
	m.CountTopic("unknown", false, 5) // no session of a family the node lacks: not counted

	got := trafficSeries(t, m.Registry)
	tests := []struct {
		key  string
		want float64
	}{
		{"bandit_messages_total in role", 2},
		{"bandit_messages_total in role ping", 1},
		{"bandit_messages_total in role samba", 1},
		{"bandit_bytes_total in role", 120},
		{"bandit_bytes_total in role samba", 20},
		{"bandit_messages_total out role", 1},
		{"bandit_bytes_total out role ping", 7},
		{"bandit_bytes_total out role samba", 0},
		{"bandit_messages_total out control session", 1},
		{"bandit_bytes_total out control session", 3},
		{"bandit_messages_total in control session", 0},
		{"bandit_messages_total in topic samba", 2},
		{"bandit_bytes_total in topic samba", 12},
		{"bandit_messages_total in topic ping", 0},
		{"bandit_messages_total out topic ping", 1},
		{"bandit_bytes_total out topic", 5},
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
	series := 0
	for k := range got {
		if strings.Count(k, " ") == 3 {
			series++
		}
	}
	// 2 metrics × 2 directions × (control + 2 families × (role, topic)).
	if series != 20 {
		t.Errorf("%d series exported, want 20: %v", series, got)
	}
}

// trafficSeries gathers bandit_messages_total and bandit_bytes_total from
// reg, keyed "NAME DIRECTION KIND PROTOCOL", and their sums over the
// protocols, keyed "NAME DIRECTION KIND".
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
			key := f.GetName() + " " + labels["direction"] + " " + labels["kind"]
			got[key+" "+labels["protocol"]] = mt.GetCounter().GetValue()
			got[key] += mt.GetCounter().GetValue()
		}
	}
	return got
}

// TestLinkMetrics: the messengers' link counters are summed over the
// control and role messengers.
func TestLinkMetrics(t *testing.T) {
	m := New("ping")
	m.Traffic.Carry(KindRole, "ping", fixedCounter{FramesResent: 3, Duplicates: 2, Unacknowledged: 4})
	m.Traffic.Carry(KindControl, ControlProtocol, fixedCounter{FramesResent: 1, FramesDropped: 7, Unacknowledged: 1})
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			switch f.GetName() {
			case "bandit_link_frames_total":
				got[f.GetName()+" "+mt.GetLabel()[0].GetValue()] = mt.GetCounter().GetValue()
			case "bandit_link_unacknowledged_frames":
				got[f.GetName()] = mt.GetGauge().GetValue()
			}
		}
	}
	want := map[string]float64{
		"bandit_link_frames_total resent":    4,
		"bandit_link_frames_total duplicate": 2,
		"bandit_link_frames_total dropped":   7,
		"bandit_link_unacknowledged_frames":  5,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
