package p2p

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestFrameRoundTrip(t *testing.T) {
	frames := [][]byte{
		{},
		[]byte("a"),
		bytes.Repeat([]byte{0x12}, 9), // with a 16-byte buffer: 5 bytes left free, too few for a length
		bytes.Repeat([]byte{0xab}, 127),
		bytes.Repeat([]byte{0xcd}, 128),
		bytes.Repeat([]byte{0xef}, 70000),
	}
	for _, c := range []struct {
		viaBufio bool
		size     int
	}{{true, 4096}, {true, 16}, {false, 0}} {
		viaBufio := c.viaBufio
		var buf bytes.Buffer
		var w io.Writer = &buf
		bw := bufio.NewWriterSize(&buf, max(c.size, 16))
		if viaBufio {
			w = bw
		}
		for _, f := range frames {
			if err := WriteFrame(w, f, 1<<20); err != nil {
				t.Fatal(err)
			}
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(&buf)
		for i, want := range frames {
			got, err := ReadFrame(r, 1<<20)
			if err != nil {
				t.Fatalf("bufio=%v frame %d: %v", viaBufio, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("bufio=%v frame %d: got %d bytes, want %d", viaBufio, i, len(got), len(want))
			}
		}
		if _, err := ReadFrame(r, 1<<20); err != io.EOF {
			t.Fatalf("after the last frame: err = %v, want io.EOF", err)
		}
	}
}

// TestBorrowFrame reads frames of every size with BorrowFrame: one that fits
// the reader's buffer comes back in the buffer itself (nothing allocated)
// and stays there until discarded, a larger one in a slice of its own.
func TestBorrowFrame(t *testing.T) {
	const bufSize = 64
	frames := [][]byte{
		{},
		[]byte("a"),
		bytes.Repeat([]byte{0x11}, bufSize-1),
		bytes.Repeat([]byte{0x22}, bufSize), // fits once its length is read
		bytes.Repeat([]byte{0x33}, bufSize+1),
		bytes.Repeat([]byte{0x44}, 1000),
		[]byte("last"),
	}
	var buf bytes.Buffer
	for _, f := range frames {
		if err := WriteFrame(&buf, f, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	// One byte a read, so that frames arrive in pieces and Peek must wait
	// for the rest of them.
	r := bufio.NewReaderSize(iotest.OneByteReader(&buf), bufSize)
	for i, want := range frames {
		got, borrowed, err := BorrowFrame(r, 1<<20)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("frame %d: got %d bytes, want %d", i, len(got), len(want))
		}
		if wantBorrowed := len(want) <= bufSize; borrowed != wantBorrowed {
			t.Fatalf("frame %d (%d bytes): borrowed = %v, want %v", i, len(want), borrowed, wantBorrowed)
		}
		if borrowed {
			if len(got) > 0 {
				if peek, _ := r.Peek(len(got)); &peek[0] != &got[0] {
					t.Fatalf("frame %d: a borrowed frame that is not in the reader's buffer", i)
				}
			}
			r.Discard(len(got))
		}
	}
	if _, _, err := BorrowFrame(r, 1<<20); err != io.EOF {
		t.Fatalf("after the last frame: err = %v, want io.EOF", err)
	}
}

// TestBorrowFrameErrors: BorrowFrame fails as ReadFrame does.
func TestBorrowFrameErrors(t *testing.T) {
	uv := func(n uint64) []byte { return binary.AppendUvarint(nil, n) }
	for _, tc := range []struct {
		name    string
		input   []byte
		max     int
		wantErr error
	}{
		{name: "empty input", input: nil, max: 10, wantErr: io.EOF},
		{name: "too large", input: append(uv(4), "abcd"...), max: 3, wantErr: ErrFrameTooLarge},
		{name: "truncated body", input: append(uv(10), "abc"...), max: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "truncated large body", input: append(uv(5000), "abc"...), max: 1 << 20, wantErr: io.ErrUnexpectedEOF},
		{name: "length only", input: uv(10), max: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "overlong varint", input: bytes.Repeat([]byte{0x80}, 11), max: 100, wantErr: ErrFrameMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := BorrowFrame(bufio.NewReaderSize(bytes.NewReader(tc.input), 16), tc.max)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestReadFrameErrors(t *testing.T) {
	uv := func(n uint64) []byte { return binary.AppendUvarint(nil, n) }
	tests := []struct {
		name    string
		input   []byte
		max     int
		want    []byte
		wantErr error
		mention string
	}{
		{name: "empty input", input: nil, max: 10, wantErr: io.EOF},
		{name: "zero-length frame", input: uv(0), max: 10, want: []byte{}},
		{name: "zero-length frame, zero limit", input: uv(0), max: 0, want: []byte{}},
		{name: "exactly the limit", input: append(uv(3), "abc"...), max: 3, want: []byte("abc")},
		{name: "too large", input: append(uv(4), "abcd"...), max: 3, wantErr: ErrFrameTooLarge, mention: "4-byte frame"},
		{name: "hostile length", input: uv(1 << 62), max: 1 << 20, wantErr: ErrFrameTooLarge},
		{name: "negative limit", input: append(uv(1), 'x'), max: -1, wantErr: ErrFrameTooLarge},
		{name: "truncated body", input: append(uv(10), "abc"...), max: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "length only", input: uv(10), max: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "truncated length", input: []byte{0x80}, max: 100, wantErr: io.ErrUnexpectedEOF},
		{name: "overlong varint", input: bytes.Repeat([]byte{0x80}, 11), max: 100, wantErr: ErrFrameMalformed},
		{name: "varint overflow", input: append(bytes.Repeat([]byte{0xff}, 9), 0x02), max: 100, wantErr: ErrFrameMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadFrame(bufio.NewReader(bytes.NewReader(tc.input)), tc.max)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if tc.mention != "" && !strings.Contains(err.Error(), tc.mention) {
					t.Errorf("error %q does not mention %q", err, tc.mention)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestWriteFrameAllocs: a frame written to a bufio.Writer with room for its
// length allocates nothing (the messenger writes every frame that way).
func TestWriteFrameAllocs(t *testing.T) {
	bw := bufio.NewWriterSize(io.Discard, 1<<16)
	frame := make([]byte, 100)
	allocs := testing.AllocsPerRun(100, func() {
		if err := WriteFrame(bw, frame, len(frame)); err != nil {
			t.Fatal(err)
		}
		if err := bw.Flush(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations a frame, want 0", allocs)
	}
}

func TestWriteFrameTooLarge(t *testing.T) {
	var buf bytes.Buffer
	err := WriteFrame(&buf, make([]byte, 11), 10)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v, want ErrFrameTooLarge", err)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written for a refused frame", buf.Len())
	}
}

// FuzzReadFrame checks that ReadFrame never panics, never returns more than the
// limit, and that whatever it accepts re-encodes to the bytes it consumed.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{}, 16)
	f.Add([]byte{0}, 16)
	f.Add(append(binary.AppendUvarint(nil, 3), "abc"...), 16)
	f.Add(binary.AppendUvarint(nil, 1<<40), 16)
	f.Add(bytes.Repeat([]byte{0xff}, 12), 16)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max > 1<<16 {
			max = 1 << 16
		}
		src := bytes.NewReader(data)
		r := bufio.NewReader(src)
		consumed := 0
		for {
			frame, err := ReadFrame(r, max)
			if err != nil {
				return
			}
			if len(frame) > max && len(frame) > 0 {
				t.Fatalf("frame of %d bytes exceeds limit %d", len(frame), max)
			}
			end := len(data) - src.Len() - r.Buffered()
			// The frame is the tail of what this call consumed (a
			// non-minimal length prefix is accepted, so compare bodies).
			if end-consumed < len(frame)+1 || !bytes.Equal(data[end-len(frame):end], frame) {
				t.Fatalf("frame is not the input's bytes")
			}
			var buf bytes.Buffer
			if err := WriteFrame(&buf, frame, max); err != nil {
				t.Fatal(err)
			}
			back, err := ReadFrame(bufio.NewReader(&buf), max)
			if err != nil || !bytes.Equal(back, frame) {
				t.Fatalf("re-encoded frame does not round-trip: %v", err)
			}
			consumed = end
		}
	})
}

// FuzzBorrowFrame checks that BorrowFrame reads what ReadFrame reads, frame
// for frame, with the same errors, whatever the reader's buffer size.
func FuzzBorrowFrame(f *testing.F) {
	f.Add([]byte{}, 16, 16)
	f.Add(append(binary.AppendUvarint(nil, 3), "abc"...), 16, 16)
	f.Add(append(binary.AppendUvarint(nil, 20), bytes.Repeat([]byte{7}, 20)...), 64, 16)
	f.Add(binary.AppendUvarint(nil, 1<<40), 16, 16)
	f.Fuzz(func(t *testing.T, data []byte, limit, size int) {
		limit = min(limit, 1<<16)
		size = min(max(size, 16), 1<<12)
		want := bufio.NewReader(bytes.NewReader(data))
		got := bufio.NewReaderSize(bytes.NewReader(data), size)
		for {
			wf, werr := ReadFrame(want, limit)
			gf, borrowed, gerr := BorrowFrame(got, limit)
			if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
				t.Fatalf("ReadFrame: %v; BorrowFrame: %v", werr, gerr)
			}
			if werr != nil {
				return
			}
			if !bytes.Equal(wf, gf) {
				t.Fatalf("ReadFrame read %d bytes, BorrowFrame %d", len(wf), len(gf))
			}
			if borrowed {
				got.Discard(len(gf))
			}
		}
	})
}
