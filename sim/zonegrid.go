package sim

import "slices"

// zoneGrid finds the zone holding a point without testing every zone: the
// zones are filed in the cells of a grid over the plan (see cellFile), and
// a point is tested against the zones of its cell and the wide ones. It is
// rebuilt on the first lookup after the zones changed, except for zones
// created since it was built, which it keeps apart (see
// Home.zoneAddedLocked).
//
// The cells' zones lie one after the other in one array, each with its
// rectangle: a lookup in a large home, whose grid is cold in the caches,
// reads the cell's bounds and its zones, and no zone but the one it
// returns.
type zoneGrid struct {
	valid bool
	cells cellFile
	filed []gridZone // the cells' zones, as cells.at lists them
	wide  []gridZone // the zones of cells.wide
	added []gridZone // the zones created since the grid was built, in creation order
}

// gridZone is a zone as the grid files it: its rectangle (within
// ±MaxCoordinate), its area and its creation number (its place in
// h.zones.list) to break ties between zones of equal area.
type gridZone struct {
	l, t, r, b int32
	n          int32
	area       int64
	z          *Zone
}

// contains reports whether the zone holds (x, y), edges included, as
// Zone.Contains.
func (e *gridZone) contains(x, y int) bool {
	return int(e.l) <= x && x <= int(e.r) && int(e.t) <= y && y <= int(e.b)
}

const (
	maxZoneCells = 64
	maxGridCells = 1 << 20
)

// build files zones, in about one cell a zone rather than the four of
// nearPairs' file: a lookup may test a few more zones of its cell, but a
// zone is filed in fewer cells (the day benchmarks' 5,000 rooms in a
// regular grid: one each rather than four, 0.2 MB in all rather than
// 0.9), so that the file stays in a core's cache, where the moves of a
// 100,000-device home's persons (2.9 million lookups a simulated day, at
// random places) missed it: about 2 % of that day (four rounds in turn).
func (g *zoneGrid) build(zones []*Zone) {
	g.valid = true
	clear(g.filed)
	clear(g.wide)
	clear(g.added)
	g.filed, g.wide, g.added = g.filed[:0], g.wide[:0], g.added[:0]
	g.cells.file(len(zones), 1, func(i int) (l, t, r, b int) {
		z := zones[i]
		return z.LeftX, z.TopY, z.RightX, z.BottomY
	})
	for _, i := range g.cells.at {
		g.filed = append(g.filed, entryOf(zones[i], i))
	}
	for _, i := range g.cells.wide {
		g.wide = append(g.wide, entryOf(zones[i], i))
	}
}

// entryOf returns z, the n-th zone created, as the grid files it.
func entryOf(z *Zone, n int32) gridZone {
	return gridZone{l: int32(z.LeftX), t: int32(z.TopY), r: int32(z.RightX), b: int32(z.BottomY), n: n, area: z.area(), z: z}
}

// add keeps z, the n-th zone created and the last, apart from the zones
// filed, to be tested at every lookup until the grid is rebuilt.
func (g *zoneGrid) add(z *Zone, n int) { g.added = append(g.added, entryOf(z, int32(n))) }

// locate returns the zone holding (x, y) as [Home.locateLocked] defines it.
func (g *zoneGrid) locate(x, y int) *Zone {
	var best *gridZone
	pick := func(list []gridZone) {
		for i := range list {
			e := &list[i]
			if e.contains(x, y) && (best == nil || e.area < best.area || e.area == best.area && e.n < best.n) {
				best = e
			}
		}
	}
	if c, ok := g.cells.cell(x, y); ok {
		pick(g.filed[g.cells.start[c]:g.cells.start[c+1]])
	}
	pick(g.wide)
	pick(g.added)
	if best == nil {
		return nil
	}
	return best.z
}

// cellFile files rectangles in the cells of a grid over their bounding
// box, a given number of cells a rectangle (at most maxGridCells), square-ish: a
// rectangle is listed in every cell it covers, or, covering more than
// maxZoneCells, among the wide ones, so that the file stays small whatever
// the rectangles look like. The cells' lists lie one after the other in one
// array. Not safe for concurrent use.
type cellFile struct {
	minX, minY   int
	cellW, cellH int
	nx, ny       int
	start        []int32 // cell c's rectangles are at[start[c]:start[c+1]]
	at           []int32 // the rectangles' indexes, cell after cell, increasing in each
	wide         []int32 // the wide rectangles' indexes, increasing
}

// file files the n rectangles that rect gives (edges included), in about
// per cells a rectangle, replacing what f held and reusing its arrays.
func (f *cellFile) file(n, per int, rect func(i int) (l, t, r, b int)) {
	f.start, f.at, f.wide = f.start[:0], f.at[:0], f.wide[:0]
	f.nx, f.ny = 0, 0
	if n == 0 {
		return
	}
	minX, minY, maxX, maxY := rect(0)
	for i := 1; i < n; i++ {
		l, t, r, b := rect(i)
		minX, minY, maxX, maxY = min(minX, l), min(minY, t), max(maxX, r), max(maxY, b)
	}
	f.minX, f.minY = minX, minY
	w, h := maxX-minX+1, maxY-minY+1
	cells := min(per*n, maxGridCells)
	// Square-ish cells, but no more columns than cells: a plan far wider
	// than high would get about the square root of cells times its width.
	nx := max(1, min(w, cells, isqrt(cells*w/max(h, 1))))
	ny := max(1, min(h, cells/nx))
	f.cellW, f.cellH = (w+nx-1)/nx, (h+ny-1)/ny
	f.nx, f.ny = (w+f.cellW-1)/f.cellW, (h+f.cellH-1)/f.cellH
	cells = f.nx * f.ny
	if cap(f.start) > cells {
		f.start = f.start[:cells+1]
		clear(f.start)
	} else {
		f.start = make([]int32, cells+1)
	}
	// Two passes: count each cell's rectangles, then file them.
	isWide := make([]bool, n)
	each := func(fn func(i, c int)) {
		for i := range n {
			if isWide[i] {
				continue
			}
			x0, x1, y0, y1 := f.span(rect(i))
			if (x1-x0+1)*(y1-y0+1) > maxZoneCells {
				f.wide = append(f.wide, int32(i))
				isWide[i] = true
				continue
			}
			for y := y0; y <= y1; y++ {
				for x := x0; x <= x1; x++ {
					fn(i, y*f.nx+x)
				}
			}
		}
	}
	each(func(_, c int) { f.start[c+1]++ })
	for c := range cells {
		f.start[c+1] += f.start[c]
	}
	if k := int(f.start[cells]); cap(f.at) >= k {
		f.at = f.at[:k]
	} else {
		f.at = make([]int32, k)
	}
	next := slices.Clone(f.start[:cells])
	each(func(i, c int) { f.at[next[c]] = int32(i); next[c]++ })
}

// span returns the columns and rows of the cells a rectangle of the file
// covers.
func (f *cellFile) span(l, t, r, b int) (x0, x1, y0, y1 int) {
	return (l - f.minX) / f.cellW, (r - f.minX) / f.cellW, (t - f.minY) / f.cellH, (b - f.minY) / f.cellH
}

// cell returns the cell holding (x, y), false outside the file's box.
func (f *cellFile) cell(x, y int) (int, bool) {
	cx, cy := x-f.minX, y-f.minY
	if cx < 0 || cy < 0 || f.nx == 0 || cx/f.cellW >= f.nx || cy/f.cellH >= f.ny {
		return 0, false
	}
	return f.index(x, y), true
}

// index returns the cell holding (x, y), a point of the file's box.
func (f *cellFile) index(x, y int) int { return (y-f.minY)/f.cellH*f.nx + (x-f.minX)/f.cellW }

// isqrt returns the integer square root of n >= 0.
func isqrt(n int) int {
	r := 0
	for b := 1 << 30; b > 0; b >>= 1 {
		if c := r + b; c*c <= n {
			r = c
		}
	}
	return r
}
