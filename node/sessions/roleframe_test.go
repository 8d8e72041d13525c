package sessions

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
			string(got.ToRole) != want.ToRole || got.ToIndex != want.ToIndex || !bytes.Equal(got.Body, want.Body) || got.TopicSeq != want.TopicSeq) {
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

// FuzzRoleFrameHead holds the head a roleStream remembers to parseRoleFrame:
// a frame that bodyAfter accepts after the head of a frame parseRoleFrame
// accepted parses to that frame's fields with bodyAfter's body.
func FuzzRoleFrameHead(f *testing.F) {
	frame := appendRoleFrame(nil, &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "data_owner", FromIndex: 3,
		ToRole: "controller", Body: []byte("score")})
	f.Add(frame, appendBodyField(nil, []byte("another score")))
	f.Add(frame, append(appendBodyField(nil, []byte("x")), 0x0a, 0x01, 'z')) // a session ID after the body
	f.Add(append([]byte{0x32, 0x01, 'b'}, frame...), []byte{0x32, 0x00})
	f.Add([]byte{0x32, 0x01, 'b'}, []byte{0x32, 0x81, 0x00})
	f.Fuzz(func(t *testing.T, first, tail []byte) {
		var want roleFrameView
		if parseRoleFrame(first, &want) != nil || want.HeadLen < 0 {
			return
		}
		head := first[:want.HeadLen]
		frame := append(append([]byte(nil), head...), tail...)
		body, ok := bodyAfter(head, frame)
		var got roleFrameView
		err := parseRoleFrame(frame, &got)
		if !ok {
			if err == nil && got.HeadLen == len(head) && bytes.Equal(appendBodyField(append([]byte(nil), head...), got.Body), frame) {
				t.Fatalf("bodyAfter refused %x after head %x, which appendBodyField writes", tail, head)
			}
			return
		}
		if err != nil {
			t.Fatalf("bodyAfter accepted %x after head %x, which does not parse: %v", tail, head, err)
		}
		if string(got.SessionID) != string(want.SessionID) || string(got.FromRole) != string(want.FromRole) || got.FromIndex != want.FromIndex ||
			string(got.ToRole) != string(want.ToRole) || got.ToIndex != want.ToIndex || !bytes.Equal(got.Body, body) || got.HeadLen != want.HeadLen {
			t.Fatalf("head %x, tail %x: parses to %+v; the head's frame to %+v, bodyAfter's body %x", head, tail, &got, &want, body)
		}
	})
}

// TestRoleHeadAndBody: a frame is its head and its body field, and the head
// is what parseRoleFrame reports; a frame without a body has no head.
func TestRoleHeadAndBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    *nodepb.RoleFrame
	}{
		{"addressed", &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "data_owner", FromIndex: 99, ToRole: "controller", Body: []byte{1, 2, 3}}},
		{"zero indices", &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "comp", ToRole: "controller", Body: make([]byte, 300)}},
		{"no body", &nodepb.RoleFrame{SessionId: "0123456789abcdef", FromRole: "comp", ToRole: "controller"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := appendRoleHead(nil, tc.f)
			frame := appendRoleFrame(nil, tc.f)
			if !bytes.Equal(frame, appendBodyField(append([]byte(nil), head...), tc.f.Body)) {
				t.Fatalf("frame %x is not head %x and the body field", frame, head)
			}
			var v roleFrameView
			if err := parseRoleFrame(frame, &v); err != nil {
				t.Fatal(err)
			}
			wantLen := len(head)
			if len(tc.f.Body) == 0 {
				wantLen = -1
			}
			if v.HeadLen != wantLen {
				t.Fatalf("HeadLen %d, want %d", v.HeadLen, wantLen)
			}
			body, ok := bodyAfter(head, frame)
			if ok != (len(tc.f.Body) > 0) || !bytes.Equal(body, tc.f.Body) {
				t.Fatalf("bodyAfter: %x, %v", body, ok)
			}
		})
	}
}

// TestRoleHeadSizes pins the heads of SAMBA's frames that the bare message
// pattern (bench/pattern's defaults) copies, with a 16-character session ID:
// 44 bytes between a data owner (but the first) and the controller, either
// way, and 36 between the controller and comp.
func TestRoleHeadSizes(t *testing.T) {
	const sid = "0123456789abcdef"
	for _, tc := range []struct {
		f    *nodepb.RoleFrame
		want int
	}{
		{&nodepb.RoleFrame{SessionId: sid, FromRole: "data_owner", FromIndex: 7, ToRole: "controller"}, 44},
		{&nodepb.RoleFrame{SessionId: sid, FromRole: "controller", ToRole: "data_owner", ToIndex: 7}, 44},
		{&nodepb.RoleFrame{SessionId: sid, FromRole: "controller", ToRole: "comp"}, 36},
		{&nodepb.RoleFrame{SessionId: sid, FromRole: "comp", ToRole: "controller"}, 36},
	} {
		if got := len(appendRoleHead(nil, tc.f)); got != tc.want {
			t.Errorf("%s -> %s: a head of %d bytes, want %d", tc.f.FromRole, tc.f.ToRole, got, tc.want)
		}
	}
}
