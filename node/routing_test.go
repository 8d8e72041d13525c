package node

import (
	"strings"
	"testing"

	"github.com/bandit-node/bandit-node/node/nodepb"
)

func TestDecodeRoleFrame(t *testing.T) {
	const id = "0123456789abcdef"
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"ok", marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: "participant", ToRole: "participant", Body: []byte{1}}), ""},
		{"garbage", []byte{0x12, 0x80}, "malformed"},
		{"no sender role", marshal(t, &nodepb.RoleFrame{SessionId: id}), "role name"},
		{"overlong role", marshal(t, &nodepb.RoleFrame{SessionId: id, FromRole: strings.Repeat("r", 65)}), "role name"},
		{"bad session", marshal(t, &nodepb.RoleFrame{SessionId: "zz", FromRole: "p"}), "session ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeRoleFrame(tt.frame)
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

func FuzzDecodeRoleFrame(f *testing.F) {
	f.Add(marshal(f, &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "participant", FromIndex: 2, ToRole: "participant", Body: []byte{8, 1}}))
	f.Fuzz(func(t *testing.T, frame []byte) {
		decodeRoleFrame(frame)
	})
}
