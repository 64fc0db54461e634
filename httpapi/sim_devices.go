package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/pervasim/pervasim/sim"
)

// deviceType is an entry of GET /devices/deviceTypes.
type deviceType struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Services []string `json:"services"`
}

func (s *server) handleDeviceTypes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		kinds := s.home.DeviceKinds()
		out := make([]deviceType, len(kinds))
		for i, k := range kinds {
			out[i] = deviceType{ID: k.Type(), Name: k.Name, Services: k.Services()}
		}
		encode(w, http.StatusOK, out)
	})
}

func (s *server) handleDeviceList() http.Handler {
	return http.HandlerFunc(s.writeDeviceList)
}

func (s *server) handleDeviceGet() http.Handler {
	return http.HandlerFunc(s.writeDevice)
}

func (s *server) handleDeviceCreate() http.Handler {
	return handleBody(s, withoutID(deviceSpec), withoutID(s.home.CreateDevice))
}

// deviceSpec reads a device creation payload.
func deviceSpec(o object) (spec sim.DeviceSpec, err error) {
	if spec.ID, err = o.id("id", "deviceId"); err != nil {
		return spec, err
	}
	if spec.ID == "" {
		return spec, invalidf("field \"deviceId\" (or \"id\") is required")
	}
	if err = o.strInto(map[string]*string{"name": &spec.Name, "type": &spec.Type}); err != nil {
		return spec, err
	}
	if spec.PositionX, spec.PositionY, err = o.position(); err != nil {
		return spec, err
	}
	spec.Properties, err = o.values("properties")
	return spec, err
}

func (s *server) handleDeviceUpdate() http.Handler {
	return handleBody(s, deviceUpdate, s.home.UpdateDevice)
}

// deviceUpdate reads a device update payload.
func deviceUpdate(id string, o object) (u sim.DeviceUpdate, err error) {
	if err = o.checkPathID(id, "id", "deviceId"); err != nil {
		return u, err
	}
	for _, f := range []struct {
		name string
		dst  **string
	}{{"name", &u.Name}, {"type", &u.Type}, {"location", &u.Location}, {"state", &u.State}, {"fault", &u.Fault}} {
		if *f.dst, err = o.str(f.name); err != nil {
			return u, err
		}
	}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"positionX", &u.PositionX}, {"positionY", &u.PositionY}, {"width", &u.Width}, {"height", &u.Height}} {
		if *f.dst, err = o.coordinate(f.name); err != nil {
			return u, err
		}
	}
	u.Properties, err = o.values("properties")
	return u, err
}

func (s *server) handleDeviceDelete() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		respondEmpty(w, r, s.home.DeleteDevice(pathID(r)))
	})
}

// UpdateDeviceJSON applies body, a device update as PUT
// /devices/device/{id} takes it, to the device id of home, and returns what
// that request would answer: the status and the JSON body (the device, or
// the error). It serves other transports (NATS, MQTT) that carry the REST
// shapes. UpdateDeviceJSON is safe for concurrent use.
func UpdateDeviceJSON(home *sim.Home, id string, body []byte) (status int, reply []byte) {
	d, err := func() (sim.Device, error) {
		if int64(len(body)) > DefaultMaxBodyBytes {
			return sim.Device{}, invalidLimit(DefaultMaxBodyBytes)
		}
		o, err := parseObject(body)
		if err != nil {
			return sim.Device{}, err
		}
		u, err := deviceUpdate(id, o)
		if err != nil {
			return sim.Device{}, err
		}
		return home.UpdateDevice(id, u)
	}()
	if err != nil {
		return ErrorJSON(err)
	}
	reply, merr := json.Marshal(d)
	if merr != nil {
		return ErrorJSON(merr)
	}
	return http.StatusOK, reply
}

// ErrorJSON returns the status and the JSON body, {"error": ..., "code":
// ...}, with which a REST request failing with err would be answered, for
// transports (NATS, MQTT) that carry the REST shapes. An error of no kind
// this package knows is an internal error, its details not sent.
func ErrorJSON(err error) (status int, body []byte) {
	status, code, msg := classify(err)
	body, _ = json.Marshal(errorBody{Error: msg, Code: code}) // two strings always marshal
	return status, body
}
