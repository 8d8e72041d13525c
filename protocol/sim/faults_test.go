package sim_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/ping"
	"github.com/bandit-node/bandit-node/protocol/sim"
)

func TestScheduleRoundTrip(t *testing.T) {
	text := "drop@12x2,dup@3,delay@40+350ms,reorder@7+1ms,corrupt@0,tamper@9:17^0x10,crash:comp[0]@1.5s"
	fs, err := sim.ParseSchedule(text)
	if err != nil {
		t.Fatal(err)
	}
	if got := sim.FormatSchedule(fs); got != text {
		t.Errorf("FormatSchedule(ParseSchedule(%q)) = %q", text, got)
	}
	for _, bad := range []string{"drop", "drop@x", "drop@1x0", "delay@3", "tamper@1:2^0", "crash:comp@1s", "melt@1"} {
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
			if res.VirtualTime <= ref.VirtualTime {
				t.Errorf("virtual time %v under faults, %v without: the faults cost nothing", res.VirtualTime, ref.VirtualTime)
			}
		})
	}
}
