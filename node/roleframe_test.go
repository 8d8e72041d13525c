package node

import (
	"bytes"
	"testing"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// FuzzRoleFrameCodec holds the hand-written codec to protobuf's: parsing
// any bytes succeeds exactly when proto.Unmarshal does, with the same
// fields; and a frame built from the fuzzed fields encodes to proto.Marshal's
// bytes.
func FuzzRoleFrameCodec(f *testing.F) {
	f.Add([]byte(nil), "0123456789abcdef", "participant", uint32(2), "participant", uint32(0), []byte{8, 1})
	f.Add(protowire.AppendTag(nil, 7, protowire.StartGroupType), "", "", uint32(0), "", uint32(1<<31), []byte{})
	f.Add([]byte{0x0a, 0x02, 0xff, 0xfe}, "s", "\xff", uint32(0), "to", uint32(9), []byte(nil))
	f.Add([]byte{0x18, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x12, 0x00, 0x10, 0x05}, "a", "b", uint32(1), "c", uint32(2), []byte{0})
	f.Fuzz(func(t *testing.T, raw []byte, sid, fromRole string, fromIndex uint32, toRole string, toIndex uint32, body []byte) {
		var got roleFrameView
		gotErr := parseRoleFrame(raw, &got)
		var want nodepb.RoleFrame
		wantErr := proto.Unmarshal(raw, &want)
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("parse %x: error %v, proto.Unmarshal %v", raw, gotErr, wantErr)
		}
		if gotErr == nil && (string(got.SessionID) != want.SessionId || string(got.FromRole) != want.FromRole || got.FromIndex != want.FromIndex ||
			string(got.ToRole) != want.ToRole || got.ToIndex != want.ToIndex || !bytes.Equal(got.Body, want.Body)) {
			t.Fatalf("parse %x: %+v, proto.Unmarshal %+v", raw, &got, &want)
		}

		fr := &nodepb.RoleFrame{SessionId: sid, FromRole: fromRole, FromIndex: fromIndex, ToRole: toRole, ToIndex: toIndex, Body: body}
		wantBytes, err := proto.Marshal(fr)
		if err != nil {
			return // proto.Marshal refuses strings that are not UTF-8; the daemon never sends them
		}
		if gotBytes := appendRoleFrame(nil, fr); !bytes.Equal(gotBytes, wantBytes) {
			t.Fatalf("encode %+v: %x, proto.Marshal %x", fr, gotBytes, wantBytes)
		}
	})
}
