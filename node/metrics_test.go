package node

import (
	"testing"
)

func TestTrafficMetrics(t *testing.T) {
	m := newMetrics()
	m.countRole(true, 100)
	m.countRole(true, 20)
	m.countRole(false, 7)
	m.count(false, kindControl, 3)
	m.count(true, kindTopic, 11)
	m.count(true, kindTopic, 1)

	families, err := m.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{} // "name direction kind"
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
