package store

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// ErrNoStoredSession is returned (wrapped) by StoredResult for a session the
// data directory has no record of.
var ErrNoStoredSession = errors.New("no such session in the data directory")

// StoredResult reads session id's record from the data directory of cfg,
// for a command run while the daemon is down (its API is the way while it
// runs: a running session's record on disk lags behind it). Records are
// replaced atomically, so a record being written reads whole, old or new.
//
// A record that the data directory refused while the daemon ran is read
// from the journal of unsaved records when its copy there is the later
// (unsaved.go): it is what the daemon will store at its next start.
func StoredResult(cfg *config.Config, id string) (apitype.Result, error) {
	st := At(cfg)
	rec, err := st.Get(id)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return apitype.Result{}, err
	}
	if j, jerr := ReadRecord(st.JournalPath(id), id); jerr == nil && j.NewerThan(rec) {
		rec, err = j, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return apitype.Result{}, fmt.Errorf("session %s: %w (%s)", id, ErrNoStoredSession, cfg.Node.DataDir)
	}
	return apitype.Result{Session: rec.Session, Result: rec.Result, Local: rec.Local}, nil
}

// StoredSessions lists the sessions recorded in the data directory of cfg,
// newest first, as the API lists them (without their specs), for a command
// run while the daemon is down. Unreadable records are skipped and reported
// in the error list.
// Records the journal of unsaved records has a later copy of are listed
// as it has them (see StoredResult).
func StoredSessions(cfg *config.Config) ([]apitype.Session, []error) {
	st := At(cfg)
	recs, errs := st.List()
	journal, jerrs := st.ReadJournal()
	errs = append(errs, jerrs...)
	later := map[string]*Record{}
	for _, j := range journal {
		later[j.Session.ID] = j
	}
	out := make([]apitype.Session, 0, len(recs)+len(journal))
	for _, rec := range recs {
		if j := later[rec.Session.ID]; j != nil {
			delete(later, rec.Session.ID)
			if j.NewerThan(rec) {
				rec = j
			}
		}
		s := rec.Session
		s.Spec = ""
		out = append(out, s)
	}
	for _, j := range later { // a session whose first record was refused
		s := j.Session
		s.Spec = ""
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, errs
}

// At is the store of cfg's data directory for reading only: it takes
// no lock and creates nothing.
func At(cfg *config.Config) *Store {
	s := &Store{Dir: SessionsDir(cfg.Node.DataDir)}
	s.Frozen.Store(true)
	return s
}
