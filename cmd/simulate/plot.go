package main

import (
	"fmt"
	"os"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// plot draws two panels, one above the other, over simulated time: each
// zone's temperature in °C, then its illuminance in lux, one line per zone
// with a legend. The file's extension (.svg or .png) chooses the format.
func (s *sampler) plot(f *os.File, loc *time.Location) error {
	name := f.Name()
	span := s.end.Sub(s.first)
	ticks := clockTicks{loc: loc, format: "15:04"}
	if span > 36*time.Hour {
		ticks.format = "Jan 2 15:04"
	}
	panel := func(title, unit string, series []plotter.XYs) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.Y.Label.Text = unit
		p.X.Label.Text = "simulated time (" + loc.String() + ")"
		p.X.Tick.Marker = ticks
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		for i, z := range s.zones {
			pts := series[i]
			if len(pts) == 0 {
				continue
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			line.Color = plotutil.Color(i)
			line.Width = vg.Points(1.5)
			p.Add(line)
			p.Legend.Add(z, line)
		}
		return p, nil
	}
	temp, err := panel("Temperature", "°C", s.temps)
	if err != nil {
		return err
	}
	lux, err := panel("Illuminance", "lx", s.lux)
	if err != nil {
		return err
	}
	const w, h = 24 * vg.Centimeter, 18 * vg.Centimeter
	var canvas vg.CanvasSizer
	var write func(f *os.File) error
	switch plotFormat(name) {
	case "svg":
		svg := vgsvg.New(w, h)
		canvas = svg
		write = func(f *os.File) error { _, err := svg.WriteTo(f); return err }
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
		canvas = img
		write = func(f *os.File) error { _, err := vgimg.PngCanvas{Canvas: img}.WriteTo(f); return err }
	default:
		return fmt.Errorf("%q: want a .svg or .png file", name)
	}
	dc := draw.New(canvas)
	plots := [][]*plot.Plot{{temp}, {lux}}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4, PadY: vg.Millimeter * 6}
	canvases := plot.Align(plots, tiles, dc)
	temp.Draw(canvases[0][0])
	lux.Draw(canvases[1][0])
	return write(f)
}

// clockTicks puts the time axis's labels on round clock times (every 15
// minutes to every few days, whichever gives six to twelve of them), with
// unlabelled ticks between.
type clockTicks struct {
	loc    *time.Location
	format string
}

// Ticks implements plot.Ticker; min and max are Unix seconds.
func (c clockTicks) Ticks(min, max float64) []plot.Tick {
	steps := []time.Duration{15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 3 * time.Hour,
		6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour}
	span := time.Duration((max - min) * float64(time.Second))
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 12 {
			step = s
			break
		}
	}
	minor := step / 4
	if step%(4*time.Hour) != 0 && step >= time.Hour && step%(3*time.Hour) == 0 {
		minor = step / 3
	}
	// The first tick at or before min, round in the zone's own clock.
	_, off := time.Unix(int64(min), 0).In(c.loc).Zone()
	m := int64(minor / time.Second)
	local := int64(min) + int64(off)
	first := time.Unix(local-((local%m)+m)%m-int64(off), 0).In(c.loc)
	var ticks []plot.Tick
	for t := first; !t.After(time.Unix(int64(max), 0)); t = t.Add(minor) {
		v := float64(t.Unix())
		if v < min {
			continue
		}
		label := ""
		if onStep(t, step) {
			label = t.Format(c.format)
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: label})
	}
	return ticks
}

// onStep reports whether t is a round multiple of step in its own zone's
// clock: 06:00 is on a 3-hour step, 07:00 is not.
func onStep(t time.Time, step time.Duration) bool {
	_, off := t.Zone()
	local := time.Duration(t.Unix()+int64(off)) * time.Second
	return local%step == 0
}
