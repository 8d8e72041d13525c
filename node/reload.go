package node

import (
	"context"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Reload re-reads the config file the daemon was started from and applies
// it (applyConfig). ctx bounds nothing yet but is taken for the callers'
// sake: the API handler and SIGHUP. Every reload, applied or refused, is
// counted (bandit_config_reloads_total) and its outcome kept for GET
// /v0/node (reloadStatus).
func (n *Node) Reload(ctx context.Context) (apitype.ConfigChange, error) {
	ch, err := n.reload(ctx)
	n.reloads.record(time.Now(), ch, err)
	n.events.Publish(events.KindReload, n.reloads.lastReload())
	return ch, err
}

func (n *Node) reload(ctx context.Context) (apitype.ConfigChange, error) {
	path := n.config().Path
	if path == "" {
		return apitype.ConfigChange{}, config.ErrNoConfigFile
	}
	next, err := config.LoadConfig(path, n.reg)
	if err != nil {
		return apitype.ConfigChange{}, fmt.Errorf("the new config is refused, the running one stays in force: %w", err)
	}
	return n.applyConfig(ctx, next)
}

// applyConfig puts next, a config that LoadConfig accepted, in force in the
// running daemon, or refuses it whole, leaving the running config in force:
// a key that needs a restart changed (config.DiffConfig), or a file or program
// that [local] names is missing (CheckLocalData), or the address book is
// one the host refuses.
//
// What changes, at once: the address book (removed peers are refused,
// disconnected and no longer dialed; added peers are allowed and dialed;
// sessions running with a removed peer are aborted, since their peer is
// gone), and for new proposals and sessions the policy, the [local] data
// and environments and the live [session] keys. A running session keeps the
// config and address book it was created under (session.live) to its end.
//
// Every reload goes through here, whatever asked for it.
func (n *Node) applyConfig(ctx context.Context, next *config.Config) (apitype.ConfigChange, error) {
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	prev := n.live.Load()
	refused := func(err error) (apitype.ConfigChange, error) {
		return apitype.ConfigChange{}, fmt.Errorf("the new config is refused, the running one stays in force: %w", err)
	}
	ch, err := config.DiffConfig(prev.cfg, next)
	if err != nil {
		return refused(err)
	}
	if err := next.CheckLocalData(); err != nil {
		return refused(err)
	}
	book, err := addressBook(next)
	if err != nil {
		return refused(err)
	}
	// A peer that stays keeps the book's copy of its ID, which the
	// running sessions hold: comparing the two stays a pointer compare.
	for i, p := range book {
		if old, ok := prev.ids[p.Name]; ok && old == p.ID {
			book[i].ID = old
		}
	}
	if len(ch.PeersAdded)+len(ch.PeersRemoved)+len(ch.PeersReaddressed) > 0 {
		// The host validates the book and swaps it whole, or not at all.
		if _, err := n.host.SetBook(book); err != nil {
			return refused(fmt.Errorf("peers: %w", err))
		}
	}
	live := newLiveConfig(next, n.host.ID(), book, prev)
	n.live.Store(live)

	// A session that runs with a peer that left the book cannot go on:
	// the peer is disconnected and refused. It aborts now, saying why,
	// rather than at its heartbeat timeout.
	removed := map[peer.ID]string{}
	for id, name := range prev.names {
		if _, ok := live.names[id]; !ok {
			removed[id] = name
		}
	}
	if len(removed) > 0 {
		n.mu.Lock()
		var affected []*session
		for _, s := range n.sessions {
			for id := range removed {
				if _, ok := s.orgIndex[id]; ok {
					affected = append(affected, s)
					break
				}
			}
		}
		n.mu.Unlock()
		for _, s := range affected {
			var gone []string
			for id, name := range removed {
				if _, ok := s.orgIndex[id]; ok {
					gone = append(gone, name)
				}
			}
			ch.Aborted = append(ch.Aborted, s.id)
			go s.requestAbort(fmt.Sprintf("%v removed from the address book of %s by a config reload", gone, next.Node.Name))
		}
	}

	// Standing sessions ([[sessions]]) are rescheduled from next; a run
	// in progress goes on (standing.update).
	if len(ch.Standing) > 0 {
		n.standing.Update(next.Sessions)
	}

	if ch.Empty() {
		n.log.Info("config reloaded: nothing changed", "path", next.Path)
	} else {
		n.log.Info("config reloaded", "path", next.Path, "change", ch.String())
	}
	n.warnConfig(next)
	return ch, nil
}

// warnConfig logs at WARN what cfg, the config in force, leaves this
// node unable to do (Config.Warnings).
func (n *Node) warnConfig(cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		n.log.Warn(w, "config", cfg.Path)
	}
}
