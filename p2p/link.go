package p2p

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
)

// A Messenger's frames to one peer form a link: a numbered sequence that
// survives the streams and connections carrying it. The sender numbers
// every frame (its sequence number, from 1), keeps each one until the
// receiver acknowledges it, and, when a stream ends with frames
// unacknowledged (its connection closed, the network cut, the peer's
// daemon restarted), opens a new stream and sends them again. The receiver
// hands each frame of a link to its handler once, in order, and drops the
// copies a resend brings twice.
//
// On the wire a stream begins with a header frame, before any frame of the
// caller:
//
//	"BNL1" | link ID (8 bytes, big endian) | uvarint sequence number of the stream's first frame
//
// Every later frame of the stream has the next sequence number, so frames
// carry none of their own. The receiver writes acknowledgements back on the
// same stream: each a uvarint, the sequence number of the next frame it
// awaits, so that every frame before it has reached the handler. The link
// ID is drawn at random when the sender's state for the peer is made, and
// again when the sender gives up on the frames it holds
// (Messenger.giveUp): a receiver that sees a new link ID starts counting
// afresh, so a restarted sender, or one that dropped frames, is never
// mistaken for a gap.

// linkMagic opens every stream's header.
const linkMagic = "BNL1"

// maxHeaderSize bounds a stream header frame.
const maxHeaderSize = len(linkMagic) + 8 + binary.MaxVarintLen64

// errBadHeader reports a stream whose first frame is not a link header.
var errBadHeader = fmt.Errorf("%w: the stream does not begin with a link header", ErrFrameMalformed)

// appendHeader appends the header frame (length prefix included) of a
// stream of link whose first frame is seq.
func appendHeader(b []byte, link, seq uint64) []byte {
	var h [maxHeaderSize]byte
	n := copy(h[:], linkMagic)
	binary.BigEndian.PutUint64(h[n:], link)
	n += 8
	n += binary.PutUvarint(h[n:], seq)
	b = binary.AppendUvarint(b, uint64(n))
	return append(b, h[:n]...)
}

// parseHeader decodes a header frame's payload.
func parseHeader(frame []byte) (link, seq uint64, err error) {
	if len(frame) < len(linkMagic)+9 || string(frame[:len(linkMagic)]) != linkMagic {
		return 0, 0, errBadHeader
	}
	frame = frame[len(linkMagic):]
	link = binary.BigEndian.Uint64(frame)
	seq, n := binary.Uvarint(frame[8:])
	// The sequence number in its shortest encoding only: a header has one
	// encoding, as appendHeader writes it.
	if n <= 0 || 8+n != len(frame) || seq == 0 || n != len(binary.AppendUvarint(nil, seq)) {
		return 0, 0, errBadHeader
	}
	return link, seq, nil
}

// newLinkID draws a link ID. It protects nothing (it only tells links
// apart), but crypto/rand costs nothing here and needs no seed.
func newLinkID() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("p2p: reading random bytes: %v", err)) // crypto/rand never fails on supported systems
	}
	return binary.BigEndian.Uint64(b[:])
}

// sendQueue holds the frames sent on a link that the receiver has not yet
// acknowledged, each in its wire encoding (length prefix and payload), one
// after the other: a resend is one write of them all.
type sendQueue struct {
	buf   []byte // the frames, from buf[start:]
	start int
	first uint64 // sequence number of the frame at buf[start]
	next  uint64 // sequence number of the next frame pushed
}

// newSendQueue returns an empty queue whose first frame will be number 1.
func newSendQueue() sendQueue { return sendQueue{first: 1, next: 1} }

// push appends frame, numbered q.next, and returns where its encoding
// starts in q.buf.
func (q *sendQueue) push(frame []byte) int {
	if q.start > 0 && q.start >= len(q.buf)-q.start {
		// More dropped than kept: move the kept frames to the front,
		// so that the buffer stays within twice what it holds.
		n := copy(q.buf, q.buf[q.start:])
		q.buf, q.start = q.buf[:n], 0
	}
	off := len(q.buf)
	q.buf = binary.AppendUvarint(q.buf, uint64(len(frame)))
	q.buf = append(q.buf, frame...)
	q.next++
	return off
}

// errBadAck reports an acknowledgement of frames never sent.
var errBadAck = errors.New("acknowledged frames that were never sent")

// ack drops the frames numbered below upto, which the receiver has
// acknowledged. An upto at or below q.first drops nothing.
func (q *sendQueue) ack(upto uint64) error {
	if upto > q.next {
		return fmt.Errorf("%w (frame %d acknowledged, %d sent)", errBadAck, upto-1, q.next-1)
	}
	for ; q.first < upto; q.first++ {
		size, n := binary.Uvarint(q.buf[q.start:])
		q.start += n + int(size)
	}
	if q.first == q.next {
		// Empty: start over at the front, and give back a large buffer.
		q.start = 0
		if cap(q.buf) > queueKeep {
			q.buf = nil
		} else {
			q.buf = q.buf[:0]
		}
	}
	return nil
}

// queueKeep is the largest buffer an empty queue keeps for its next frames.
const queueKeep = 1 << 20

// dropAll drops every frame, keeping the numbering: the next frame pushed
// is numbered as it would have been.
func (q *sendQueue) dropAll() {
	q.first = q.next
	q.buf, q.start = nil, 0
}

// pending returns the encodings of the unacknowledged frames.
func (q *sendQueue) pending() []byte { return q.buf[q.start:] }

// size is the bytes of the unacknowledged frames' encodings.
func (q *sendQueue) size() int { return len(q.buf) - q.start }

// frames is the number of unacknowledged frames.
func (q *sendQueue) frames() uint64 { return q.next - q.first }
