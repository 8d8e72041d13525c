package node

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/bandit-node/bandit-node/node/nodepb"
	"google.golang.org/protobuf/encoding/protowire"
)

// Every message of a session travels in a nodepb.RoleFrame. Encoding and
// decoding it through protobuf's reflective code cost ≈ 6 % of a SAMBA data
// owner's CPU (pprof, 13 daemons), so the two functions below write and read
// the same bytes by hand; FuzzRoleFrameCodec holds them to proto.Marshal and
// proto.Unmarshal.

// appendRoleFrame appends f's protobuf encoding to b: the bytes proto.Marshal
// writes (fields in number order, zero values left out).
func appendRoleFrame(b []byte, f *nodepb.RoleFrame) []byte {
	b = appendStringField(b, 1, f.SessionId)
	b = appendStringField(b, 2, f.FromRole)
	b = appendVarintField(b, 3, uint64(f.FromIndex))
	b = appendStringField(b, 4, f.ToRole)
	b = appendVarintField(b, 5, uint64(f.ToIndex))
	if len(f.Body) > 0 {
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		b = protowire.AppendBytes(b, f.Body)
	}
	return b
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
}

// parseRoleFrame decodes b into f as proto.Unmarshal would into a
// nodepb.RoleFrame: unknown fields and known ones of another wire type are
// skipped, the last of a repeated field wins, strings must be UTF-8. f's
// fields alias b (the caller owns it).
func parseRoleFrame(b []byte, f *roleFrameView) error {
	for len(b) > 0 {
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
				f.Body = v
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
		case typ == protowire.VarintType && (num == 3 || num == 5):
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			if num == 3 {
				f.FromIndex = uint32(v)
			} else {
				f.ToIndex = uint32(v)
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
