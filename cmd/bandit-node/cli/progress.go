package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// progressPlainEvery is how often progress is written as plain lines where
// the output is not a terminal (a log file, a pipe): at most one line per
// period, plus changes of state and the last line.
const progressPlainEvery = 5 * time.Second

// progressTTYEvery bounds the redraws of a progress line on a terminal.
const progressTTYEvery = 200 * time.Millisecond

// progressLine shows one changing status line. On a terminal it is redrawn
// in place with \r and ESC[K; anywhere else every line shown is a plain line
// of its own, at most one per progressPlainEvery, so that a script's log gets
// a readable trace instead of control characters.
type progressLine struct {
	w       io.Writer
	tty     bool
	now     func() time.Time
	last    time.Time // when a line was last written
	drawn   bool      // whether a line was written
	pending string    // the newest line held back by the rate, if any
}

func newProgressLine(w io.Writer) *progressLine {
	return &progressLine{w: w, tty: isTerminal(w), now: time.Now}
}

// isTerminal reports whether w is a terminal (a character device), where a
// line may be redrawn in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// show offers the current status line. It is written if it is the first, if
// force is set (a change of state, the last step) or if the rate allows;
// otherwise it is held back until the next line or done.
func (p *progressLine) show(line string, force bool) {
	now := p.now()
	every := progressPlainEvery
	if p.tty {
		every = progressTTYEvery
	}
	if p.drawn && !force && now.Sub(p.last) < every {
		p.pending = line
		return
	}
	p.write(line)
	p.last = now
}

func (p *progressLine) write(line string) {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.drawn, p.pending = true, ""
}

// done writes the line held back, if any, and ends the line on a terminal.
func (p *progressLine) done() {
	if p.pending != "" {
		p.write(p.pending)
	}
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
	}
}

// progressBar shows a session's progress: on a terminal a bar, step/total,
// the rate and the estimated time left on one line; elsewhere the same
// without the bar, as plain lines (see progressLine).
type progressBar struct {
	line  *progressLine
	width int
	state string
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{line: newProgressLine(w), width: 30}
}

func (b *progressBar) update(s apitype.Session) {
	force := s.State != b.state || s.State == apitype.StateCompleted || s.State == apitype.StateAborted
	b.state = s.State
	width := b.width
	if !b.line.tty {
		width = 0
	}
	b.line.show(renderProgress(s, b.line.now(), width), force)
}

func (b *progressBar) done() { b.line.done() }

// renderProgress formats one progress line as of now, with a bar of width
// characters unless width is 0.
func renderProgress(s apitype.Session, now time.Time, width int) string {
	p := s.Progress
	if p.Total <= 0 || s.Started == nil {
		return fmt.Sprintf("%s %s", s.ID, s.State)
	}
	frac := min(1, max(0, float64(p.Step)/float64(p.Total)))
	bar := ""
	if width > 0 {
		filled := int(frac * float64(width))
		bar = "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] "
	}
	end := now
	if s.Finished != nil {
		end = *s.Finished
	}
	elapsed := end.Sub(*s.Started).Seconds()
	rate, eta := "-", "-"
	if elapsed > 0 && p.Step > 0 {
		r := float64(p.Step) / elapsed
		rate = fmt.Sprintf("%.1f/s", r)
		if p.Step < p.Total {
			eta = time.Duration(float64(p.Total-p.Step) / r * float64(time.Second)).Round(time.Second).String()
		} else {
			eta = "0s"
		}
	}
	return fmt.Sprintf("%s%d/%d %5.1f%%  %s  ETA %s  %s", bar, p.Step, p.Total, 100*frac, rate, eta, s.State)
}
