package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/config"
)

// summariesFile is the file, in the data directory, of the summaries of the
// standing sessions' runs whose records were removed, by name.
const summariesFile = "session-summaries.json"

// RetentionPolicy says which records of ended sessions are kept: those that
// ended within keep (0: any age) and are among the newest keepCount (0: any
// number), and whatever those say, those that ended within grace, while
// peers may still ask about the session (answerEnded reads its record).
type RetentionPolicy struct {
	Keep      time.Duration
	KeepCount int
	Grace     time.Duration
}

// KeepsAll reports whether the policy removes nothing.
func (p RetentionPolicy) KeepsAll() bool { return p.Keep <= 0 && p.KeepCount <= 0 }

// Pruned is what one pass of the retention policy did.
type Pruned struct {
	// Removed counts the records removed; Summarized the standing
	// sessions whose summary they went into.
	Removed    int
	Summarized []string
}

// endTime is when the session of an ended record ended: its Finished time,
// else the last time it was stored, else its creation.
func endTime(rec *Record) time.Time {
	switch {
	case rec.Session.Finished != nil:
		return *rec.Session.Finished
	case rec.Session.Updated != nil:
		return *rec.Session.Updated
	}
	return rec.Session.Created
}

// expired returns the records of recs (any order) that policy p removes at
// now: records of ended sessions (completed or aborted, and not active)
// that ended before now - keep or are beyond the newest keepCount of them,
// ordered oldest first. The records of sessions that are proposed or
// running, or that ended within grace, are never among them.
func (p RetentionPolicy) expired(recs []*Record, now time.Time, active func(id string) bool) []*Record {
	var ended []*Record
	for _, rec := range recs {
		st := rec.Session.State
		if (st == apitype.StateCompleted || st == apitype.StateAborted) && !active(rec.Session.ID) {
			ended = append(ended, rec)
		}
	}
	// Newest first, ties by ID so that every pass agrees.
	slices.SortStableFunc(ended, func(a, b *Record) int {
		if c := endTime(b).Compare(endTime(a)); c != 0 {
			return c
		}
		return compareStrings(a.Session.ID, b.Session.ID)
	})
	var out []*Record
	for i, rec := range ended {
		if endTime(rec).After(now.Add(-p.Grace)) {
			continue
		}
		if (p.KeepCount > 0 && i >= p.KeepCount) || (p.Keep > 0 && endTime(rec).Before(now.Add(-p.Keep))) {
			out = append(out, rec)
		}
	}
	slices.Reverse(out)
	return out
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// summarize adds the runs of standing sessions among expired (oldest
// first) to sums, and returns the names it changed. A run that ended no
// later than the last one a summary holds is in it already: the daemon
// stopped between storing the summary and removing the records.
func summarize(sums map[string]apitype.RunSummary, expired []*Record) []string {
	var changed []string
	for _, rec := range expired {
		name := rec.Session.Name
		if name == "" {
			continue
		}
		end := endTime(rec)
		sum := sums[name]
		if sum.Runs > 0 && !end.After(sum.Last) {
			continue
		}
		sum.Runs++
		if rec.Session.State == apitype.StateCompleted {
			sum.Completed++
		} else {
			sum.Aborted++
		}
		if sum.First.IsZero() || end.Before(sum.First) {
			sum.First = end
		}
		sum.Last, sum.LastID = end, rec.Session.ID
		if len(rec.Result) > 0 {
			h := sha256.Sum256(rec.Result)
			sum.LastResult = hex.EncodeToString(h[:])
		}
		sums[name] = sum
		if !slices.Contains(changed, name) {
			changed = append(changed, name)
		}
	}
	return changed
}

// summariesPath is the path of the summaries of the store's data directory.
func (s *Store) summariesPath() string { return filepath.Join(filepath.Dir(s.Dir), summariesFile) }

// Summaries reads the summaries of removed standing-session runs, by name;
// none stored is an empty map.
func (s *Store) Summaries() (map[string]apitype.RunSummary, error) {
	sums := map[string]apitype.RunSummary{}
	data, err := os.ReadFile(s.summariesPath())
	if errors.Is(err, fs.ErrNotExist) {
		return sums, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &sums); err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.summariesPath(), err)
	}
	return sums, nil
}

// Prune applies policy p at now to the store: the records it expires are
// removed, after the runs of standing sessions among them have been added
// durably to the summaries (so a crash in between loses no run, nor counts
// one twice). active reports the sessions in progress, which are kept
// whatever their record says.
func (s *Store) Prune(p RetentionPolicy, now time.Time, active func(id string) bool) (Pruned, error) {
	var res Pruned
	if p.KeepsAll() || s.Frozen.Load() {
		return res, nil
	}
	recs, _ := s.List() // unreadable records are tidy's to move aside
	// A record kept in memory until the disk takes it is kept: it is
	// not on disk yet, and the disk refuses writes.
	expired := p.expired(recs, now, func(id string) bool { return active(id) || s.unsavedRecord(id) != nil })
	if len(expired) == 0 {
		return res, nil
	}
	sums, err := s.Summaries()
	if err != nil {
		return res, fmt.Errorf("not removing expired records: %w", err)
	}
	if res.Summarized = summarize(sums, expired); len(res.Summarized) > 0 {
		data, err := json.MarshalIndent(sums, "", "  ")
		if err != nil {
			return res, err
		}
		if err := WriteFileAtomic(s.summariesPath(), data, 0o600); err != nil {
			return res, fmt.Errorf("storing the summaries of standing sessions (no record removed): %w", err)
		}
	}
	for _, rec := range expired {
		p, err := s.path(rec.Session.ID)
		if err != nil {
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("removing the record of session %s: %w", rec.Session.ID, err)
		}
		res.Removed++
	}
	return res, syncDir(s.Dir)
}

// RetentionOf is the retention policy of the [session] table c. Its
// grace is twice the longest a peer waits for this node before it gives a
// session up: until then a peer may still send frames of a session that
// ended here, which its record answers.
func RetentionOf(c config.SessionConfig) RetentionPolicy {
	return RetentionPolicy{Keep: c.Keep.Duration, KeepCount: c.KeepCount, Grace: 2 * max(c.ProposeTimeout.Duration, c.PeerTimeout.Duration)}
}

// WithSummaries adds to list the summaries of the standing sessions' runs
// removed from the store.
func (s *Store) WithSummaries(list []apitype.Standing) []apitype.Standing {
	sums, err := s.Summaries()
	if err != nil || len(sums) == 0 {
		return list
	}
	for i := range list {
		if sum, ok := sums[list[i].Name]; ok {
			list[i].Removed = &sum
		}
	}
	return list
}
