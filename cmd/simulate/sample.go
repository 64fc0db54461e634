package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"gonum.org/v1/plot/plotter"

	"github.com/pervasim/pervasim/sim"
)

// sampler records the home every -every: the zones' variables
// ("<zone>.<Variable>") and the sensors' readings ("<device>.<property>":
// the properties a kind derives, such as current_temperature). Columns are
// kept in the order they first appear; zones in creation order.
//
// Memory does not grow with the run's length but for the plot's points
// (16 bytes per zone and sample): rows go to a spool file as they are
// taken, each as long as the columns known then (columns only ever get
// added), and writeCSV pads them once the header is known.
type sampler struct {
	home    *sim.Home
	loc     *time.Location
	columns []string
	index   map[string]int // column -> position in columns
	row     []string       // the row being taken, reused

	spool  *os.File    // the rows so far, as CSV; nil without -csv
	spoolW *csv.Writer //

	plotting   bool
	zones      []string       // in the order they first appear
	zoneIdx    map[string]int // zone -> position in zones
	temps, lux []plotter.XYs  // per zone: °C and lx over Unix seconds
	first, end time.Time      // of the samples taken
}

// newSampler returns a sampler for -csv (rows spooled to a temporary
// file, removed by close) and -plot (points kept).
func newSampler(h *sim.Home, loc *time.Location, rows, plotting bool) (*sampler, error) {
	s := &sampler{home: h, loc: loc, index: map[string]int{}, plotting: plotting, zoneIdx: map[string]int{}}
	if rows {
		f, err := os.CreateTemp("", "simulate-*.csv")
		if err != nil {
			return nil, err
		}
		s.spool, s.spoolW = f, csv.NewWriter(bufio.NewWriterSize(f, 1<<16))
	}
	return s, nil
}

// close removes the spool file; a nil sampler does nothing.
func (s *sampler) close() {
	if s != nil && s.spool != nil {
		s.spool.Close()
		os.Remove(s.spool.Name())
	}
}

// layout is the CSV's time format: local time, with its UTC offset unless
// the zone is UTC (a time zone's clock repeats an hour in autumn), and its
// milliseconds when it has some (-every 500ms), so that two samples never
// read as the same time.
func (s *sampler) layout() string {
	if s.loc == time.UTC {
		return "2006-01-02T15:04:05.999"
	}
	return "2006-01-02T15:04:05.999-07:00"
}

// set puts a value in the row being taken, adding its column if new.
func (s *sampler) set(col, value string) {
	i, ok := s.index[col]
	if !ok {
		i = len(s.columns)
		s.index[col] = i
		s.columns = append(s.columns, col)
	}
	for len(s.row) <= i+1 {
		s.row = append(s.row, "")
	}
	s.row[i+1] = value
}

// take records the home as it is now; a nil sampler does nothing.
func (s *sampler) take() error {
	if s == nil {
		return nil
	}
	at := s.home.Now()
	if s.first.IsZero() {
		s.first = at
	}
	s.end = at
	s.row = append(s.row[:0], at.In(s.loc).Format(s.layout()))
	for _, z := range s.home.Zones() {
		zi, ok := s.zoneIdx[z.ID]
		if !ok {
			zi = len(s.zones)
			s.zoneIdx[z.ID] = zi
			s.zones = append(s.zones, z.ID)
			s.temps, s.lux = append(s.temps, nil), append(s.lux, nil)
		}
		for _, k := range slices.Sorted(maps.Keys(z.Variables)) {
			s.set(z.ID+"."+k, strconv.FormatFloat(z.Variables[k], 'g', -1, 64))
		}
		if !s.plotting {
			continue
		}
		x := float64(at.Unix())
		if t, ok := z.Variables[sim.VarTemperature]; ok {
			s.temps[zi] = append(s.temps[zi], plotter.XY{X: x, Y: t - 273.15})
		}
		if l, ok := z.Variables[sim.VarIlluminance]; ok {
			s.lux[zi] = append(s.lux[zi], plotter.XY{X: x, Y: l})
		}
	}
	kinds := s.home.Kinds()
	for _, d := range s.home.Devices() {
		k, err := kinds.Lookup(d.Type)
		if err != nil {
			continue
		}
		for _, p := range k.Properties {
			if !p.Derived {
				continue
			}
			v, ok := d.Properties[p.Name]
			if !ok {
				continue
			}
			switch x := v.(type) {
			case float64:
				s.set(d.ID+"."+p.Name, strconv.FormatFloat(x, 'g', -1, 64))
			default:
				s.set(d.ID+"."+p.Name, fmt.Sprint(x))
			}
		}
	}
	if s.spool == nil {
		return nil
	}
	return s.spoolW.Write(s.row)
}

// writeCSV writes a header (time, then every column) and one row per
// sample; a value missing at a sample is empty.
func (s *sampler) writeCSV(w io.Writer) error {
	s.spoolW.Flush()
	if err := s.spoolW.Error(); err != nil {
		return err
	}
	if _, err := s.spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	header := append([]string{"time"}, s.columns...)
	if err := cw.Write(header); err != nil {
		return err
	}
	r := csv.NewReader(bufio.NewReaderSize(s.spool, 1<<16))
	r.FieldsPerRecord = -1 // early rows are shorter
	r.ReuseRecord = true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		for len(rec) < len(header) {
			rec = append(rec, "")
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
