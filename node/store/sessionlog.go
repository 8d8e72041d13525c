package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// Bounds of the session logs. In memory: the last sessionLogLines lines
// and at most sessionLogBytes bytes of each of the last sessionLogSessions
// sessions this node took part in. On disk: one file per session in
// <data_dir>/logs, rewritten from memory (the newest lines, after a marker)
// when it grows past twice sessionLogBytes, and at most sessionLogFiles
// files, the least recently written removed first. The disk copy is what
// survives a restart; the session records of the result store outlive it,
// since an operator reads a session's log mostly while it runs or soon
// after, and a log is larger than its record.
const (
	sessionLogLines    = 1000
	sessionLogBytes    = 256 << 10
	sessionLogSessions = 64
	sessionLogFiles    = 256
)

// SessionLogLimits are the bounds of a sessionLogs (sessionLog* outside
// tests).
type SessionLogLimits struct {
	lines, bytes, sessions, files int
}

// DefaultSessionLogLimits returns the bounds the daemon runs with.
func DefaultSessionLogLimits() SessionLogLimits {
	return SessionLogLimits{sessionLogLines, sessionLogBytes, sessionLogSessions, sessionLogFiles}
}

// SessionLogs keeps the log lines of each session this node takes part in,
// bounded as SessionLogLimits says. Only sessions made known with track
// are kept, so that a peer naming made-up session IDs in its frames (which
// this node logs) cannot fill it or push real sessions out.
type SessionLogs struct {
	dir    string // "" keeps the logs in memory only
	limits SessionLogLimits

	mu   sync.Mutex // guards byID, seq, lastErr and every sessionLog
	byID map[string]*sessionLog
	seq  uint64 // bumped at every write; orders sessions for eviction
	// lastErr is why the last session log the disk refused is kept in
	// memory only, nil once a log file was opened again; failures counts
	// the refusals.
	lastErr  error
	Failures atomic.Uint64
}

// sessionLog is the kept log of one session.
type sessionLog struct {
	lines   []string // oldest first; numbered next-len(lines) .. next-1
	bytes   int      // sum of len(lines[i])+1
	next    int64    // the number of the next line
	dropped int64    // lines dropped from memory so far
	used    uint64   // sessionLogs.seq at the last write

	file      *os.File // nil: not on disk (memory only, or after an error)
	fileBytes int64
}

// NewSessionLogs returns session logs kept in memory and, if dir is not
// empty, in files under dir, which it creates.
func NewSessionLogs(dir string, limits SessionLogLimits) (*SessionLogs, error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating the session log directory: %w", err)
		}
	}
	return &SessionLogs{dir: dir, limits: limits, byID: map[string]*sessionLog{}}, nil
}

// Track starts keeping the log lines of session id; a log already on disk
// (from before a restart) is read back first.
func (l *SessionLogs) Track(id string) {
	if !ValidSessionID(id) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.byID[id]; ok {
		return
	}
	if len(l.byID) >= l.limits.sessions {
		l.evictLocked()
	}
	sl := &sessionLog{}
	l.byID[id] = sl
	l.seq++
	sl.used = l.seq
	if l.dir == "" {
		return
	}
	if old, err := os.ReadFile(l.path(id)); err == nil {
		for _, line := range splitLines(old) {
			l.pushLocked(sl, line)
		}
	}
	f, err := os.OpenFile(l.path(id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		l.Failures.Add(1)
		l.lastErr = err
		l.pushLocked(sl, fmt.Sprintf("(this log is kept in memory only: %v)", err))
		return
	}
	l.lastErr = nil
	if st, err := f.Stat(); err == nil {
		sl.fileBytes = st.Size()
	}
	sl.file = f
	l.pruneFilesLocked(id)
}

// add appends one line to the log of session id, if it is tracked.
func (l *SessionLogs) add(id, line string) {
	l.addFunc(id, func() string { return line })
}

// addFunc is add with the line made by line, called only if id is
// tracked (a record about an unknown session is not formatted).
func (l *SessionLogs) addFunc(id string, makeLine func() string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sl, ok := l.byID[id]
	if !ok {
		return
	}
	line := makeLine()
	l.seq++
	sl.used = l.seq
	l.pushLocked(sl, line)
	if sl.file == nil {
		return
	}
	if sl.fileBytes+int64(len(line))+1 > 2*int64(l.limits.bytes) {
		l.rewriteLocked(id, sl)
		return
	}
	n, err := sl.file.WriteString(line + "\n")
	sl.fileBytes += int64(n)
	if err != nil {
		l.diskFailedLocked(sl, err)
	}
}

// Read returns the lines of session id numbered since and later. ok is
// false if this node keeps no log of the session (in memory or on disk).
func (l *SessionLogs) Read(id string, since int64) (v apitype.SessionLogs, ok bool) {
	l.mu.Lock()
	sl, ok := l.byID[id]
	if ok {
		v = sl.slice(since)
	}
	l.mu.Unlock()
	if ok || l.dir == "" || !ValidSessionID(id) {
		return v, ok
	}
	data, err := os.ReadFile(l.path(id))
	if err != nil {
		return v, false
	}
	// Not tracked: a session of a previous run, read back as track would
	// (tmp is this call's own: pushLocked needs no lock for it).
	tmp := &sessionLog{}
	for _, line := range splitLines(data) {
		l.pushLocked(tmp, line)
	}
	return tmp.slice(since), true
}

// Problem says why a session log is kept in memory only since the disk
// refused it, "" if none is (or a log file was opened since).
func (l *SessionLogs) Problem() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lastErr == nil {
		return ""
	}
	return fmt.Sprintf("cannot write session logs: %v", l.lastErr)
}

// Close closes the session log files.
func (l *SessionLogs) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sl := range l.byID {
		if sl.file != nil {
			sl.file.Close()
			sl.file = nil
		}
	}
}

func (l *SessionLogs) path(id string) string { return filepath.Join(l.dir, id+".log") }

// pushLocked appends line to sl in memory, dropping the oldest lines over
// the bounds.
func (l *SessionLogs) pushLocked(sl *sessionLog, line string) {
	if len(line) >= l.limits.bytes {
		line = line[:l.limits.bytes-len(" …(cut)")-1] + " …(cut)"
	}
	sl.lines = append(sl.lines, line)
	sl.bytes += len(line) + 1
	sl.next++
	drop := 0
	for len(sl.lines)-drop > l.limits.lines || sl.bytes > l.limits.bytes {
		sl.bytes -= len(sl.lines[drop]) + 1
		drop++
	}
	if drop > 0 {
		sl.lines = slices.Delete(sl.lines, 0, drop)
		sl.dropped += int64(drop)
	}
}

// slice returns the lines numbered since and later.
func (sl *sessionLog) slice(since int64) apitype.SessionLogs {
	first := sl.next - int64(len(sl.lines))
	v := apitype.SessionLogs{First: max(first, min(since, sl.next)), Next: sl.next, Lines: []string{}}
	if since < first {
		v.Dropped = first - max(since, 0)
	}
	v.Lines = append(v.Lines, sl.lines[v.First-first:]...)
	return v
}

// rewriteLocked replaces the file of session id, grown past its bound,
// with a marker and the lines kept in memory.
func (l *SessionLogs) rewriteLocked(id string, sl *sessionLog) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "(%d earlier lines dropped)\n", sl.next-int64(len(sl.lines)))
	for _, line := range sl.lines {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	sl.file.Close()
	sl.file = nil
	tmp := l.path(id) + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		l.diskFailedLocked(sl, err)
		return
	}
	if err := os.Rename(tmp, l.path(id)); err != nil {
		l.diskFailedLocked(sl, err)
		return
	}
	f, err := os.OpenFile(l.path(id), os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		l.diskFailedLocked(sl, err)
		return
	}
	sl.file, sl.fileBytes = f, int64(b.Len())
}

// diskFailedLocked stops writing sl to disk after err, saying so in the log
// itself (logging it would come back here).
func (l *SessionLogs) diskFailedLocked(sl *sessionLog, err error) {
	l.Failures.Add(1)
	l.lastErr = err
	if sl.file != nil {
		sl.file.Close()
		sl.file = nil
	}
	l.pushLocked(sl, fmt.Sprintf("(this log is kept in memory only from here: %v)", err))
}

// evictLocked forgets the least recently written session in memory.
func (l *SessionLogs) evictLocked() {
	var oldest string
	for id, sl := range l.byID {
		if oldest == "" || sl.used < l.byID[oldest].used {
			oldest = id
		}
	}
	if sl := l.byID[oldest]; sl != nil && sl.file != nil {
		sl.file.Close()
	}
	delete(l.byID, oldest)
}

// pruneFilesLocked removes the least recently written log files over the
// bound, never keep's.
func (l *SessionLogs) pruneFilesLocked(keep string) {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return
	}
	type file struct {
		id  string
		mod time.Time
	}
	var files []file
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || !ValidSessionID(id) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		files = append(files, file{id, info.ModTime()})
	}
	if len(files) <= l.limits.files {
		return
	}
	slices.SortFunc(files, func(a, b file) int { return a.mod.Compare(b.mod) })
	for _, f := range files[:len(files)-l.limits.files] {
		if f.id == keep {
			continue
		}
		if sl, ok := l.byID[f.id]; ok && sl.file != nil {
			sl.file.Close()
			sl.file = nil
		}
		if err := os.Remove(l.path(f.id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
	}
}

func splitLines(data []byte) []string {
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// sessionLogHandler is a slog.Handler that passes every record on to next
// unchanged and also writes, to logs, the records about one session: those
// with a top-level "session" attribute, in the record or added with
// Logger.With.
type sessionLogHandler struct {
	next    slog.Handler
	logs    *SessionLogs
	session string      // from WithAttrs; "" if none
	attrs   []slog.Attr // added with WithAttrs, group prefixes applied
	group   string      // the open groups, "a.b." ("" for none)
}

// NewSessionLogHandler wraps next.
func NewSessionLogHandler(next slog.Handler, logs *SessionLogs) slog.Handler {
	return &sessionLogHandler{next: next, logs: logs}
}

// Enabled reports whether next handles records of level, or level is info
// or above: a session's log keeps those whatever log.level says, so that
// a daemon logging only warnings still shows how each session went.
func (h *sessionLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= slog.LevelInfo || h.next.Enabled(ctx, level)
}

// Handle keeps r if it is about a session, then passes it on if next
// handles its level.
func (h *sessionLogHandler) Handle(ctx context.Context, r slog.Record) error {
	id := h.session
	if id == "" && h.group == "" {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "session" {
				id = a.Value.Resolve().String()
				return false
			}
			return true
		})
	}
	passOn := h.next.Enabled(ctx, r.Level)
	if id != "" && (passOn || r.Level >= slog.LevelInfo) {
		h.logs.addFunc(id, func() string { return h.format(r) })
	}
	if !passOn {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a handler whose records carry as.
func (h *sessionLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.next = h.next.WithAttrs(as)
	h2.attrs = slices.Clip(h.attrs)
	for _, a := range as {
		if a.Key == "session" && h.group == "" {
			h2.session = a.Value.Resolve().String()
			continue
		}
		h2.attrs = append(h2.attrs, slog.Attr{Key: h.group + a.Key, Value: a.Value})
	}
	return &h2
}

// WithGroup returns a handler whose further attributes are in group name.
func (h *sessionLogHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.next = h.next.WithGroup(name)
	h2.group = h.group + name + "."
	return &h2
}

// format renders r as one line: time, level, message, then key=value
// pairs (groups flattened with dots), without the session attribute.
func (h *sessionLogHandler) format(r slog.Record) string {
	var b strings.Builder
	b.WriteString(r.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteByte(' ')
	b.WriteString(r.Level.String())
	b.WriteByte(' ')
	b.WriteString(strings.ReplaceAll(r.Message, "\n", `\n`))
	for _, a := range h.attrs {
		writeAttr(&b, "", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		if !(a.Key == "session" && h.group == "") {
			writeAttr(&b, h.group, a)
		}
		return true
	})
	return b.String()
}

func writeAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			writeAttr(b, prefix, g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	s := v.String()
	if s == "" || strings.ContainsAny(s, " \t\n\"=") || !strconv.CanBackquote(s) {
		s = strconv.Quote(s)
	}
	b.WriteByte(' ')
	b.WriteString(prefix + a.Key)
	b.WriteByte('=')
	b.WriteString(s)
}
