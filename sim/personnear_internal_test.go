package sim

import (
	"fmt"
	"testing"
	"time"
)

// TestPersonNearSkipsEmptyZone checks that a medical device of a zone
// without persons, in a home that counts its persons by zone, does not walk
// the home's persons: relocating every device after a zone change walked
// them once for each medical device, O(devices × persons) a change. The
// test makes a person's location disagree with the counts behind the
// home's back: a walk would find that person, the count does not.
func TestPersonNearSkipsEmptyZone(t *testing.T) {
	h, err := New(Config{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateZone(ZoneSpec{ID: "a", RightX: 99, BottomY: 99}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateZone(ZoneSpec{ID: "b", LeftX: 100, RightX: 199, BottomY: 99}); err != nil {
		t.Fatal(err)
	}
	for i := range scanned + 1 {
		x, y := 10, 10
		if _, err := h.CreatePerson(PersonSpec{ID: fmt.Sprint("p", i), Type: "Man", PositionX: &x, PositionY: &y}); err != nil {
			t.Fatal(err)
		}
	}
	x, y := 150, 50
	if _, err := h.CreateDevice(DeviceSpec{ID: "scale", Type: "BathroomScale", PositionX: &x, PositionY: &y}); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.countingPersonsLocked() {
		t.Fatalf("a home of %d persons does not count them by zone", scanned+1)
	}
	d, _ := h.devices.get("scale")
	last := h.persons.all()[len(h.persons.all())-1]
	last.Location, last.PositionX, last.PositionY = "b", 150, 50 // uncounted
	c := h.contextLocked(d, false)
	defer h.releaseContextLocked(c)
	if got := c.personNear(1e6); got != "" {
		t.Errorf("personNear in a zone counted empty = %q, want \"\" (without walking the persons)", got)
	}
}
