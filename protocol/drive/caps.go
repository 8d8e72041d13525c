package drive

import "github.com/bandit-node/bandit-node/protocol"

// MaxSmallMessage is the largest message body a family that declares
// protocol.SmallMessages may send: far below a transport's flow-control
// window (yamux starts at 256 KiB), so that a daemon may step such a
// family's messages on the goroutine that read them. A larger message is
// the role's failure, in the simulator as in the daemon.
const MaxSmallMessage = 64 << 10

// Caps is how a family's roles are driven, decided once from the family.
type Caps struct {
	// Ticks: the roles act as time passes, so their driver ticks them
	// every protocol.TickInterval; false for a protocol.MessageDriven
	// family, whose roles Party.Tick does not call (nor paces).
	Ticks bool
	// Topic: the roles may publish on the session topic
	// (protocol.TopicUser); a daemon joins the topic only then. A topic
	// message from a role of any other family is the role's failure.
	Topic bool
	// SmallMessages: every message is at most MaxSmallMessage bytes and no
	// role keeps a message's body once Step returns, so a daemon may step
	// a message in place, lending the role its read buffer
	// (protocol.SmallMessages). A larger message is the role's failure.
	SmallMessages bool
}

// CapsOf decides how family f's roles are driven.
func CapsOf(f protocol.Family) Caps {
	var c Caps
	md, ok := f.(protocol.MessageDriven)
	c.Ticks = !ok || !md.MessageDriven()
	if tu, ok := f.(protocol.TopicUser); ok {
		c.Topic = tu.UsesTopic()
	}
	if sm, ok := f.(protocol.SmallMessages); ok {
		c.SmallMessages = sm.SmallMessages()
	}
	return c
}
