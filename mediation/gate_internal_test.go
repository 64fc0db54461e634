package mediation

import (
	"sync"
	"testing"
)

// TestStripeFold: the calls ended and the messages emitted stay exact when
// the halves of a stripe's done word fold over, concurrently too.
func TestStripeFold(t *testing.T) {
	var s compStripe
	// Start just below a fold of both halves.
	s.done.Store(uint64(fold-3) | uint64(fold-5)<<32)
	s.endFold.Store(7 * fold)
	s.outFold.Store(3 * fold)
	wantEnded, wantOut := uint64(7*fold+fold-3), uint64(3*fold+fold-5)
	const goroutines, each = 4, 1000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				s.enter.Add(1)
				s.end(uint64((g + i) % 3))
			}
		})
	}
	wg.Wait()
	for g := range goroutines {
		for i := range each {
			wantOut += uint64((g + i) % 3)
		}
	}
	wantEnded += goroutines * each
	ended, out := s.counts()
	if ended != wantEnded || out != wantOut {
		t.Errorf("counts = %d ended, %d emitted; want %d, %d", ended, out, wantEnded, wantOut)
	}
	if e := s.ended(); e != wantEnded {
		t.Errorf("ended = %d, want %d", e, wantEnded)
	}
	if lo, hi := uint32(s.done.Load()), s.done.Load()>>32; lo >= fold || hi >= fold {
		t.Errorf("done halves %d and %d, want both below %d", lo, hi, uint64(fold))
	}
	// A huge number of emits in one call goes to the fold directly.
	s.end(3 * fold)
	if _, out2 := s.counts(); out2 != wantOut+3*fold {
		t.Errorf("emitted = %d after a call emitting 3*2^31, want %d", out2, wantOut+3*fold)
	}
}

// TestGateBusy: a gate is busy exactly while a call it let in has not
// ended.
func TestGateBusy(t *testing.T) {
	g := newGate()
	c := &comp{g: g}
	r := &run{stripe: 1}
	if g.busy() {
		t.Fatal("a new gate is busy")
	}
	s := c.acquire(r)
	if !g.busy() {
		t.Fatal("not busy with a call in progress")
	}
	c.release(s, 2)
	if g.busy() {
		t.Fatal("busy after the call ended")
	}
	s = c.acquire(r)
	c.turnBack(s)
	if g.busy() {
		t.Fatal("busy after a call turned back")
	}
	if in, out, _, _ := g.counts(); in != 1 || out != 2 {
		t.Errorf("counts = %d in, %d out; want 1, 2", in, out)
	}
}
