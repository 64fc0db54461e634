package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benbjohnson/clock"
)

// locateByScan is the definition the grid must agree with: the smallest by
// area of the zones containing the point, ties going to the zone created
// first.
func locateByScan(zones []*Zone, x, y int) *Zone {
	var best *Zone
	var bestArea int64
	for _, z := range zones {
		if z.Contains(x, y) {
			if a := z.area(); best == nil || a < bestArea {
				best, bestArea = z, a
			}
		}
	}
	return best
}

// TestZoneGrid compares the grid with a scan of every zone on random
// plans: rooms in a grid, overlapping and nested zones, zones of equal
// area, zones far apart, huge zones, single points, negative coordinates;
// and on points inside, on the edges of and outside the zones. One grid is
// built again for each plan, as a home's is after its zones changed, on
// every zone of the plan or on the first ones, the others added after it
// was built (as zones created since).
func TestZoneGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var g zoneGrid
	for round := range 400 {
		var zones []*Zone
		span := []int{50, 1000, 1_000_000, MaxCoordinate}[r.IntN(4)]
		off := []int{0, span / 2}[r.IntN(2)] // plans reaching below 0
		for i := range 1 + r.IntN(120) {
			x, y := r.IntN(span)-off, r.IntN(span)-off
			w, h := r.IntN(span/10+1), r.IntN(span/10+1)
			switch r.IntN(10) {
			case 0:
				w, h = span-x, span-y // huge
			case 1:
				w, h = 0, 0 // a point
			case 2:
				w, h = 10, 10 // equal areas
			}
			zones = append(zones, &Zone{ID: string(rune('a' + i)), LeftX: x, TopY: y, RightX: min(x+w, MaxCoordinate), BottomY: min(y+h, MaxCoordinate)})
		}
		k := len(zones)
		if r.IntN(2) == 0 {
			k = r.IntN(len(zones) + 1)
		}
		g.build(zones[:k])
		for i := k; i < len(zones); i++ {
			g.add(zones[i], i)
		}
		found := 0
		for range 2000 {
			var x, y int
			if z := zones[r.IntN(len(zones))]; r.IntN(2) == 0 {
				// On or next to a zone's edges, or inside it.
				x = []int{z.LeftX, z.RightX, z.LeftX - 1, z.RightX + 1, (z.LeftX + z.RightX) / 2}[r.IntN(5)]
				y = []int{z.TopY, z.BottomY, z.TopY - 1, z.BottomY + 1, (z.TopY + z.BottomY) / 2}[r.IntN(5)]
			} else {
				x, y = r.IntN(span+2)-1-off, r.IntN(span+2)-1-off
			}
			want := locateByScan(zones, x, y)
			if got := g.locate(x, y); got != want {
				t.Fatalf("round %d: locate(%d, %d) = %v, want %v", round, x, y, got, want)
			}
			if want != nil {
				found++
			}
		}
		if found == 0 {
			t.Fatalf("round %d: no point fell in a zone", round)
		}
	}
	g.build(nil)
	if z := g.locate(0, 0); z != nil {
		t.Fatalf("empty plan: locate = %v", z)
	}
}

// TestZoneGridLetGo: a home's grid is made once it has more than
// smallPlan zones and a point is located, and let go (with the zones it
// filed, deleted ones among them) once the home is back to smallPlan zones
// or fewer, by deletions or a Reset; locating still finds the same zones
// all along.
func TestZoneGridLetGo(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock()})
	place := func() {
		t.Helper()
		x, y := 5, 5
		if _, err := h.UpdatePerson("p", PersonUpdate{PositionX: &x, PositionY: &y}); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		got, want := h.locateLocked(x, y), locateByScan(h.zones.all(), x, y)
		h.mu.Unlock()
		if got != want {
			t.Fatalf("%d zones: (5, 5) located in %v, want %v", len(h.Zones()), got, want)
		}
	}
	if _, err := h.CreatePerson(PersonSpec{ID: "p", Type: "Man"}); err != nil {
		t.Fatal(err)
	}
	for i := range smallPlan + 4 {
		if _, err := h.CreateZone(ZoneSpec{ID: fmt.Sprint("z", i), RightX: 10 + i, BottomY: 10 + i}); err != nil {
			t.Fatal(err)
		}
	}
	place()
	if h.grid == nil {
		t.Fatalf("%d zones and a point located: no grid", smallPlan+4)
	}
	for i := range 4 {
		if err := h.DeleteZone(fmt.Sprint("z", i)); err != nil {
			t.Fatal(err)
		}
	}
	place()
	if h.grid != nil {
		t.Fatalf("%d zones: the grid is kept, with %d zones filed", smallPlan, len(h.grid.filed)+len(h.grid.wide))
	}
	if _, err := h.CreateZone(ZoneSpec{ID: "again", LeftX: 2, TopY: 2, RightX: 6, BottomY: 6}); err != nil {
		t.Fatal(err)
	}
	place()
	if h.grid == nil || !h.grid.valid {
		t.Fatalf("%d zones again and a point located: no valid grid", smallPlan+1)
	}
	h.Reset()
	if h.grid != nil {
		t.Fatalf("after Reset: the grid is kept, with %d zones filed", len(h.grid.filed)+len(h.grid.wide))
	}
}

// TestZoneGridKeepsAddedZones builds a home room by room, a zone and then
// a device in it, and checks that the grid is not rebuilt for every zone
// (it keeps the zones created since it was built apart, up to the square
// root of the zones, then is rebuilt), and that every device is in the
// zone a scan finds, after each room and after zones nested in rooms
// (smaller, created later) and of equal area.
func TestZoneGridKeepsAddedZones(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock()})
	builds, most := 0, 0
	var last *zoneGrid
	lastAdded := 0
	for i := range 600 {
		x, y := (i%30)*100, (i/30)*100
		spec := ZoneSpec{ID: fmt.Sprint("z", i), LeftX: x, TopY: y, RightX: x + 99, BottomY: y + 99}
		if i%7 == 3 { // a room inside the one before, or one of its size over it (a tie: the one before holds what they share)
			spec.LeftX, spec.TopY = x-100+10, y+10
			spec.RightX, spec.BottomY = spec.LeftX+[]int{20, 99}[i%2], spec.TopY+[]int{20, 99}[i%2]
		}
		if _, err := h.CreateZone(spec); err != nil {
			t.Fatal(err)
		}
		px, py := spec.LeftX+i%20, spec.TopY+i%11
		if _, err := h.CreateDevice(DeviceSpec{ID: fmt.Sprint("d", i), Type: "Thermometer", PositionX: &px, PositionY: &py}); err != nil {
			t.Fatal(err)
		}
		h.mu.Lock()
		if g := h.grid; g != nil {
			if g != last || len(g.added) < lastAdded {
				builds++
			}
			last, lastAdded = g, len(g.added)
			most = max(most, len(g.added))
			if bound := max(smallPlan, isqrt(len(h.zones.all()))); len(g.added) > bound {
				t.Fatalf("%d zones: the grid keeps %d added zones, more than %d", len(h.zones.all()), len(g.added), bound)
			}
		}
		for _, d := range h.devices.all() {
			if want := locateByScan(h.zones.all(), int(d.PositionX), int(d.PositionY)); d.zone != want {
				t.Fatalf("after zone %d: device %s in %v, want %v", i, d.ID, d.zone, want)
			}
		}
		h.mu.Unlock()
	}
	if builds > 40 || most < smallPlan {
		t.Fatalf("600 rooms: the grid was built %d times and kept at most %d added zones", builds, most)
	}
}

// TestCellFileSize: a file has at most per cells a rectangle, and at most
// maxGridCells, whatever the shape of the plan: a plan far wider than high
// (rooms in a row, a corridor of zero height across the coordinates) got
// about the square root of per times n times its width in cells (17 rooms
// in a row across ±MaxCoordinate: 54,000 cells for a grid of one cell a
// room; 1,000 zones of zero height: 1.4 million, past maxGridCells;
// 100,000 of them: 14 million, 56 MB, and as much again while filing).
func TestCellFileSize(t *testing.T) {
	row := func(n, w, h int) func(i int) (l, t, r, b int) {
		return func(i int) (l, t, r, b int) {
			l = -MaxCoordinate + i*(2*MaxCoordinate/n)
			return l, 0, l + w, h
		}
	}
	for _, tt := range []struct {
		name string
		n    int
		rect func(i int) (l, t, r, b int)
	}{
		{"rooms in a row across the coordinates", 17, row(17, 1000, 10)},
		{"zero-height zones in a row", 1000, row(1000, 10, 0)},
		{"a column of rooms", 17, func(i int) (l, t, r, b int) { return 0, -MaxCoordinate + i*1000, 10, -MaxCoordinate + i*1000 + 999 }},
		{"one point", 1, func(int) (l, t, r, b int) { return 5, 5, 5, 5 }},
		{"a huge zone and tiny ones", 100, func(i int) (l, t, r, b int) {
			if i == 0 {
				return -MaxCoordinate, -MaxCoordinate, MaxCoordinate, MaxCoordinate
			}
			return i, i, i + 1, i + 1
		}},
	} {
		for _, per := range []int{1, 4} {
			var f cellFile
			f.file(tt.n, per, tt.rect)
			if got, most := f.nx*f.ny, min(per*tt.n, maxGridCells); got > most || len(f.start) != got+1 {
				t.Errorf("%s, %d a rectangle: %d×%d cells (%d starts), want at most %d", tt.name, per, f.nx, f.ny, len(f.start), most)
			}
			for i := range tt.n { // every rectangle is found where it lies
				l, tp, r, b := tt.rect(i)
				found := slices.Contains(f.wide, int32(i))
				if c, ok := f.cell(l, tp); ok && !found {
					found = slices.Contains(f.at[f.start[c]:f.start[c+1]], int32(i))
				}
				if c, ok := f.cell(r, b); ok && found && !slices.Contains(f.wide, int32(i)) {
					found = slices.Contains(f.at[f.start[c]:f.start[c+1]], int32(i))
				}
				if !found {
					t.Fatalf("%s, %d a rectangle: rectangle %d not filed at its corners", tt.name, per, i)
				}
			}
		}
	}
}
