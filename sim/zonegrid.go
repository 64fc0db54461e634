package sim

// zoneGrid finds the zone holding a point without testing every zone: the
// plan's bounding box is cut into about four cells per zone, and each cell
// lists the zones overlapping it. A zone overlapping more than
// maxZoneCells cells is kept in a list tested for every point instead, so
// the grid stays small whatever the zones look like. It is rebuilt on the
// first lookup after the zones changed.
//
// The cells' lists lie one after the other in one array, each zone with
// its rectangle: a lookup in a large home, whose grid is cold in the
// caches, reads the cell's bounds and its list, and no zone but the one it
// returns.
type zoneGrid struct {
	valid        bool
	minX, minY   int
	cellW, cellH int
	nx, ny       int
	start        []int32    // cell c's zones are filed[start[c]:start[c+1]]
	filed        []gridZone // the cells' zones, cell after cell
	wide         []gridZone
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

func (g *zoneGrid) build(zones []*Zone) {
	g.valid = true
	clear(g.filed)
	clear(g.wide)
	g.start, g.filed, g.wide = g.start[:0], g.filed[:0], g.wide[:0]
	g.nx, g.ny = 0, 0
	if len(zones) == 0 {
		return
	}
	minX, minY, maxX, maxY := zones[0].LeftX, zones[0].TopY, zones[0].RightX, zones[0].BottomY
	for _, z := range zones[1:] {
		minX, minY = min(minX, z.LeftX), min(minY, z.TopY)
		maxX, maxY = max(maxX, z.RightX), max(maxY, z.BottomY)
	}
	g.minX, g.minY = minX, minY
	g.cellW, g.cellH, g.nx, g.ny = gridCells(maxX-minX+1, maxY-minY+1, len(zones))
	cells := g.nx * g.ny
	if cap(g.start) > cells {
		g.start = g.start[:cells+1]
		clear(g.start)
	} else {
		g.start = make([]int32, cells+1)
	}
	// Two passes over the zones: count each cell's, then file them.
	spans := func(z *Zone) (x0, x1, y0, y1 int, wide bool) {
		x0, x1 = (z.LeftX-minX)/g.cellW, (z.RightX-minX)/g.cellW
		y0, y1 = (z.TopY-minY)/g.cellH, (z.BottomY-minY)/g.cellH
		return x0, x1, y0, y1, (x1-x0+1)*(y1-y0+1) > maxZoneCells
	}
	for _, z := range zones {
		x0, x1, y0, y1, wide := spans(z)
		if wide {
			continue
		}
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				g.start[y*g.nx+x+1]++
			}
		}
	}
	for c := range cells {
		g.start[c+1] += g.start[c]
	}
	if k := int(g.start[cells]); cap(g.filed) >= k {
		g.filed = g.filed[:k]
	} else {
		g.filed = make([]gridZone, k)
	}
	next := make([]int32, cells)
	copy(next, g.start)
	for i, z := range zones {
		e := gridZone{l: int32(z.LeftX), t: int32(z.TopY), r: int32(z.RightX), b: int32(z.BottomY), n: int32(i), area: z.area(), z: z}
		x0, x1, y0, y1, wide := spans(z)
		if wide {
			g.wide = append(g.wide, e)
			continue
		}
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				c := y*g.nx + x
				g.filed[next[c]] = e
				next[c]++
			}
		}
	}
}

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
	cx, cy := x-g.minX, y-g.minY
	if cx >= 0 && cy >= 0 && cx/max(g.cellW, 1) < g.nx && cy/max(g.cellH, 1) < g.ny {
		c := cy/g.cellH*g.nx + cx/g.cellW
		pick(g.filed[g.start[c]:g.start[c+1]])
	}
	pick(g.wide)
	if best == nil {
		return nil
	}
	return best.z
}

// gridCells lays out the cells of a grid over a box w × h for count
// rectangles: about four cells a rectangle (at most maxGridCells),
// square-ish, cellW × cellH each, nx across and ny down, covering the box.
func gridCells(w, h, count int) (cellW, cellH, nx, ny int) {
	n := min(4*count, maxGridCells)
	nx = max(1, min(w, isqrt(n*w/max(h, 1))))
	ny = max(1, min(h, n/nx))
	cellW, cellH = (w+nx-1)/nx, (h+ny-1)/ny
	return cellW, cellH, (w + cellW - 1) / cellW, (h + cellH - 1) / cellH
}

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
