package metrics

import (
	"regexp"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/prometheus/client_golang/prometheus"
)

// durationBuckets are the upper bounds, in seconds, of
// bandit_session_duration_seconds: from a one-second ping to a session of
// a week.
var durationBuckets = []float64{1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 2 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 4 * 86400, 7 * 86400}

// The classes of abort reasons (bandit_session_aborts_total{class}). The
// set is fixed, so the metric's cardinality is: families × classes.
const (
	abortDeclined    = "declined"         // a participant declined the proposal
	abortCanceled    = "canceled"         // an operator cancelled the session
	abortShutdown    = "shutdown"         // a daemon shut down or restarted while it was open
	abortInternal    = "internal"         // a panic recovered in the daemon's or a role's code
	abortEnvironment = "environment"      // a role's environment (exec, http, replay) failed
	abortTimeout     = "timeout"          // a peer stayed silent, or the session made no progress, too long
	abortUnreachable = "peer_unreachable" // a peer could not be reached (a send failed, a redial failed)
	abortOverload    = "overload"         // a peer sent more than a buffer cap, or faster than it was read
	abortRoleError   = "role_error"       // a role failed: it rejected a message, failed to start or reported inconsistently
	abortOther       = "other"            // anything else (a family's Combine failed, a reason from a newer peer)
)

// abortClasses lists every class, in the order of the docs.
var abortClasses = []string{abortDeclined, abortCanceled, abortShutdown, abortInternal, abortEnvironment,
	abortTimeout, abortUnreachable, abortOverload, abortRoleError, abortOther}

// abortRule classifies the reasons that contain one of its substrings.
type abortRule struct {
	class string
	has   []string
}

// abortRules classify abort reasons, first match wins. A reason may come
// from another organization, which wraps nothing: "node3 declined: ..."
// is a decline whatever node3's reason says, so declines come first. The
// substrings are those of the reasons the lifecycle (node/lifecycle) and
// the session code (node/session*.go, party.go, environment.go,
// inbound.go, panics.go, watch.go, transport.go) write; a local party's
// failure reads "party (org): <class> at step N" (node/sessions/disclosure.go), older
// daemons' reasons as they wrote them.
var abortRules = []abortRule{
	{abortDeclined, []string{" declined: "}},
	{abortCanceled, []string{"cancelled by the operator"}},
	{abortShutdown, []string{" is shutting down", " restarted while the session was open"}},
	{abortInternal, []string{"internal error"}},
	{abortEnvironment, []string{"its environment", "asks an environment"}},
	{abortTimeout, []string{"did not answer the proposal within", "did not start the session within",
		"stopped answering", "no progress for", " was paused for ", "did not subscribe to the session topic within"}},
	{abortUnreachable, []string{"could not send to", "sending to ", "connection to ", "could not publish on the session"}},
	{abortOverload, []string{"session.max_buffered_bytes", "session.max_peer_buffered_bytes", "could not keep up"}},
	{abortRoleError, []string{"rejected a message from", "failed to start", ": activation: ", "reported a result for",
		"reported two different results", "declared the session complete while", "combining the parties' reports failed"}},
}

// envLabel matches the label of a failing environment ("samba
// data_owner[3] of acme: ..."): environment.Error starts with it.
var envLabel = regexp.MustCompile(`\w+ \w+\[\d+\] of [^:]+: `)

// partyError matches a reason a local party's failure produced:
// "data_owner[3] (acme): ...".
var partyError = regexp.MustCompile(`^\w+\[\d+\] \([^)]+\)`)

// abortClass returns the class of an abort reason: one of abortClasses.
func abortClass(reason string) string {
	for _, r := range abortRules {
		for _, s := range r.has {
			if strings.Contains(reason, s) {
				return r.class
			}
		}
	}
	switch {
	case envLabel.MatchString(reason):
		return abortEnvironment
	case partyError.MatchString(reason):
		return abortRoleError
	}
	return abortOther
}

// newSessionMetrics returns bandit_session_duration_seconds and
// bandit_session_aborts_total, with the abort series of every family and
// class at 0 (so that a rate is defined before the first abort).
func newSessionMetrics(families []string) (*prometheus.HistogramVec, *prometheus.CounterVec) {
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "bandit_session_duration_seconds",
		Help:    "Durations of the sessions that ended on this node, from the proposal to the end, by protocol and outcome (completed, aborted).",
		Buckets: durationBuckets,
	}, []string{"protocol", "outcome"})
	aborts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "bandit_session_aborts_total",
		Help: "Sessions that aborted on this node, by protocol and class of reason (" + strings.Join(abortClasses, ", ") + ").",
	}, []string{"protocol", "class"})
	for _, f := range families {
		for _, c := range abortClasses {
			aborts.WithLabelValues(f, c)
		}
	}
	return durations, aborts
}

// SessionEnded counts a session of family that ended in state (completed
// or aborted, for reason) after d.
func (m *Metrics) SessionEnded(family, state, reason string, d time.Duration) {
	m.sessions.WithLabelValues(state).Inc()
	m.durations.WithLabelValues(family, state).Observe(d.Seconds())
	if state == apitype.StateAborted {
		m.aborts.WithLabelValues(family, abortClass(reason)).Inc()
	}
}

// sessionStates is the collector of bandit_sessions_by_state: the active
// sessions (proposed or running), read when scraped from states, which
// returns the state of each session the node holds.
type sessionStates struct {
	states func() []string
	desc   *prometheus.Desc
}

func NewSessionStates(states func() []string) prometheus.Collector {
	return &sessionStates{states: states, desc: prometheus.NewDesc("bandit_sessions_by_state",
		"Sessions active on this node, by state (proposed, running); they sum to bandit_sessions_active.", []string{"state"}, nil)}
}

// Describe implements prometheus.Collector.
func (c *sessionStates) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect implements prometheus.Collector.
func (c *sessionStates) Collect(ch chan<- prometheus.Metric) {
	count := map[string]int{apitype.StateProposed: 0, apitype.StateRunning: 0}
	for _, st := range c.states() {
		if st == apitype.StateCompleted || st == apitype.StateAborted {
			continue // ended, and about to be forgotten
		}
		count[st]++
	}
	for _, st := range []string{apitype.StateProposed, apitype.StateRunning} {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(count[st]), st)
	}
}
