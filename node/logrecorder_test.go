package node

import (
	"context"
	"log/slog"
	"sync"
)

// logRecorder keeps every record a test node logs, with its attributes as
// text, so that a test can check what a daemon told its operator (a decline
// leaves no session record, only a log line).
type logRecorder struct {
	mu      sync.Mutex
	records []loggedRecord
}

// loggedRecord is one log record: its message, attributes and level.
type loggedRecord struct {
	Msg   string
	Attrs map[string]string
	Level slog.Level
}

// wrap returns a handler that records into r and passes every record on to
// next.
func (r *logRecorder) wrap(next slog.Handler) slog.Handler { return recordingHandler{r: r, next: next} }

// find returns the records with message msg whose attribute key is value.
func (r *logRecorder) find(msg, key, value string) []loggedRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []loggedRecord
	for _, rec := range r.records {
		if rec.Msg == msg && rec.Attrs[key] == value {
			out = append(out, rec)
		}
	}
	return out
}

// all returns a copy of every record so far.
func (r *logRecorder) all() []loggedRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]loggedRecord(nil), r.records...)
}

type recordingHandler struct {
	r     *logRecorder
	next  slog.Handler
	attrs []slog.Attr
}

func (h recordingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h recordingHandler) Handle(ctx context.Context, rec slog.Record) error {
	attrs := map[string]string{}
	for _, a := range h.attrs {
		attrs[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	h.r.mu.Lock()
	h.r.records = append(h.r.records, loggedRecord{Msg: rec.Message, Attrs: attrs, Level: rec.Level})
	h.r.mu.Unlock()
	return h.next.Handle(ctx, rec)
}

func (h recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return recordingHandler{r: h.r, next: h.next.WithAttrs(as), attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h recordingHandler) WithGroup(name string) slog.Handler {
	return recordingHandler{r: h.r, next: h.next.WithGroup(name), attrs: h.attrs}
}
