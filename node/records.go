package node

import (
	"context"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/node/store"
)

// applyRetention applies the retention policy in force to the store at
// now, keeping the records of active sessions.
func (n *Node) applyRetention(now time.Time) {
	p := store.RetentionOf(n.config().Session)
	res, err := n.store.Prune(p, now, n.rt.Active)
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
	if p := store.RetentionOf(n.config().Session); !p.KeepsAll() {
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
