package httpapi

import (
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

func (s *server) handleEnvironmentGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encode(w, http.StatusOK, s.home.Environment())
	})
}

func (s *server) handleEnvironmentUpdate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o, err := decodeObject(w, r, s.maxBody)
		if err != nil {
			writeError(w, r, err)
			return
		}
		u, err := environmentUpdate(o)
		if err != nil {
			writeError(w, r, err)
			return
		}
		e, err := s.home.UpdateEnvironment(u)
		respond(w, r, e, err)
	})
}

// environmentUpdate reads an environment update payload. The derived fields
// of the Environment shape (sunElevation, outdoorIlluminance) are read, so
// that a bad value is still 400, and ignored: a client may send back an
// environment it read.
func environmentUpdate(o object) (u sim.EnvironmentUpdate, err error) {
	for name, dst := range map[string]**float64{
		"outdoorTemperature": &u.OutdoorTemperature, "outdoorMin": &u.OutdoorMin, "outdoorMax": &u.OutdoorMax,
		"latitude": &u.Latitude, "longitude": &u.Longitude, "windowShare": &u.WindowShare,
		"sunElevation": &u.SunElevation, "outdoorIlluminance": &u.OutdoorIlluminance,
	} {
		if *dst, err = o.number(name); err != nil {
			return u, err
		}
	}
	if u.Sky, err = o.str("sky"); err != nil {
		return u, err
	}
	p, err := o.str("physics")
	if p != nil {
		u.Physics = new(sim.Physics(*p))
	}
	return u, err
}

// kindView is an entry of GET /devices/kinds: a device kind with the specs
// of its properties, as the home's physics model sees it.
type kindView struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Services   []string       `json:"services"`
	Doc        string         `json:"doc,omitempty"`
	Properties []propertyView `json:"properties"`
}

// propertyView is a property spec.
type propertyView struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default any      `json:"default"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
	Derived bool     `json:"derived,omitempty"`
	Follows string   `json:"follows,omitempty"`
	Unit    string   `json:"unit,omitempty"`
	Doc     string   `json:"doc,omitempty"`
	// Aliases are other names the property answers to.
	Aliases []string `json:"aliases,omitempty"`
}

func (s *server) handleKinds() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kinds := s.home.DeviceKinds()
		out := make([]kindView, len(kinds))
		for i, k := range kinds {
			v := kindView{ID: k.Type(), Name: k.Name, Services: k.Services(), Doc: k.Doc, Properties: []propertyView{}}
			for _, p := range k.Properties {
				pv := propertyView{Name: p.Name, Type: p.Type.String(), Default: p.Default,
					Derived: p.Derived, Follows: p.Follows, Unit: p.Unit, Doc: p.Doc, Aliases: p.Aliases}
				if p.Min != 0 || p.Max != 0 {
					pv.Min, pv.Max = new(p.Min), new(p.Max)
				}
				v.Properties = append(v.Properties, pv)
			}
			out[i] = v
		}
		encode(w, http.StatusOK, out)
	})
}
