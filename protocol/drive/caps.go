package drive

import "github.com/bandit-node/bandit-node/protocol"

// MaxSmallMessage is the largest message body a family that declares
// small messages (protocol.Info.SmallMessages) may send: far below a transport's flow-control
// window (yamux starts at 256 KiB), so that a daemon may step such a
// family's messages on the goroutine that read them. A larger message is
// the role's failure, in the simulator as in the daemon.
const MaxSmallMessage = 64 << 10

// Caps is how a family's roles are driven, decided once from the family.
type Caps struct {
	// Ticks: the roles act as time passes, so their driver ticks them
	// every protocol.TickInterval; false for a message-driven family
	// (Info.MessageDriven), whose roles Party.Tick does not call (nor
	// activates).
	Ticks bool
	// Topic: the roles may publish on the session topic
	// (Info.UsesTopic); a daemon joins the topic only then. A topic
	// message from a role of any other family is the role's failure.
	Topic bool
	// SmallMessages: every message is at most MaxSmallMessage bytes and no
	// role keeps a message's body once Step returns, so a daemon may step
	// a message in place, lending the role its read buffer
	// (Info.SmallMessages). A larger message is the role's failure.
	SmallMessages bool
}

// CapsOf decides how family f's roles are driven, from its Info.
func CapsOf(f protocol.Family) Caps {
	info := f.Info()
	return Caps{Ticks: !info.MessageDriven, Topic: info.UsesTopic, SmallMessages: info.SmallMessages}
}
