package node

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// ErrNoStoredSession is returned (wrapped) by StoredResult for a session the
// data directory has no record of.
var ErrNoStoredSession = errors.New("no such session in the data directory")

// StoredResult reads session id's record from the data directory of cfg,
// for a command run while the daemon is down (its API is the way while it
// runs: a running session's record on disk lags behind it). Records are
// replaced atomically, so a record being written reads whole, old or new.
func StoredResult(cfg *Config, id string) (apitype.Result, error) {
	rec, err := storeAt(cfg).get(id)
	if errors.Is(err, fs.ErrNotExist) {
		return apitype.Result{}, fmt.Errorf("session %s: %w (%s)", id, ErrNoStoredSession, cfg.Node.DataDir)
	}
	if err != nil {
		return apitype.Result{}, err
	}
	return apitype.Result{Session: rec.Session, Result: rec.Result, Local: rec.Local}, nil
}

// StoredSessions lists the sessions recorded in the data directory of cfg,
// newest first, as the API lists them (without their specs), for a command
// run while the daemon is down. Unreadable records are skipped and reported
// in the error list.
func StoredSessions(cfg *Config) ([]apitype.Session, []error) {
	recs, errs := storeAt(cfg).list()
	out := make([]apitype.Session, 0, len(recs))
	for _, rec := range recs {
		s := rec.Session
		s.Spec = ""
		out = append(out, s)
	}
	return out, errs
}

// storeAt is the store of cfg's data directory for reading only: it takes
// no lock and creates nothing.
func storeAt(cfg *Config) *store {
	s := &store{dir: sessionsDir(cfg.Node.DataDir)}
	s.frozen.Store(true)
	return s
}
