package p2p

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is returned (wrapped) by ReadFrame and WriteFrame for a
// frame longer than the allowed maximum.
var ErrFrameTooLarge = errors.New("frame too large")

// ErrFrameMalformed is returned (wrapped) by ReadFrame when a frame's length
// prefix is not a valid uvarint.
var ErrFrameMalformed = errors.New("malformed frame length")

// WriteFrame writes frame as a uvarint length followed by the frame bytes, the
// encoding protodelim uses for one protobuf message. A frame longer than
// maxSize is refused with ErrFrameTooLarge. When w is a *bufio.Writer the
// length goes into the writer's free space and the frame is written to it
// without copying, so nothing is allocated; otherwise the two are combined
// into one Write so the frame is not split across two writes.
func WriteFrame(w io.Writer, frame []byte, maxSize int) error {
	if maxSize < 0 {
		maxSize = 0
	}
	if len(frame) > maxSize {
		return fmt.Errorf("writing a %d-byte frame: %w (limit %d bytes)", len(frame), ErrFrameTooLarge, maxSize)
	}
	size := uint64(len(frame))
	if bw, ok := w.(*bufio.Writer); ok {
		// Appended to the free space of bw's buffer (allocating only if
		// fewer than 10 bytes are free), as AvailableBuffer intends: a
		// header array passed to Write would escape to the heap, one
		// allocation a frame.
		if _, err := bw.Write(binary.AppendUvarint(bw.AvailableBuffer(), size)); err != nil {
			return err
		}
		_, err := bw.Write(frame)
		return err
	}
	buf := make([]byte, binary.MaxVarintLen64+len(frame))
	n := binary.PutUvarint(buf, size)
	n += copy(buf[n:], frame)
	_, err := w.Write(buf[:n])
	return err
}

// ReadFrame reads one frame written by WriteFrame. It returns io.EOF when r
// ends cleanly before a frame, io.ErrUnexpectedEOF when r ends inside a frame,
// ErrFrameMalformed (wrapped) for an invalid length prefix, and
// ErrFrameTooLarge (wrapped, naming the size and the limit) for a frame longer
// than maxSize. It never allocates more than maxSize bytes, whatever length
// the peer announces. The returned slice is freshly allocated and owned by the
// caller.
func ReadFrame(r *bufio.Reader, maxSize int) ([]byte, error) {
	size, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, err
	}
	if size > 0 && size <= r.Buffered() {
		// The usual case: the whole frame is in the buffer. Copying it out
		// spares zeroing the new slice first.
		buf, _ := r.Peek(size)
		frame := append([]byte(nil), buf...)
		r.Discard(len(buf))
		return frame, nil
	}
	return readFrameBody(r, size)
}

// BorrowFrame reads one frame as ReadFrame does, with the same errors, but
// leaves a frame that fits in r's buffer where it is: the frame returned
// then aliases r's buffer (borrowed is true), it is valid only until the
// next read from r, and the caller consumes it, r.Discard(len(frame)), once
// done with it. A frame larger than r's buffer is read into a new slice and
// consumed already (borrowed is false). Reading a frame this way allocates
// and copies nothing.
func BorrowFrame(r *bufio.Reader, maxSize int) (frame []byte, borrowed bool, err error) {
	size, err := readFrameSize(r, maxSize)
	if err != nil {
		return nil, false, err
	}
	if size > r.Size() {
		frame, err := readFrameBody(r, size)
		return frame, false, err
	}
	// Peek waits for the rest of the frame, if need be, under the reader's
	// deadline.
	if frame, err = r.Peek(size); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	return frame, true, nil
}

// readFrameSize reads a frame's length prefix and checks it against
// maxSize (a negative maxSize counts as 0).
func readFrameSize(r *bufio.Reader, maxSize int) (int, error) {
	size, err := readUvarint(r)
	if err != nil {
		return 0, err
	}
	if maxSize < 0 {
		maxSize = 0
	}
	if size > uint64(maxSize) {
		return 0, fmt.Errorf("reading a %d-byte frame: %w (limit %d bytes)", size, ErrFrameTooLarge, maxSize)
	}
	return int(size), nil
}

// readFrameBody reads the size bytes of a frame whose length prefix has
// been read into a new slice.
func readFrameBody(r *bufio.Reader, size int) ([]byte, error) {
	frame := make([]byte, size)
	if _, err := io.ReadFull(r, frame); err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return frame, nil
}

// readUvarint reads a frame's length prefix. It differs from
// binary.ReadUvarint in its errors: io.EOF only before the first byte,
// io.ErrUnexpectedEOF inside the prefix, ErrFrameMalformed on overflow, and
// the reader's own error otherwise.
func readUvarint(r *bufio.Reader) (uint64, error) {
	var x uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := r.ReadByte()
		if err != nil {
			if i > 0 && err == io.EOF {
				return 0, io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, fmt.Errorf("reading frame length: %w (varint overflows 64 bits)", ErrFrameMalformed)
			}
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	return 0, fmt.Errorf("reading frame length: %w (varint longer than %d bytes)", ErrFrameMalformed, binary.MaxVarintLen64)
}
