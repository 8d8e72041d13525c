package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/bandit-node/bandit-node/node/apitype"
)

// progressBar draws a session's progress on one line: a bar, step/total, the
// rate and the estimated time left.
type progressBar struct {
	w     io.Writer
	drawn bool
	width int
}

func newProgressBar(w io.Writer) *progressBar { return &progressBar{w: w, width: 30} }

func (b *progressBar) update(s apitype.Session) {
	fmt.Fprintf(b.w, "\r%s\033[K", renderProgress(s, time.Now(), b.width))
	b.drawn = true
}

func (b *progressBar) done() {
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}

// renderProgress formats one progress line as of now.
func renderProgress(s apitype.Session, now time.Time, width int) string {
	p := s.Progress
	if p.Total <= 0 || s.Started == nil {
		return fmt.Sprintf("%s %s", s.ID, s.State)
	}
	frac := min(1, max(0, float64(p.Step)/float64(p.Total)))
	filled := int(frac * float64(width))
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
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
	return fmt.Sprintf("[%s] %d/%d %5.1f%%  %s  ETA %s  %s", bar, p.Step, p.Total, 100*frac, rate, eta, s.State)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
