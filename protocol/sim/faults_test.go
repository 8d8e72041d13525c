package sim_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func TestScheduleRoundTrip(t *testing.T) {
	text := "drop@12x2,dup@3,delay@40+350ms,reorder@7+1ms,corrupt@0,tamper@9:17^0x10,crash:comp[0]@1.5s,restart:comp[0]@1.5s+2s"
	fs, err := sim.ParseSchedule(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := sim.FormatSchedule(fs); got != text {
		t.Errorf("FormatSchedule(ParseSchedule(%q)) = %q", text, got)
	}
	for _, bad := range []string{"drop", "drop@x", "drop@1x0", "delay@3", "tamper@1:2^0", "crash:comp@1s", "melt@1",
		"restart:comp[0]@1s", "restart:comp[0]+2s", "restart:comp[0]@-1s+2s", "restart:comp[0]@1s+x"} {
		if _, err := sim.ParseSchedule(bad); err == nil {
			t.Errorf("ParseSchedule(%q) succeeded", bad)
		}
	}
}

// TestFaultsThroughTheLinkModel runs ping under single faults and checks
// what the link model makes of each: hidden faults leave the messages
// handed on, once each and in order per link; a link that gives up and a
// crash abort the session with a reason naming the parties.
func TestFaultsThroughTheLinkModel(t *testing.T) {
	spec := mustSpec(t, "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\", \"c\"]\n[params]\ncount = 3\n")
	reg := registry(t, ping.Family{})
	ref, err := sim.Run(context.Background(), reg, spec, sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		schedule string
		abort    string // empty: completes
	}{
		{"drop@3x1", ""},
		{"drop@3x4,dup@5,corrupt@6", ""},
		{"delay@0+2s,reorder@1+3s", ""},
		{"drop@2x5", "5 streams in a row ended without"},
		{"delay@2+3m", "could not be reached again within 2m0s"},
		{"crash:participant[1]@0s", "participant[1] went silent"},
		{"restart:participant[1]@0s+2s", "participant[1] restarted while the session was open"},
		{"restart:participant[1]@0s+40s", "participant[1] went silent (its daemon went down at 0s for 40s)"},
		{"restart:participant[1]@1h+2s", ""}, // after the session ended
		{"tamper@4:0^0xff", "rejected a message"},
	}
	for _, tt := range tests {
		t.Run(tt.schedule, func(t *testing.T) {
			fs, err := sim.ParseSchedule(tt.schedule)
			if err != nil {
				t.Fatal(err)
			}
			last := map[[2]protocol.Party]uint64{}
			handed := 0
			res, err := sim.Run(context.Background(), reg, spec, sim.Options{Faults: &sim.Faults{Schedule: fs,
				Deadline: time.Hour,
				OnDeliver: func(seq uint64, m protocol.Message) {
					k := [2]protocol.Party{m.From, m.To}
					if seq != last[k]+1 {
						t.Errorf("%s handed message %d from %s after %d", m.To, seq, m.From, last[k])
					}
					last[k] = seq
					handed++
				}}})
			if tt.abort != "" {
				if err == nil || !strings.Contains(err.Error(), tt.abort) {
					t.Fatalf("err = %v, want an abort with %q", err, tt.abort)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Messages != ref.Messages || int64(handed) != ref.Messages {
				t.Errorf("%d messages sent, %d handed on; without faults %d", res.Messages, handed, ref.Messages)
			}
			if !reflect.DeepEqual(res.Result.(ping.Matrix).Participants, ref.Result.(ping.Matrix).Participants) {
				t.Errorf("participants %v, want %v", res.Result, ref.Result)
			}
			if strings.HasPrefix(tt.schedule, "restart:") {
				return // struck nothing: it costs nothing either
			}
			if res.VirtualTime <= ref.VirtualTime {
				t.Errorf("virtual time %v under faults, %v without: the faults cost nothing", res.VirtualTime, ref.VirtualTime)
			}
		})
	}
}

// TestRestart checks what a restart makes of a session, as node/ does it
// (see sim.Restart): the restarted party records its restart; the others
// learn it from its answer to their next heartbeat after it is back, or
// give up on its silence first; and a party that had finished is not
// affected.
func TestRestart(t *testing.T) {
	spec := mustSpec(t, "protocol = \"ping\"\n[roles]\nparticipant = [\"a\", \"b\", \"c\"]\n[params]\ncount = 3\n")
	reg := registry(t, ping.Family{})
	link := sim.DefaultLinkModel()
	p1 := protocol.Party{Role: "participant", Index: 1}
	restarted := "participant[1] restarted while the session was open (its daemon went down at 0s and was back at "
	tests := []struct {
		name     string
		schedule string
		at       time.Duration // the session's abort
		reason   string        // the others' reason, a prefix
	}{
		{"answered", "restart:participant[1]@0s+2s", 2*time.Second + link.HeartbeatInterval + 2*sim.DefaultLinkLatency, restarted + "2s)"},
		{"back just in time", "restart:participant[1]@0s+24s", 24*time.Second + link.HeartbeatInterval + 2*sim.DefaultLinkLatency, restarted + "24s)"},
		{"peer timeout first", "restart:participant[1]@0s+26s", link.PeerTimeout, "participant[1] went silent"},
		{"silent past the timeout", "restart:participant[1]@0s+1m", link.PeerTimeout, "participant[1] went silent"},
		{"twice", "restart:participant[1]@0s+2s,restart:participant[1]@1s+1s", 2*time.Second + link.HeartbeatInterval + 2*sim.DefaultLinkLatency, restarted + "2s)"},
		{"listed out of order", "restart:participant[1]@50ms+40s,restart:participant[1]@0s+2s", 2*time.Second + link.HeartbeatInterval + 2*sim.DefaultLinkLatency, restarted + "2s)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := sim.ParseSchedule(tt.schedule)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sim.Run(context.Background(), reg, spec, sim.Options{Faults: &sim.Faults{Schedule: fs, Deadline: time.Hour}})
			var ae *sim.AbortError
			if !errors.As(err, &ae) {
				t.Fatalf("err = %v, want a *sim.AbortError", err)
			}
			if ae.At != tt.at || !strings.HasPrefix(ae.Reason, tt.reason) {
				t.Errorf("aborted at %v for %q, want at %v for %q…", ae.At, ae.Reason, tt.at, tt.reason)
			}
			if got := ae.Ends[p1]; !strings.HasPrefix(got, restarted) {
				t.Errorf("participant[1] recorded %q, want its restart", got)
			}
			if len(ae.Ends) != 1 {
				t.Errorf("ends %v, want participant[1]'s only", ae.Ends)
			}
		})
	}
	// ping's roles all finish at the session's end: a restart just after
	// it strikes a party that finished, and changes nothing.
	t.Run("finished before", func(t *testing.T) {
		ref, err := sim.Run(context.Background(), reg, spec, sim.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fin, ok := ref.Finished[p1]
		if !ok || fin <= 0 || fin > ref.VirtualTime {
			t.Fatalf("participant[1] finished at %v (%v), session ended at %v", fin, ok, ref.VirtualTime)
		}
		fs := []sim.Fault{{Kind: sim.Restart, Party: p1, At: ref.VirtualTime + time.Millisecond, Down: time.Second}}
		res, err := sim.Run(context.Background(), reg, spec, sim.Options{Faults: &sim.Faults{Schedule: fs, Deadline: time.Hour}})
		if err != nil {
			t.Fatalf("restart after the end: %v", err)
		}
		if !reflect.DeepEqual(res.Finished, ref.Finished) {
			t.Errorf("finished %v, want %v", res.Finished, ref.Finished)
		}
	})
}
