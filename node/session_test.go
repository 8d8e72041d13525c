package node

import (
	"testing"
	"time"
	"unsafe"

	"github.com/bandit-node/bandit-node/internal/testutil"
	"github.com/bandit-node/bandit-node/node/apitype"
	"github.com/bandit-node/bandit-node/node/store"
	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
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
	s := &session{n: &Node{store: st, progressSave: time.Hour}, id: id}
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

// TestCrashReason: what a session left open by a crash is recorded with.
func TestCrashReason(t *testing.T) {
	at := time.Date(2026, 11, 23, 4, 5, 6, 0, time.UTC)
	tests := []struct {
		name string
		s    apitype.Session
		want string
	}{
		{"steps", apitype.Session{State: stateRunning, Updated: &at, Progress: apitype.Progress{Step: 40, Total: 100}},
			"n3 restarted while the session was open; its record, last stored at 2026-11-23 04:05:06 UTC, showed step 40 of 100"},
		{"activity", apitype.Session{State: stateRunning, Updated: &at, Progress: apitype.Progress{Activity: 7}},
			"n3 restarted while the session was open; its record, last stored at 2026-11-23 04:05:06 UTC, showed 7 units of work done"},
		{"no progress yet", apitype.Session{State: stateRunning, Updated: &at},
			"n3 restarted while the session was open; its record was last stored at 2026-11-23 04:05:06 UTC"},
		{"proposed", apitype.Session{State: stateProposed, Updated: &at}, "n3 restarted while the session was open"},
		{"an older record", apitype.Session{State: stateRunning}, "n3 restarted while the session was open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := crashReason("n3", tt.s); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSessionSharesItsStrings: the names and IDs a session compares on
// every frame and message are the very strings they are compared with —
// the family's role names, the node's own ID, the address book's IDs — so
// that each comparison is a pointer's.
func TestSessionSharesItsStrings(t *testing.T) {
	nodes := startNetwork(t, 2, nil)
	id, err := nodes[0].StartSession(pingSpec(ping.MaxCount, "node1", "node2"))
	if err != nil {
		t.Fatal(err)
	}
	var s *session
	testutil.WaitFor(t, 10*time.Second, "node2 to have the session", func() bool { s = nodes[1].lookup(id); return s != nil })
	for r, name := range s.roleNames {
		spec, err := protocol.RoleSpecOf(s.fam, name)
		if err != nil {
			t.Fatal(err)
		}
		if unsafe.StringData(name) != unsafe.StringData(spec.Name) {
			t.Errorf("role %q is a copy of the family's name", name)
		}
		for i, org := range s.orgs[r] {
			want := s.self
			if org != s.self {
				live := nodes[1].live.Load()
				want = live.ids[live.names[org]]
			}
			if unsafe.StringData(string(org)) != unsafe.StringData(string(want)) {
				t.Errorf("%s[%d] (%s) is a copy of the node's or the address book's ID", name, i, nodes[1].nameOf(org))
			}
		}
	}
	for _, p := range s.mine {
		if unsafe.StringData(p.Role) != unsafe.StringData(s.roleNames[roleIndex(s.roleNames, p.Role)]) {
			t.Errorf("local party %s has a copy of its role's name", p)
		}
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
	s := &session{n: &Node{store: st, progressSave: time.Hour}, id: id}
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
