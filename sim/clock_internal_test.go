package sim

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestWallUntil checks that wallUntil returns the first wall instant at
// which the clock reads at least the target: the clock reads >= at there,
// and < at one nanosecond before.
func TestWallUntil(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 100000 {
		c := simClock{start: r.Int64N(1e12), elapsed: r.Int64N(1e6), anchor: anchor, factor: 1 + r.Int64N(MaxFactor)}
		if r.IntN(4) == 0 {
			c.factor = 1 + r.Int64N(100)
		}
		at := c.start + c.elapsed + 1 + r.Int64N(1e7)
		w := c.wallUntil(at)
		if got := c.nowMillis(w); got < at {
			t.Fatalf("%+v: clock at wallUntil(%d) reads %d", c, at, got)
		}
		if got := c.nowMillis(w.Add(-time.Nanosecond)); got >= at {
			t.Fatalf("%+v: clock 1 ns before wallUntil(%d) already reads %d", c, at, got)
		}
	}
}
