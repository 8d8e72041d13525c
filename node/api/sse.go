package api

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// ssePing is how often an idle event stream writes a comment, so that a
// proxy or a client's read timeout keeps it open and a gone client is
// noticed.
const ssePing = 15 * time.Second

// serveEvents streams the node's events as Server-Sent Events: each an
// "id" (its number), an "event" (its kind) and a "data" line (its JSON).
// A client resumes after the event numbered N with the Last-Event-ID
// header (as an EventSource does) or ?since=N (since=0: every event the
// node still keeps); without either, the stream starts with the next event.
// When events after the cursor are no longer kept, a "lost" event says so
// before the ones that are: the client should read the state again (GET
// /v0/sessions, /v0/peers). The write deadline is moved before every write,
// so the stream outlives the server's WriteTimeout.
func (s *server) serveEvents(w http.ResponseWriter, r *http.Request) {
	hub := s.b.Events()
	cursor := r.Header.Get("Last-Event-ID")
	if v := r.URL.Query().Get("since"); v != "" {
		cursor = v
	}
	var seq uint64
	if cursor == "" {
		seq = hub.Last()
	} else {
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "request.invalid", fmt.Errorf("event cursor %q: want an event number, 0 or more", cursor))
			return
		}
		seq = n
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	ping := time.NewTicker(ssePing)
	defer ping.Stop()
	for {
		evs, lost, wake := hub.Since(seq)
		rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
		if lost {
			fmt.Fprintf(w, "event: lost\ndata: {\"after\":%d}\n\n", seq)
		}
		for _, e := range evs {
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, e.Data)
			seq = e.Seq
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-ping.C:
			rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
		}
	}
}
