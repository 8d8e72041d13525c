package drive

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
)

// scriptedEnvironment answers its queries with errs in turn (nil: an
// outcome).
type scriptedEnvironment struct {
	errs   []error
	closed bool
}

func (e *scriptedEnvironment) Answer(_ context.Context, q protocol.Query) (protocol.Outcome, error) {
	err := e.errs[0]
	e.errs = e.errs[1:]
	return protocol.Outcome{Rewards: []float64{1}}, err
}
func (e *scriptedEnvironment) Close() error    { e.closed = true; return nil }
func (e *scriptedEnvironment) Immediate() bool { return false }

// TestMeter: a meter counts the answers, the queries asked and not
// answered (failed, or waiting in its driver's queue), keeps the
// environment's kind and closes it; it warns only of an environment that
// answered none of its role's queries.
func TestMeter(t *testing.T) {
	fail := errors.New("context canceled")
	tests := []struct {
		name                string
		errs                []error
		waiting             int
		queries, unanswered int64
		starved             bool
	}{
		{"all answered", []error{nil, nil, nil}, 0, 3, 0, false},
		{"one cut off at the end", []error{nil, nil, fail}, 0, 2, 1, false},
		{"none answered, one asked", []error{fail}, 0, 0, 1, true},
		{"none asked yet, two waiting", nil, 2, 0, 2, true},
		{"nothing asked", nil, 0, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &scriptedEnvironment{errs: tt.errs}
			m := NewMeter(env, "exec")
			for range tt.errs {
				m.Answer(context.Background(), protocol.Query{Kind: protocol.QueryPull})
			}
			u := m.Use(tt.waiting).WithWarning(protocol.Party{Role: "agent", Index: 2})
			if u.Source != "exec" || u.Queries != tt.queries || u.Unanswered != tt.unanswered || u.Starved() != tt.starved {
				t.Errorf("use %+v; want %d answered, %d unanswered, starved %v", u, tt.queries, tt.unanswered, tt.starved)
			}
			if got := u.Warning != ""; got != tt.starved || tt.starved && !strings.HasPrefix(u.Warning, "agent[2]'s environment (exec) answered none") {
				t.Errorf("warning %q", u.Warning)
			}
			if m.Immediate() || m.Close() != nil || !env.closed {
				t.Error("the meter does not pass Immediate and Close through")
			}
		})
	}
}
