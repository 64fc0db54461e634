package sim

// zoneGrid finds the zone holding a point without testing every zone: the
// plan's bounding box is cut into about four cells per zone, and each cell
// lists the zones overlapping it. A zone overlapping more than
// maxZoneCells cells is kept in a list tested for every point instead, so
// the grid stays small whatever the zones look like. It is rebuilt on the
// first lookup after the zones changed.
type zoneGrid struct {
	valid        bool
	minX, minY   int
	cellW, cellH int
	nx, ny       int
	cells        [][]gridZone
	wide         []gridZone
}

// gridZone is a zone as the grid files it, with its creation number (its
// place in h.zones.list) to break ties between zones of equal area.
type gridZone struct {
	z    *Zone
	n    int
	area int64
}

const (
	maxZoneCells = 64
	maxGridCells = 1 << 20
)

func (g *zoneGrid) build(zones []*Zone) {
	g.valid = true
	clear(g.cells)
	g.cells, g.wide = g.cells[:0], g.wide[:0]
	g.nx, g.ny = 0, 0
	if len(zones) == 0 {
		return
	}
	minX, minY, maxX, maxY := zones[0].LeftX, zones[0].TopY, zones[0].RightX, zones[0].BottomY
	for _, z := range zones[1:] {
		minX, minY = min(minX, z.LeftX), min(minY, z.TopY)
		maxX, maxY = max(maxX, z.RightX), max(maxY, z.BottomY)
	}
	// About 4 cells per zone, square-ish over the bounding box.
	n := min(4*len(zones), maxGridCells)
	w, h := maxX-minX+1, maxY-minY+1
	nx := max(1, min(w, isqrt(n*w/max(h, 1))))
	ny := max(1, min(h, n/nx))
	g.minX, g.minY = minX, minY
	g.cellW, g.cellH = (w+nx-1)/nx, (h+ny-1)/ny
	g.nx, g.ny = (w+g.cellW-1)/g.cellW, (h+g.cellH-1)/g.cellH
	if cap(g.cells) >= g.nx*g.ny {
		g.cells = g.cells[:g.nx*g.ny]
	} else {
		g.cells = make([][]gridZone, g.nx*g.ny)
	}
	for i, z := range zones {
		e := gridZone{z: z, n: i, area: z.area()}
		x0, x1 := (z.LeftX-minX)/g.cellW, (z.RightX-minX)/g.cellW
		y0, y1 := (z.TopY-minY)/g.cellH, (z.BottomY-minY)/g.cellH
		if (x1-x0+1)*(y1-y0+1) > maxZoneCells {
			g.wide = append(g.wide, e)
			continue
		}
		for y := y0; y <= y1; y++ {
			for x := x0; x <= x1; x++ {
				c := &g.cells[y*g.nx+x]
				*c = append(*c, e)
			}
		}
	}
}

// locate returns the zone holding (x, y) as [Home.locateLocked] defines it.
func (g *zoneGrid) locate(x, y int) *Zone {
	var best gridZone
	pick := func(list []gridZone) {
		for _, e := range list {
			if e.z.Contains(x, y) && (best.z == nil || e.area < best.area || e.area == best.area && e.n < best.n) {
				best = e
			}
		}
	}
	cx, cy := x-g.minX, y-g.minY
	if cx >= 0 && cy >= 0 && cx/max(g.cellW, 1) < g.nx && cy/max(g.cellH, 1) < g.ny {
		pick(g.cells[cy/g.cellH*g.nx+cx/g.cellW])
	}
	pick(g.wide)
	return best.z
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
