package lifecycle

// AnswerEnded is how an organization answers, from its record, a control
// message for a session it no longer runs: st is the record's status,
// initiated says whether it initiated the session. An organization that
// missed the end of a session — an Abort lost while it was still examining
// the proposal, a Complete lost on a replaced connection, the initiator of
// a session a participant's restart ended — learns it from the answer to
// its next message, since every waiting organization repeats its last
// message (Accept, Done, heartbeats). Endings are never answered, so two
// ended organizations fall silent.
func AnswerEnded(st Status, initiated bool, msg Msg) (Msg, bool) {
	if msg.Kind.IsEnding() {
		return Msg{}, false
	}
	reply := Msg{From: msg.To, To: msg.From}
	switch {
	case st.Phase == Aborted:
		reply.Kind, reply.Reason = Abort, st.Reason
	case st.Phase == Completed && initiated:
		reply.Kind = Complete
	default:
		return Msg{}, false
	}
	return reply, true
}
