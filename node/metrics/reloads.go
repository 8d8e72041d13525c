package metrics

import (
	"sync"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/prometheus/client_golang/prometheus"
)

// Results of a config reload (bandit_config_reloads_total's result label,
// apitype.ReloadStatus.Result).
const (
	ReloadApplied = "applied"
	ReloadRefused = "refused"
)

// Reloads counts the config reloads a daemon tried, whatever asked
// for them (SIGHUP, the API, peers add), and keeps the last one's outcome
// for GET /v0/node and `bandit-node id`: a refused reload leaves the old
// config in force, which the operator must be able to see without reading
// the log.
type Reloads struct {
	Total      *prometheus.CounterVec // bandit_config_reloads_total, by result
	Successful prometheus.Gauge       // bandit_config_last_reload_successful

	mu   sync.Mutex // guards last
	last *apitype.ReloadStatus
}

// NewReloads returns the reload counters, registered in reg, with
// both results at 0 and the last reload successful: the config the daemon
// started with loaded.
func NewReloads(reg prometheus.Registerer) *Reloads {
	r := &Reloads{
		Total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bandit_config_reloads_total",
			Help: "Config reloads tried (SIGHUP, POST /v0/config/reload), by result: applied, or refused (the running config stays in force).",
		}, []string{"result"}),
		Successful: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bandit_config_last_reload_successful",
			Help: "1 when the config file last read (at start or by the last reload) is in force, 0 when the last reload was refused.",
		}),
	}
	r.Total.WithLabelValues(ReloadApplied)
	r.Total.WithLabelValues(ReloadRefused)
	r.Successful.Set(1)
	reg.MustRegister(r.Total, r.Successful)
	return r
}

// Record counts a reload tried at at: applied with change if err is nil,
// refused for err otherwise.
func (r *Reloads) Record(at time.Time, change apitype.ConfigChange, err error) {
	st := &apitype.ReloadStatus{At: at.UTC(), Result: ReloadApplied}
	if err != nil {
		st.Result, st.Reason = ReloadRefused, err.Error()
		r.Successful.Set(0)
	} else {
		st.Change = change.String()
		r.Successful.Set(1)
	}
	r.Total.WithLabelValues(st.Result).Inc()
	r.mu.Lock()
	r.last = st
	r.mu.Unlock()
}

// Last returns a copy of the last reload's outcome, nil if none.
func (r *Reloads) Last() *apitype.ReloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		return nil
	}
	c := *r.last
	return &c
}
