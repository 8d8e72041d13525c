package samba

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/bandit-node/bandit-node/protocol"
	"github.com/bandit-node/bandit-node/protocol/samba/sambapb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// wireCases are per-step messages with zero and large steps and iterations
// and boxes of every size that matters (empty, short, an envelope).
func wireCases() []*sambapb.Message {
	var out []*sambapb.Message
	rng := rand.New(rand.NewPCG(1, 2))
	box := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	for _, t := range []uint64{0, 1, 127, 128, 100000, 1<<64 - 1} {
		for _, l := range []uint32{0, 1, 2, 1<<32 - 1} {
			for _, n := range []int{0, 1, sealedBoxSize(1), sealedBoxSize(8), 300} {
				s := func() *sambapb.Sealed { return &sambapb.Sealed{T: t, L: l, Box: box(n)} }
				b := func(k int) *sambapb.Batch {
					bb := &sambapb.Batch{T: t, L: l}
					for range k {
						bb.Boxes = append(bb.Boxes, box(n))
					}
					return bb
				}
				out = append(out,
					&sambapb.Message{Kind: &sambapb.Message_Score{Score: s()}},
					&sambapb.Message{Kind: &sambapb.Message_Bit{Bit: s()}},
					&sambapb.Message{Kind: &sambapb.Message_Scores{Scores: b(3)}},
					&sambapb.Message{Kind: &sambapb.Message_Bits{Bits: b(1)}},
					&sambapb.Message{Kind: &sambapb.Message_Bits{Bits: b(0)}},
					&sambapb.Message{Kind: &sambapb.Message_OwnerScores{OwnerScores: b(3)}},
					&sambapb.Message{Kind: &sambapb.Message_OwnerBits{OwnerBits: b(2)}})
			}
		}
	}
	return out
}

// encodeWire writes m with the hand-written encoders, as the roles do.
func encodeWire(m *sambapb.Message) []byte {
	sealed := func(field protowire.Number, s *sambapb.Sealed) []byte {
		b := appendSealedMessage(make([]byte, 0, sealedMessageSize(field, s.T, s.L, len(s.Box))), field, s.T, s.L, s.Box)
		if len(b) != cap(b) {
			panic("sealedMessageSize is not the size written")
		}
		return b
	}
	batch := func(field protowire.Number, bb *sambapb.Batch) []byte {
		size := stepHeadSize(bb.T, bb.L)
		for _, box := range bb.Boxes {
			size += boxFieldSize(len(box))
		}
		b := appendBatchHead(make([]byte, 0, batchMessageSize(field, size)), field, size, bb.T, bb.L)
		for _, box := range bb.Boxes {
			b = append(appendBoxHead(b, len(box)), box...)
		}
		if len(b) != cap(b) {
			panic("batchMessageSize is not the size written")
		}
		return b
	}
	switch k := m.Kind.(type) {
	case *sambapb.Message_Score:
		return sealed(fieldScore, k.Score)
	case *sambapb.Message_Bit:
		return sealed(fieldBit, k.Bit)
	case *sambapb.Message_Scores:
		return batch(fieldScores, k.Scores)
	case *sambapb.Message_Bits:
		return batch(fieldBits, k.Bits)
	case *sambapb.Message_OwnerScores:
		return batch(fieldOwnerScores, k.OwnerScores)
	case *sambapb.Message_OwnerBits:
		return batch(fieldOwnerBits, k.OwnerBits)
	}
	panic("not a per-step message")
}

// checkParsed compares what inbound.parse made of body with proto.Unmarshal.
func checkParsed(t *testing.T, in *inbound, body []byte) {
	t.Helper()
	var m sambapb.Message
	if err := proto.Unmarshal(body, &m); err != nil {
		t.Fatalf("parse accepted %x, which proto rejects: %v", body, err)
	}
	var s *sambapb.Sealed
	var b *sambapb.Batch
	switch in.field {
	case fieldScore:
		s = m.GetScore()
	case fieldBit:
		s = m.GetBit()
	case fieldScores:
		b = m.GetScores()
	case fieldBits:
		b = m.GetBits()
	case fieldOwnerScores:
		b = m.GetOwnerScores()
	case fieldOwnerBits:
		b = m.GetOwnerBits()
	}
	switch {
	case s != nil:
		if s.T != in.t || s.L != in.l || !bytes.Equal(s.Box, in.box) {
			t.Errorf("%x: parse got field %d t=%d l=%d box=%x, proto %v", body, in.field, in.t, in.l, in.box, &m)
		}
	case b != nil:
		same := b.T == in.t && b.L == in.l && len(b.Boxes) == len(in.boxes)
		for i := 0; same && i < len(b.Boxes); i++ {
			same = bytes.Equal(b.Boxes[i], in.boxes[i])
		}
		if !same {
			t.Errorf("%x: parse got field %d t=%d l=%d boxes=%x, proto %v", body, in.field, in.t, in.l, in.boxes, &m)
		}
	default:
		t.Errorf("%x: parse got field %d, proto %v", body, in.field, &m)
	}
}

// TestWireMatchesProto: the hand-written encoders write exactly the bytes
// proto.Marshal writes, and parse reads them back as proto.Unmarshal does.
func TestWireMatchesProto(t *testing.T) {
	var in inbound
	for _, m := range wireCases() {
		want, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := encodeWire(m); !bytes.Equal(got, want) {
			t.Errorf("%v: encoded %x, proto.Marshal %x", m, got, want)
		}
		if !in.parse(want) {
			t.Errorf("%v: parse refused proto.Marshal's %x", m, want)
			continue
		}
		checkParsed(t, &in, want)
	}
	// Other kinds and forms are left to proto.
	for _, body := range [][]byte{
		nil,
		mustMarshal(t, &sambapb.Message{Kind: &sambapb.Message_Seeds{Seeds: &sambapb.Seeds{Alpha: []byte{1}}}}),
		{0x3a, 0x04, 0x10, 0x01, 0x08, 0x01},             // bit: l before t
		{0x3a, 0x04, 0x08, 0x01, 0x08, 0x02},             // bit: t twice
		{0x3a, 0x03, 0x1a, 0x01, 0x00, 0x00},             // trailing byte after the kind
		{0x3a, 0x02, 0x20, 0x01},                         // bit: unknown field 4
		{0x3a, 0x04, 0x1a, 0x00, 0x1a, 0x00},             // a Sealed with two boxes
		{0x3a, 0x06, 0x10, 0x80, 0x80, 0x80, 0x80, 0x10}, // l beyond uint32
		{0x3a, 0x02, 0x08},                               // truncated
	} {
		if in.parse(body) {
			t.Errorf("parse accepted %x", body)
		}
	}
}

func mustMarshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWireOfASession: every message a session sends re-encodes with
// proto.Marshal to the very bytes sent.
func TestWireOfASession(t *testing.T) {
	for _, alg := range []string{"ucb", "pursuit"} {
		d := newDriver(t, alg, 300, []float64{0.5, 0.4, 0.3}, 3)
		n := 0
		d.tamper = func(m *protocol.Message) bool {
			var msg sambapb.Message
			if err := proto.Unmarshal(m.Body, &msg); err != nil {
				t.Fatal(err)
			}
			if b := mustMarshal(t, &msg); !bytes.Equal(b, m.Body) {
				t.Errorf("%s: %v sent %x, proto.Marshal writes %x", alg, &msg, m.Body, b)
			}
			n++
			return true
		}
		if err := d.run(); err != nil {
			t.Fatal(err)
		}
		if n < (300-3)*8 { // 2K+2 a step and iteration
			t.Errorf("%s: only %d messages checked", alg, n)
		}
	}
}

// FuzzParse: whatever parse accepts, proto.Unmarshal reads the same.
func FuzzParse(f *testing.F) {
	cases := wireCases()
	// The first ones, and a data owner's scores and bits of a batch.
	seeds := append(cases[:49:49], cases[len(cases)-2:]...)
	for _, m := range seeds {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in inbound
		if in.parse(body) {
			checkParsed(t, &in, body)
		}
	})
}

// TestStepBodySizes pins the sizes of a step's bodies that the bare
// message pattern (bench/pattern's defaults) copies, at a step whose number
// takes two bytes: a score 45 bytes, a bit 38, the batch of scores 8 + 38 K
// and the batch of bits 8 + 31 K.
func TestStepBodySizes(t *testing.T) {
	const step, iteration = 1000, 1
	score := appendSealedMessage(nil, fieldScore, step, iteration, make([]byte, sealedBoxSize(8)))
	bit := appendSealedMessage(nil, fieldBit, step, iteration, make([]byte, sealedBoxSize(1)))
	if len(score) != 45 || len(bit) != 38 {
		t.Fatalf("a score body of %d bytes and a bit body of %d, want 45 and 38", len(score), len(bit))
	}
	for _, k := range []int{10, 100} {
		for _, tc := range []struct {
			field protowire.Number
			plain int // bytes sealed in each box
			item  int
		}{{fieldScores, 8, 38}, {fieldBits, 1, 31}} {
			box := sealedBoxSize(tc.plain)
			size := stepHeadSize(step, iteration) + k*boxFieldSize(box)
			body := appendBatchHead(nil, tc.field, size, step, iteration)
			for range k {
				body = append(appendBoxHead(body, box), make([]byte, box)...)
			}
			if len(body) != batchMessageSize(tc.field, size) || len(body) != 8+k*tc.item {
				t.Errorf("K = %d: a batch (field %d) of %d bytes, want 8 + %d K = %d", k, tc.field, len(body), tc.item, 8+k*tc.item)
			}
		}
	}
}

// FuzzConsume holds the inlined decoders to protowire's.
func FuzzConsume(f *testing.F) {
	for _, b := range [][]byte{{0x08}, {0x07}, {0x80, 0x00}, {0xff, 0x7f}, {0x80, 0x80, 0x01}, {0x03, 'a', 'b', 'c'}, {0x81, 0x00, 'x'}, {0x05, 'a'},
		{0x52, 0x02, 0x08, 0x05}, {0x5a, 0x00}} { // owner_scores and owner_bits tags
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		num, typ, ok := tag1(b)
		wnum, wtyp, wn := protowire.ConsumeTag(b)
		if ok && (wn != 1 || num != wnum || typ != wtyp) {
			t.Fatalf("tag1(%x) = %d %d, protowire %d %d %d", b, num, typ, wnum, wtyp, wn)
		}
		if !ok && wn == 1 {
			t.Fatalf("tag1(%x) refused the one-byte tag %d %d", b, wnum, wtyp)
		}
		v, n := consumeVarint(b)
		wv, wn := protowire.ConsumeVarint(b)
		if (n < 0) != (wn < 0) || (n >= 0 && (v != wv || n != wn)) {
			t.Fatalf("consumeVarint(%x) = %d %d, protowire %d %d", b, v, n, wv, wn)
		}
		bs, n := consumeBytes(b)
		wbs, wn := protowire.ConsumeBytes(b)
		if (n < 0) != (wn < 0) || (n >= 0 && (!bytes.Equal(bs, wbs) || n != wn)) {
			t.Fatalf("consumeBytes(%x) = %x %d, protowire %x %d", b, bs, n, wbs, wn)
		}
	})
}
