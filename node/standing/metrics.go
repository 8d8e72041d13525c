package standing

import (
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/prometheus/client_golang/prometheus"
)

// schedMetrics exposes the scheduler's state to Prometheus: per standing
// session, its next due time, whether a run is active, when its last run
// ended and whether it completed, and its runs since the daemon started by
// final state. An operator alerts on a session overdue
// (time() - bandit_standing_next_due_timestamp_seconds > 3600) or failing
// (bandit_standing_last_run_completed == 0).
type schedMetrics struct {
	st      *Scheduler
	runs    *prometheus.CounterVec // by name and final state
	nextDue *prometheus.Desc
	active  *prometheus.Desc
	lastEnd *prometheus.Desc
	lastOK  *prometheus.Desc
}

func newMetrics(st *Scheduler) *schedMetrics {
	return &schedMetrics{st: st,
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_standing_runs_total",
			Help: "Runs of each standing session that ended since the daemon started, by final state (completed, aborted).",
		}, []string{"name", "state"}),
		nextDue: prometheus.NewDesc("bandit_standing_next_due_timestamp_seconds",
			"When the standing session's next regular run is due (Unix time); absent when none is (on-boot after its run).", []string{"name"}, nil),
		active: prometheus.NewDesc("bandit_standing_active",
			"1 while a run of the standing session is proposed or running.", []string{"name"}, nil),
		lastEnd: prometheus.NewDesc("bandit_standing_last_run_end_timestamp_seconds",
			"When the standing session's last run ended (Unix time).", []string{"name"}, nil),
		lastOK: prometheus.NewDesc("bandit_standing_last_run_completed",
			"1 if the standing session's last run completed, 0 if it aborted.", []string{"name"}, nil),
	}
}

// Describe implements prometheus.Collector.
func (m *schedMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.runs.Describe(ch)
	for _, d := range []*prometheus.Desc{m.nextDue, m.active, m.lastEnd, m.lastOK} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (m *schedMetrics) Collect(ch chan<- prometheus.Metric) {
	m.runs.Collect(ch)
	for _, s := range m.st.List() {
		if s.NextDue != nil {
			ch <- prometheus.MustNewConstMetric(m.nextDue, prometheus.GaugeValue, float64(s.NextDue.UnixMilli())/1e3, s.Name)
		}
		active := 0.0
		if s.Active != "" {
			active = 1
		}
		ch <- prometheus.MustNewConstMetric(m.active, prometheus.GaugeValue, active, s.Name)
		if s.Last != nil {
			ok := 0.0
			if s.Last.State == apitype.StateCompleted {
				ok = 1
			}
			ch <- prometheus.MustNewConstMetric(m.lastEnd, prometheus.GaugeValue, float64(s.Last.Finished.UnixMilli())/1e3, s.Name)
			ch <- prometheus.MustNewConstMetric(m.lastOK, prometheus.GaugeValue, ok, s.Name)
		}
	}
}

// ended counts a run of session name that ended in state.
func (m *schedMetrics) ended(name, state string) {
	m.runs.WithLabelValues(name, state).Inc()
}
