package node

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"google.golang.org/protobuf/encoding/protowire"
)

// Every message of a session travels in a nodepb.RoleFrame. The functions
// below write and read its bytes by hand, because protobuf's reflective code
// is a measurable share of a busy role's CPU (bench/HISTORY.md, "Comments
// moved"); FuzzRoleFrameCodec holds them to proto.Marshal and
// proto.Unmarshal byte for byte.

// appendRoleFrame appends f's protobuf encoding to b: the bytes proto.Marshal
// writes (fields in number order, zero values left out).
func appendRoleFrame(b []byte, f *nodepb.RoleFrame) []byte {
	return appendBodyField(appendRoleHead(b, f), f.Body)
}

// appendRoleHead appends the encoding of f's fields but its body: the head
// of every frame with f's addresses (see sessionTransport.Send).
func appendRoleHead(b []byte, f *nodepb.RoleFrame) []byte {
	b = appendStringField(b, 1, f.SessionId)
	b = appendStringField(b, 2, f.FromRole)
	b = appendVarintField(b, 3, uint64(f.FromIndex))
	b = appendStringField(b, 4, f.ToRole)
	return appendVarintField(b, 5, uint64(f.ToIndex))
}

// bodyTag is the one-byte tag of a role frame's body field (6, bytes).
var bodyTag = byte(protowire.EncodeTag(6, protowire.BytesType))

// appendBodyField appends the body field, if body is not empty, as the last
// field of a role frame.
func appendBodyField(b, body []byte) []byte {
	if len(body) == 0 {
		return b
	}
	b = append(b, bodyTag)
	return protowire.AppendBytes(b, body)
}

// bodyAfter returns frame's body when frame is head, the bytes before the
// body field of a frame parseRoleFrame accepted (its HeadLen), followed by
// exactly one body field as appendBodyField writes it. Such a frame parses
// to head's fields and that body (FuzzRoleFrameHead).
func bodyAfter(head, frame []byte) ([]byte, bool) {
	if len(frame) < len(head)+2 || string(frame[:len(head)]) != string(head) || frame[len(head)] != bodyTag {
		return nil, false
	}
	tail := frame[len(head)+1:]
	body, n := protowire.ConsumeBytes(tail)
	return body, n == len(tail)
}

func appendStringField(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// errRoleFrameUTF8 reports a string field that is not UTF-8, which
// proto.Unmarshal refuses too.
var errRoleFrameUTF8 = errors.New("string field is not valid UTF-8")

// roleFrameView is a nodepb.RoleFrame decoded without copying: its byte
// fields alias the frame, so decoding allocates nothing.
type roleFrameView struct {
	SessionID, FromRole, ToRole, Body []byte
	FromIndex, ToIndex                uint32
	TopicSeq                          uint64
	// HeadLen is where the frame's last field starts when that field is the
	// body, and -1 when it is another field or the frame is empty: the
	// frame's bytes before HeadLen decode to its fields but the body.
	HeadLen int
}

// parseRoleFrame decodes b into f as proto.Unmarshal would into a
// nodepb.RoleFrame: unknown fields and known ones of another wire type are
// skipped, the last of a repeated field wins, strings must be UTF-8. f's
// fields alias b (the caller owns it). f.HeadLen says whether b ends with
// its body field, and where that field starts.
func parseRoleFrame(b []byte, f *roleFrameView) error {
	size := len(b)
	f.HeadLen = -1
	for len(b) > 0 {
		at := size - len(b)
		f.HeadLen = -1
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		if num > protowire.MaxValidNumber {
			return fmt.Errorf("field number %d out of range", num)
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType && (num == 1 || num == 2 || num == 4 || num == 6):
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if num == 6 {
				f.Body, f.HeadLen = v, at
				continue
			}
			if !utf8.Valid(v) {
				return fmt.Errorf("field %d: %w", num, errRoleFrameUTF8)
			}
			switch num {
			case 1:
				f.SessionID = v
			case 2:
				f.FromRole = v
			default:
				f.ToRole = v
			}
		case typ == protowire.VarintType && (num == 3 || num == 5 || num == 7):
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case 3:
				f.FromIndex = uint32(v)
			case 5:
				f.ToIndex = uint32(v)
			default:
				f.TopicSeq = v
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}
