package sessions

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"github.com/bandit-node/bandit-node/protocol"
	"google.golang.org/protobuf/proto"
)

func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeControl(t *testing.T) {
	const id = "0123456789abcdef"
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"heartbeat", marshal(t, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Heartbeat{Heartbeat: &nodepb.Heartbeat{}}}), ""},
		{"garbage", []byte{0x0a, 0xff, 0xff}, "malformed"},
		{"bad session id", marshal(t, &nodepb.Control{SessionId: "../x", Body: &nodepb.Control_Start{Start: &nodepb.Start{}}}), "malformed session ID"},
		{"no body", marshal(t, &nodepb.Control{SessionId: id}), "no known body"},
		{"huge spec", marshal(t, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{Spec: make([]byte, 2<<20)}}}), "over"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeControl(tt.frame)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzDecodeControl(f *testing.F) {
	f.Add(marshal(f, &nodepb.Control{SessionId: "0123456789abcdef", Body: &nodepb.Control_Done{Done: &nodepb.Done{
		Reports: []*nodepb.PartyReport{{Role: "participant", Index: 1, Report: []byte{1, 2}}}}}}))
	f.Add(marshal(f, &nodepb.Control{SessionId: "0123456789abcdef", Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{
		Spec: []byte("protocol = \"ping\"\n")}}}))
	reg := testRegistry(f)
	f.Fuzz(func(t *testing.T, frame []byte) {
		c, err := decodeControl(frame)
		if err != nil {
			return
		}
		if p, ok := c.Body.(*nodepb.Control_Propose); ok {
			// What a participant does next with a proposal's spec.
			if spec, err := protocol.ParseSpec("proposed spec", p.Propose.Spec); err == nil {
				reg.Check(spec)
			}
		}
	})
}

// TestProposeName: a proposal's name is decoded when it is a session
// name, and the frame is refused when it is not.
func TestProposeName(t *testing.T) {
	const id = "0123456789abcdef"
	tests := []struct {
		name, want string // want: "" to decode
	}{
		{"", ""},
		{"weekly-promo", ""},
		{"a.b_c-9", ""},
		{"Weekly", "malformed name"},
		{"../../etc", "malformed name"},
		{strings.Repeat("x", 65), "malformed name"},
		{"bell\a", "malformed name"},
	}
	for _, tt := range tests {
		frame := marshal(t, &nodepb.Control{SessionId: id, Body: &nodepb.Control_Propose{Propose: &nodepb.Propose{
			Spec: []byte("protocol = \"ping\"\n"), Name: tt.name}}})
		c, err := decodeControl(frame)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("name %q: %v", tt.name, err)
		case tt.want == "" && c.GetPropose().GetName() != tt.name:
			t.Errorf("name %q decoded as %q", tt.name, c.GetPropose().GetName())
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("name %q: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}
