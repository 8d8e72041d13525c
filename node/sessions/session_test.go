package sessions

import (
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
)

// TestProgressWriteNeverOverwritesALaterRecord: a progress snapshot written
// in the background after the session's final record is left unwritten, and
// setProgress stores the record only when the last write is progressSave
// old.
func TestProgressWriteNeverOverwritesALaterRecord(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const id = "0123456789abcdef"
	s := &session{n: &Runtime{store: st, progressSave: time.Hour}, id: id}
	s.state.rec = &store.Record{Session: apitype.Session{ID: id, State: stateRunning, Created: time.Now().UTC()}}
	s.update(true, func(*store.Record) {})
	s.setProgress(protocol.Progress{Step: 5, Total: 10}) // not due: kept in memory
	s.writes.saving.Wait()
	if rec, err := st.Get(id); err != nil || rec.Session.Progress.Step != 0 || rec.Session.Updated == nil {
		t.Fatalf("stored %+v, %v; want the first record, stamped", rec, err)
	}
	s.state.Lock()
	stale, v := s.snapshotForStore() // a progress write that is slow to start
	s.state.Unlock()
	s.update(true, func(r *store.Record) { r.Session.State = stateCompleted })
	s.store(&stale, v)
	if rec, err := st.Get(id); err != nil || rec.Session.State != stateCompleted || rec.Session.Progress.Step != 5 {
		t.Fatalf("stored %+v, %v; want the completed record", rec, err)
	}
}

// TestRecordRenewedWithoutProgress: a running session's record is stored
// again once progressSave has passed, with or without news of progress, so
// that a crash leaves a record that says how long the session ran (a data
// owner that reports no progress of its own recorded "duration 0s" after
// running 18 s).
func TestRecordRenewedWithoutProgress(t *testing.T) {
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const id = "0123456789abcdef"
	// progressSave is an hour for the first check, so that no stall of a
	// loaded machine can make it due; then a millisecond.
	s := &session{n: &Runtime{store: st, progressSave: time.Hour}, id: id}
	s.state.rec = &store.Record{Session: apitype.Session{ID: id, State: stateRunning, Created: time.Now().UTC()}}
	s.update(true, func(*store.Record) {})
	first, err := st.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	s.saveDue() // not due yet
	s.writes.saving.Wait()
	if rec, _ := st.Get(id); !rec.Session.Updated.Equal(*first.Session.Updated) {
		t.Fatalf("stored again before progressSave passed: %v, first %v", rec.Session.Updated, first.Session.Updated)
	}
	s.n.progressSave = time.Millisecond
	time.Sleep(5 * time.Millisecond)
	s.saveDue()
	s.writes.saving.Wait()
	if rec, _ := st.Get(id); !rec.Session.Updated.After(*first.Session.Updated) {
		t.Fatalf("not stored again after progressSave: %v, first %v", rec.Session.Updated, first.Session.Updated)
	}
}
