package node

import (
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/prometheus/client_golang/prometheus"
)

// Results of a config reload (bandit_config_reloads_total's result label,
// apitype.ReloadStatus.Result).
const (
	reloadApplied = "applied"
	reloadRefused = "refused"
)

// reloadStatus counts the config reloads a daemon tried, whatever asked
// for them (SIGHUP, the API, peers add), and keeps the last one's outcome
// for GET /v0/node and `bandit-node id`: a refused reload leaves the old
// config in force, which the operator must be able to see without reading
// the log.
type reloadStatus struct {
	total      *prometheus.CounterVec // bandit_config_reloads_total, by result
	successful prometheus.Gauge       // bandit_config_last_reload_successful

	mu   sync.Mutex // guards last
	last *apitype.ReloadStatus
}

// newReloadStatus returns the reload counters, registered in reg, with
// both results at 0 and the last reload successful: the config the daemon
// started with loaded.
func newReloadStatus(reg prometheus.Registerer) *reloadStatus {
	r := &reloadStatus{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_config_reloads_total",
			Help: "Config reloads tried (SIGHUP, POST /v0/config/reload), by result: applied, or refused (the running config stays in force).",
		}, []string{"result"}),
		successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bandit_config_last_reload_successful",
			Help: "1 when the config file last read (at start or by the last reload) is in force, 0 when the last reload was refused.",
		}),
	}
	r.total.WithLabelValues(reloadApplied)
	r.total.WithLabelValues(reloadRefused)
	r.successful.Set(1)
	reg.MustRegister(r.total, r.successful)
	return r
}

// record counts a reload tried at at: applied with change if err is nil,
// refused for err otherwise.
func (r *reloadStatus) record(at time.Time, change apitype.ConfigChange, err error) {
	st := &apitype.ReloadStatus{At: at.UTC(), Result: reloadApplied}
	if err != nil {
		st.Result, st.Reason = reloadRefused, err.Error()
		r.successful.Set(0)
	} else {
		st.Change = change.String()
		r.successful.Set(1)
	}
	r.total.WithLabelValues(st.Result).Inc()
	r.mu.Lock()
	r.last = st
	r.mu.Unlock()
}

// lastReload returns a copy of the last reload's outcome, nil if none.
func (r *reloadStatus) lastReload() *apitype.ReloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	c := *r.last
	return &c
}
