package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a bar on stderr while the simulation runs, when stderr is
// a terminal: how far simulated time has come, its date and how much faster
// than real time it goes. Elsewhere it stays silent, so that logs and
// outputs do not depend on the machine's speed.
type progress struct {
	w        io.Writer
	on       bool
	start    time.Time
	total    time.Duration
	began    time.Time
	lastDraw time.Time
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, start time.Time, total time.Duration) *progress {
	now := time.Now()
	return &progress{w: w, on: isTerminal(w) && total > 0, start: start, total: total, began: now}
}

// show redraws the bar, at most ten times a real second: the share of the
// run done, the simulated time reached, the events written so far (with
// -events) and the speed.
func (p *progress) show(done time.Duration, at time.Time, events int) {
	if !p.on {
		return
	}
	now := time.Now()
	if now.Sub(p.lastDraw) < 100*time.Millisecond && done < p.total {
		return
	}
	p.lastDraw = now
	const width = 30
	frac := float64(done) / float64(p.total)
	n := int(frac * width)
	speed := float64(done) / float64(max(now.Sub(p.began), time.Millisecond))
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%%  %s  %d events  %.0f× real time ", strings.Repeat("=", n), strings.Repeat(" ", width-n),
		100*frac, at.Format("2006-01-02 15:04"), events, speed)
}

// finish ends the bar's line.
func (p *progress) finish() {
	if p.on {
		fmt.Fprintln(p.w)
	}
}
