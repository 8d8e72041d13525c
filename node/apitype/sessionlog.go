package apitype

// SessionLogs is the answer of GET /v0/sessions/{id}/logs: the log lines
// this daemon wrote about one session, oldest first, as text ("time level
// msg key=value ...").
type SessionLogs struct {
	// Lines are the lines numbered from First on.
	Lines []string `json:"lines"`
	// First is the number of Lines[0]; Next the number the next line will
	// get. Ask again with ?since=Next to get only the lines written since.
	First int64 `json:"first"`
	Next  int64 `json:"next"`
	// Dropped counts the lines asked for that the daemon no longer keeps
	// (its bound per session, sessionlog.go).
	Dropped int64 `json:"dropped"`
}
