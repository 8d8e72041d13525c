package node

import (
	"context"
	"fmt"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
	"github.com/bandit-node/bandit-node/node/events"
	"github.com/bandit-node/bandit-node/p2p"
)

// Reload re-reads the config file the daemon was started from and applies
// it (applyConfig). ctx bounds nothing yet but is taken for the callers'
// sake: the API handler and SIGHUP. Every reload, applied or refused, is
// counted (bandit_config_reloads_total) and its outcome kept for GET
// /v0/node (metrics.Reloads).
func (n *Node) Reload(ctx context.Context) (apitype.ConfigChange, error) {
	ch, err := n.reload(ctx)
	n.reloads.Record(time.Now(), ch, err)
	n.events.Publish(events.KindReload, n.reloads.Last())
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
	ch, book, err := n.admitConfig(next)
	if err != nil {
		return apitype.ConfigChange{}, err
	}
	if len(ch.PeersAdded)+len(ch.PeersRemoved)+len(ch.PeersReaddressed) > 0 {
		// The host validates the book and swaps it whole, or not at all
		// (admitConfig checked it already).
		if _, err := n.host.SetBook(book); err != nil {
			return apitype.ConfigChange{}, fmt.Errorf("the new config is refused, the running one stays in force: peers: %w", err)
		}
	}
	ch.Aborted = append(ch.Aborted, n.rt.Reconfigure(next, book)...)

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

// admitConfig checks next against the config in force as a reload does
// before it changes anything — the keys that need a restart
// (config.DiffConfig), the files and programs [local] names
// (CheckLocalData), the address book as the host would take it — and
// returns what would change and the address book, or why next is
// refused. Reloads (applyConfig) and their dry runs (CheckConfig) both go
// through here.
func (n *Node) admitConfig(next *config.Config) (apitype.ConfigChange, []p2p.Peer, error) {
	refused := func(err error) (apitype.ConfigChange, []p2p.Peer, error) {
		return apitype.ConfigChange{}, nil, fmt.Errorf("the new config is refused, the running one stays in force: %w", err)
	}
	ch, err := config.DiffConfig(n.config(), next)
	if err != nil {
		return refused(err)
	}
	if err := next.CheckLocalData(); err != nil {
		return refused(err)
	}
	book, err := n.rt.AddressBook(next)
	if err != nil {
		return refused(err)
	}
	if err := n.host.CheckBook(book); err != nil {
		return refused(fmt.Errorf("peers: %w", err))
	}
	return ch, book, nil
}

// CheckConfig is a reload's dry run: it parses text as the daemon's
// config file (its path resolves the relative paths; nil text: the file
// as it is on disk now), checks it as a reload would (admitConfig) and
// returns what a reload would change, or why it would be refused. Nothing
// is applied; running sessions that a removed peer would abort are not
// named (a reload names them in Aborted).
func (n *Node) CheckConfig(ctx context.Context, text []byte) (apitype.ConfigChange, error) {
	path := n.config().Path
	if path == "" {
		return apitype.ConfigChange{}, config.ErrNoConfigFile
	}
	var next *config.Config
	var err error
	if text == nil {
		next, err = config.LoadConfig(path, n.reg)
	} else {
		next, err = config.ParseConfig(path, text, n.reg)
	}
	if err != nil {
		return apitype.ConfigChange{}, fmt.Errorf("the new config is refused, the running one stays in force: %w", err)
	}
	n.reloadMu.Lock()
	defer n.reloadMu.Unlock()
	ch, _, err := n.admitConfig(next)
	return ch, err
}

// warnConfig logs at WARN what cfg, the config in force, leaves this
// node unable to do (Config.Warnings).
func (n *Node) warnConfig(cfg *config.Config) {
	for _, w := range cfg.Warnings() {
		n.log.Warn(w, "config", cfg.Path)
	}
}
