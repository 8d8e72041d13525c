package metrics

import (
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/prometheus/client_golang/prometheus"
)

// storeCollector is the collector of the metrics of the data directory's
// health, read from the store and the session logs when scraped:
//
//   - bandit_store_write_failures_total, by what was written: "record" (a
//     session record, or the probe that checks the disk again), "journal"
//     (the copy of a record the disk refused, unsaved.go), "session_log";
//   - bandit_records_unsaved: the session records kept in memory until the
//     disk takes them;
//   - bandit_store_healthy: 1 while the data directory takes every write,
//     0 otherwise (what /readyz says, "storage: …").
type storeCollector struct {
	st                         *store.Store
	logs                       *store.SessionLogs
	failures, unsaved, healthy *prometheus.Desc
}

func NewStoreCollector(st *store.Store, logs *store.SessionLogs) prometheus.Collector {
	return &storeCollector{st: st, logs: logs,
		failures: prometheus.NewDesc("bandit_store_write_failures_total",
			"Writes the data directory refused, by what was written (record: a session record or the check of the disk; journal: the copy of a refused record; session_log).",
			[]string{"what"}, nil),
		unsaved: prometheus.NewDesc("bandit_records_unsaved",
			"Session records kept in memory because the data directory refused them; they are written again until it takes them.", nil, nil),
		healthy: prometheus.NewDesc("bandit_store_healthy",
			"1 while the data directory takes the session records and logs, 0 otherwise (/readyz says why).", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.failures
	ch <- c.unsaved
	ch <- c.healthy
}

// Collect implements prometheus.Collector.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.st
	for what, v := range map[string]uint64{"record": st.Failures.Record.Load(), "journal": st.Failures.Journal.Load(),
		"session_log": c.logs.Failures.Load()} {
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(v), what)
	}
	ch <- prometheus.MustNewConstMetric(c.unsaved, prometheus.GaugeValue, float64(st.UnsavedCount()))
	healthy := 1.0
	if st.Problem() != "" || c.logs.Problem() != "" {
		healthy = 0
	}
	ch <- prometheus.MustNewConstMetric(c.healthy, prometheus.GaugeValue, healthy)
}
