package metrics

import (
	"slices"
	"testing"
)

// TestAbortClass classifies the abort reasons the lifecycle and the
// session code write (as they read in records), each into its class.
func TestAbortClass(t *testing.T) {
	tests := []struct{ reason, want string }{
		{"node3 declined: protocol ping is not enabled on node3", abortDeclined},
		{"node3 declined: node3 already runs 16 sessions (session.max_active)", abortDeclined},
		{"node3 declined: internal error in node3 examining the proposal", abortDeclined},
		{"node2 declined: node2 is busy examining other proposals; try again", abortDeclined},
		{"cancelled by the operator of node1", abortCanceled},
		{"node2 is shutting down", abortShutdown},
		{"node1 restarted while the session was open; its record, last stored at 2026-11-27 02:00:00 UTC, showed step 3 of 9", abortShutdown},
		{"internal error in role data_owner[2]: runtime error: index out of range [3] with length 3", abortInternal},
		{"internal error in node1 running the session: boom", abortInternal},
		{"internal error in node2 handling a frame from node1: nil map", abortInternal},
		{"data_owner[1] (acme): samba data_owner[1] of acme: reward at step 4: exit status 1; its stderr ended with \"Traceback\"", abortEnvironment},
		{"agent[0] (acme): the role asks an environment, but bai builds none", abortEnvironment},
		{"agent[0] (acme): its environment: source: unknown source \"ftp\"", abortEnvironment},
		{"agent[0] (acme) asked its environment more than 64 queries at once", abortEnvironment},
		{"node3 did not answer the proposal within 30s", abortTimeout},
		{"the initiator node1 did not start the session within 30s of the proposal", abortTimeout},
		{"node2 stopped answering (silent for 3s, more than session.peer_timeout = 3s)", abortTimeout},
		{"no progress for 10m0s (session.stall_timeout): the protocol is stuck", abortTimeout},
		{"node1 was paused for 43s (its process stopped, its machine suspended or its clock jumped), more than session.peer_timeout = 30s", abortTimeout},
		{"node2, node3 did not subscribe to the session topic within 10s", abortTimeout},
		{"connection to node5 closed; redial failed: dial backoff", abortUnreachable},
		{"sending to node2: failed to open stream: protocols not supported", abortUnreachable},
		{"participant[0] (node1): could not send to participant[1] (node2): stream reset", abortUnreachable},
		{"learner[0] (node1): could not publish on the session topic: closed", abortUnreachable},
		{"node2 sent more than session.max_buffered_bytes = 67108864 bytes that node1 had not yet processed in this session", abortOverload},
		{"node1 could not keep up with the messages of participant[2]", abortOverload},
		{"participant[0] (node1) rejected a message from participant[1] (node2): bad round", abortRoleError},
		{"participant[0] (node1) failed to start: bad params", abortRoleError},
		{"agent[2] (node3): activation: no arm", abortRoleError},
		{"node2 reported two different results for agent[1]", abortRoleError},
		{"the initiator node1 declared the session complete while agent[0] had not finished", abortRoleError},
		{"agent[0] (node1): the round counter overflowed", abortRoleError},
		{"combining the results: the latency matrix is not square", abortOther},
		// The classes of disclosure.go, as this release writes them.
		{"data_owner[1] (node5): its environment could not be set up", abortEnvironment},
		{"data_owner[1] (node5): its environment failed at step 12", abortEnvironment},
		{"agent[3] (node5): its role refused what its environment answered at step 2", abortEnvironment},
		{"agent[3] (node5): its role could not be built from the spec and its local data", abortRoleError},
		{"agent[3] (node5): its role failed to start", abortRoleError},
		{"agent[3] (node5): its role failed at step 7", abortRoleError},
		{"comp[0] (node2): it rejected a message from controller[0] (node1) at step 3", abortRoleError},
		{"agent[3] (node5): its local result could not be encoded at step 9", abortRoleError},
		{"internal error in role agent[3] at node5", abortInternal},
		{"internal error in node1 combining the parties' reports", abortInternal},
		{"combining the parties' reports failed on the initiator node1", abortRoleError},
		{"agent[3] (node5): could not send to coordinator[0] (node1) at step 4", abortUnreachable},
		{"agent[3] (node5): could not publish on the session's topic at step 4", abortUnreachable},
		{"", abortOther},
	}
	for _, tt := range tests {
		got := abortClass(tt.reason)
		if got != tt.want {
			t.Errorf("abortClass(%q) = %s, want %s", tt.reason, got, tt.want)
		}
		if !slices.Contains(abortClasses, got) {
			t.Errorf("abortClass(%q) = %s, not one of %v", tt.reason, got, abortClasses)
		}
	}
}
