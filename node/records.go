package node

import (
	"context"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/node/store"
)

// storageProblem says what keeps this node's data directory from storing
// what it must — session records, session logs — "" if nothing: a reason
// /readyz gives.
func (n *Node) storageProblem() string {
	if p := n.store.Problem(); p != "" {
		return "storage: " + p
	}
	if p := n.slogs.Problem(); p != "" {
		return "storage: " + p
	}
	return ""
}

// applyRetention applies the retention policy in force to the store at
// now, keeping the records of active sessions.
func (n *Node) applyRetention(now time.Time) {
	p := store.RetentionOf(n.config().Session)
	res, err := n.store.Prune(p, now, func(id string) bool { return n.lookup(id) != nil })
	if err != nil {
		n.log.Warn("applying the record retention policy", "err", err)
	}
	if res.Removed > 0 {
		n.log.Info("removed the records of ended sessions by the retention policy", "removed", res.Removed,
			"keep", p.Keep.String(), "keep_count", p.KeepCount, "standing_summarized", fmt.Sprint(res.Summarized))
	}
}

// kickRetention asks the retention loop for a pass.
func (n *Node) kickRetention() {
	select {
	case n.retentionKick <- struct{}{}:
	default:
	}
}

// sessionEndedRetention asks the retention loop for a pass now that a
// session ended, and another once its record is past the grace.
func (n *Node) sessionEndedRetention() {
	n.kickRetention()
	live := n.live.Load()
	if live == nil {
		return // a Node built without New, in a test
	}
	if p := store.RetentionOf(live.cfg.Session); !p.KeepsAll() {
		time.AfterFunc(p.Grace+time.Second, n.kickRetention)
	}
}

// runRetention applies the retention policy now, every retentionInterval
// and after each session that ends, until ctx ends.
func (n *Node) runRetention(ctx context.Context) {
	t := time.NewTicker(retentionInterval)
	defer t.Stop()
	n.applyRetention(time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-n.retentionKick:
		}
		n.applyRetention(time.Now())
	}
}

// retentionInterval is how often the daemon applies the record retention
// policy besides at start and after each session that ends.
const retentionInterval = time.Hour
