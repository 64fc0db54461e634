package store

import (
	"testing"
	"time"
)

// TestSnapshotPause: snapshots come every SnapshotEvery while they are
// quick, and take at most a tenth of the time once they are not: a large
// home's snapshots (changes wait while one captures the state) came every
// second whatever they took.
func TestSnapshotPause(t *testing.T) {
	for _, tt := range []struct {
		every, took, want time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 30 * time.Millisecond, 970 * time.Millisecond},
		{time.Second, 100 * time.Millisecond, 900 * time.Millisecond},
		{time.Second, 200 * time.Millisecond, 1800 * time.Millisecond},
		{time.Second, 2 * time.Second, 18 * time.Second},
		{time.Hour, time.Minute, 59 * time.Minute},
	} {
		if got := snapshotPause(tt.every, tt.took); got != tt.want {
			t.Errorf("snapshotPause(%v, %v) = %v, want %v", tt.every, tt.took, got, tt.want)
		}
	}
}
