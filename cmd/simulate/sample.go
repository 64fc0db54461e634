package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/pervasim/pervasim/sim"
)

// sample is the state of the home at one instant: column name to value.
type sample struct {
	at     time.Time
	values map[string]string
	// temperature (°C) and illuminance (lx) of each zone, for the plot.
	temps, lux map[string]float64
}

// sampler records the home every -every: the zones' variables
// ("<zone>.<Variable>") and the sensors' readings ("<device>.<property>":
// the properties a kind derives, such as current_temperature). Columns are
// kept in the order they first appear; zones in creation order.
type sampler struct {
	home    *sim.Home
	columns []string
	seen    map[string]bool
	zones   []string // in the order they first appear
	samples []sample
}

func newSampler(h *sim.Home) *sampler { return &sampler{home: h, seen: map[string]bool{}} }

func (s *sampler) column(name string) {
	if !s.seen[name] {
		s.seen[name] = true
		s.columns = append(s.columns, name)
	}
}

// take records the home as it is now; a nil sampler does nothing.
func (s *sampler) take() {
	if s == nil {
		return
	}
	sm := sample{at: s.home.Now(), values: map[string]string{}, temps: map[string]float64{}, lux: map[string]float64{}}
	for _, z := range s.home.Zones() {
		if !slices.Contains(s.zones, z.ID) {
			s.zones = append(s.zones, z.ID)
		}
		names := make([]string, 0, len(z.Variables))
		for k := range z.Variables {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			col := z.ID + "." + k
			s.column(col)
			sm.values[col] = strconv.FormatFloat(z.Variables[k], 'g', -1, 64)
		}
		if t, ok := z.Variables[sim.VarTemperature]; ok {
			sm.temps[z.ID] = t - 273.15
		}
		if l, ok := z.Variables[sim.VarIlluminance]; ok {
			sm.lux[z.ID] = l
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
			col := d.ID + "." + p.Name
			s.column(col)
			switch x := v.(type) {
			case float64:
				sm.values[col] = strconv.FormatFloat(x, 'g', -1, 64)
			default:
				sm.values[col] = fmt.Sprint(x)
			}
		}
	}
	s.samples = append(s.samples, sm)
}

// writeCSV writes a header (time, then every column) and one row per
// sample; a value missing at a sample is empty.
func (s *sampler) writeCSV(w io.Writer, loc *time.Location) error {
	cw := csv.NewWriter(w)
	header := append([]string{"time"}, s.columns...)
	if err := cw.Write(header); err != nil {
		return err
	}
	row := make([]string, len(header))
	for _, sm := range s.samples {
		row[0] = sm.at.In(loc).Format("2006-01-02T15:04:05")
		for i, c := range s.columns {
			row[i+1] = sm.values[c]
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
