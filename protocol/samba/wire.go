package samba

import (
	"math"

	"github.com/bandit-node/bandit-node/privacy"
	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of every step and iteration — a data owner's score, the
// batches of scores and bits between the controller and comp, a data owner's
// bit — are written and read here with protowire instead of proto's
// reflection, into and out of buffers sized in advance. They are the very
// bytes proto.Marshal writes for the same sambapb.Message (TestWireMatchesProto),
// and a body not in that form is left to proto.Unmarshal, so the wire format
// is samba.proto's either way and no input decodes differently.

// Field numbers of sambapb.Message's kinds sent every step.
const (
	fieldScore  protowire.Number = 4 // Sealed: data owner -> controller
	fieldScores protowire.Number = 5 // Batch: controller -> comp
	fieldBits   protowire.Number = 6 // Batch: comp -> controller
	fieldBit    protowire.Number = 7 // Sealed: controller -> data owner

	// With params.batch > 1, a data owner's messages of a batch.
	fieldOwnerScores protowire.Number = 10 // Batch: data owner -> controller
	fieldOwnerBits   protowire.Number = 11 // Batch: controller -> data owner
)

// isBatch reports whether the kind field num holds a Batch.
func isBatch(num protowire.Number) bool {
	return num == fieldScores || num == fieldBits || num == fieldOwnerScores || num == fieldOwnerBits
}

// Field numbers inside Sealed and Batch.
const (
	fieldT   protowire.Number = 1
	fieldL   protowire.Number = 2
	fieldBox protowire.Number = 3 // Sealed.box, Batch.boxes
)

// appendVarint is protowire.AppendVarint with the one-byte case inlined:
// every tag and most lengths here.
func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// appendTag appends a field's tag: one byte, as every field number here is
// below 16.
func appendTag(b []byte, num protowire.Number, typ protowire.Type) []byte {
	return append(b, byte(protowire.EncodeTag(num, typ)))
}

// tag1 decodes the one-byte tag at the start of b, which every field here
// has; ok is false when b is empty or starts with another (which parse
// leaves to proto.Unmarshal).
func tag1(b []byte) (num protowire.Number, typ protowire.Type, ok bool) {
	if len(b) == 0 || b[0] < 1<<3 || b[0] >= 0x80 { // field numbers start at 1
		return 0, 0, false
	}
	return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), true
}

// consumeVarint is protowire.ConsumeVarint, quicker for the one- and
// two-byte varints of every length and step here.
func consumeVarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	if len(b) > 1 && b[1] < 0x80 {
		return uint64(b[0]&0x7f) | uint64(b[1])<<7, 2
	}
	return protowire.ConsumeVarint(b)
}

// consumeBytes is protowire.ConsumeBytes over consumeVarint.
func consumeBytes(b []byte) ([]byte, int) {
	m, n := consumeVarint(b)
	if n < 0 || m > uint64(len(b)-n) {
		return nil, -1
	}
	return b[n : n+int(m)], n + int(m)
}

// stepHeadSize is the size of the t and l fields (proto3 leaves zeros out).
func stepHeadSize(t uint64, l uint32) int {
	n := 0
	if t != 0 {
		n += protowire.SizeTag(fieldT) + protowire.SizeVarint(t)
	}
	if l != 0 {
		n += protowire.SizeTag(fieldL) + protowire.SizeVarint(uint64(l))
	}
	return n
}

func appendStepHead(b []byte, t uint64, l uint32) []byte {
	if t != 0 {
		b = appendTag(b, fieldT, protowire.VarintType)
		b = appendVarint(b, t)
	}
	if l != 0 {
		b = appendTag(b, fieldL, protowire.VarintType)
		b = appendVarint(b, uint64(l))
	}
	return b
}

// boxFieldSize is the size of one box field of n bytes in a Batch.
func boxFieldSize(n int) int { return protowire.SizeTag(fieldBox) + protowire.SizeBytes(n) }

// sealedSize is the size of a Sealed{t, l, box of n bytes}; an empty box is
// left out, as proto3 leaves out empty bytes.
func sealedSize(t uint64, l uint32, n int) int {
	s := stepHeadSize(t, l)
	if n > 0 {
		s += boxFieldSize(n)
	}
	return s
}

// sealedMessageSize is the size of a Message whose kind field holds a
// Sealed{t, l, box of n bytes}.
func sealedMessageSize(field protowire.Number, t uint64, l uint32, n int) int {
	return protowire.SizeTag(field) + protowire.SizeBytes(sealedSize(t, l, n))
}

// appendSealedHead appends a Message whose kind field holds Sealed{t, l,
// box}, up to the box's bytes: the caller appends exactly n of them next.
func appendSealedHead(b []byte, field protowire.Number, t uint64, l uint32, n int) []byte {
	b = appendTag(b, field, protowire.BytesType)
	b = appendVarint(b, uint64(sealedSize(t, l, n)))
	b = appendStepHead(b, t, l)
	if n > 0 {
		b = appendTag(b, fieldBox, protowire.BytesType)
		b = appendVarint(b, uint64(n))
	}
	return b
}

// appendSealedMessage appends a whole Message whose kind field holds
// Sealed{t, l, box}.
func appendSealedMessage(b []byte, field protowire.Number, t uint64, l uint32, box []byte) []byte {
	return append(appendSealedHead(b, field, t, l, len(box)), box...)
}

// batchMessageSize is the size of a Message whose kind field holds a Batch
// of size bytes (stepHeadSize plus the box fields).
func batchMessageSize(field protowire.Number, size int) int {
	return protowire.SizeTag(field) + protowire.SizeBytes(size)
}

// appendBatchHead appends a Message whose kind field holds a Batch of size
// bytes, up to its boxes: the caller appends them next, each with
// appendBoxHead and its bytes.
func appendBatchHead(b []byte, field protowire.Number, size int, t uint64, l uint32) []byte {
	b = appendTag(b, field, protowire.BytesType)
	b = appendVarint(b, uint64(size))
	return appendStepHead(b, t, l)
}

// appendBoxHead appends the tag and length of a box of n bytes in a Batch
// (repeated fields keep empty elements).
func appendBoxHead(b []byte, n int) []byte {
	b = appendTag(b, fieldBox, protowire.BytesType)
	return appendVarint(b, uint64(n))
}

// sealedBoxSize is the size of the envelope of an n-byte plaintext.
func sealedBoxSize(n int) int { return privacy.EnvelopeOverhead + n }

// The sizes of the two envelopes sent every step: a data owner's score, an
// 8-byte float, and comp's bit, one byte.
const (
	scoreBoxSize = privacy.EnvelopeOverhead + 8
	bitBoxSize   = privacy.EnvelopeOverhead + 1
)

// inbound is a received per-step message decoded in place: box and boxes
// alias the received body and are valid only while the role handles that
// message (a role copies what it keeps). boxes is reused from message to
// message.
type inbound struct {
	field protowire.Number
	t     uint64
	l     uint32
	box   []byte   // Sealed
	boxes [][]byte // Batch
}

// parse decodes body when it is a Message holding a score, a batch, a bit or
// a data owner's scores or bits of a batch
// in the form proto.Marshal writes: exactly one kind field, then inside it
// (every tag in one byte)
// t, l and the box or boxes, each at most once and in field order (boxes
// repeated). It reports false for anything else — other kinds, other field
// orders, unknown or repeated fields, malformed input — which the role then
// decodes with proto.Unmarshal, so that every body means what proto says it
// means.
func (in *inbound) parse(body []byte) bool {
	num, typ, ok := tag1(body)
	if !ok || typ != protowire.BytesType || ((num < fieldScore || num > fieldBit) && num != fieldOwnerScores && num != fieldOwnerBits) {
		return false
	}
	msg, m := consumeBytes(body[1:])
	if m < 0 || 1+m != len(body) {
		return false
	}
	in.field, in.t, in.l, in.box, in.boxes = num, 0, 0, nil, in.boxes[:0]
	batch := isBatch(num)
	last := protowire.Number(0)
	for len(msg) > 0 {
		num, typ, ok := tag1(msg)
		if !ok || num < last || (num == last && (num != fieldBox || !batch)) {
			return false
		}
		msg, last = msg[1:], num
		switch {
		case num == fieldT && typ == protowire.VarintType:
			v, n := consumeVarint(msg)
			if n < 0 {
				return false
			}
			in.t, msg = v, msg[n:]
		case num == fieldL && typ == protowire.VarintType:
			v, n := consumeVarint(msg)
			if n < 0 || v > math.MaxUint32 {
				return false
			}
			in.l, msg = uint32(v), msg[n:]
		case num == fieldBox && typ == protowire.BytesType:
			v, n := consumeBytes(msg)
			if n < 0 {
				return false
			}
			if batch {
				in.boxes = append(in.boxes, v)
			} else {
				in.box = v
			}
			msg = msg[n:]
		default:
			return false
		}
	}
	return true
}
