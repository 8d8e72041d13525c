package environment

import (
	"bytes"
	"strings"
	"sync"
)

// tailSize bounds what an exec environment keeps of its program's
// stderr: the last 4 KiB, across restarts. Nothing else is kept or
// forwarded.
const tailSize = 4 << 10

// tailLines and tailShown bound the part of the tail an error quotes.
const (
	tailLines = 3
	tailShown = 512
)

// tail is an io.Writer that keeps the last tailSize bytes written to it.
// The exec package's copying goroutine writes; errors read.
type tail struct {
	mu  sync.Mutex // guards buf
	buf []byte
}

// Write keeps the end of p; it never fails, so the program's stderr never
// blocks.
func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= tailSize {
		t.buf = append(t.buf[:0], p[len(p)-tailSize:]...)
		return n, nil
	}
	if over := len(t.buf) + len(p) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return n, nil
}

// String returns the whole tail.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// last returns the last few non-empty lines of the tail, at most
// tailShown bytes, for an error message; "" when there are none.
func (t *tail) last() string {
	return lastLines(t.String())
}

func lastLines(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if s == "" {
		return ""
	}
	b := []byte(s)
	start := len(b)
	for n := 0; n < tailLines && start > 0; n++ {
		i := bytes.LastIndexByte(b[:start], '\n')
		start = i
		if i < 0 {
			start = 0
			break
		}
	}
	if start > 0 {
		start++ // after the newline
	}
	if len(b)-start > tailShown {
		start = len(b) - tailShown
	}
	return string(b[start:])
}
