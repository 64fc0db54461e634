package httpapi

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/pervasim/pervasim/internal/jsonfast"
	"github.com/pervasim/pervasim/sim"
)

// listBuffers keeps the buffers of device lists between requests.
var listBuffers = sync.Pool{New: func() any { return new(listBuffer) }}

type listBuffer struct {
	b    []byte
	keys []string
	err  error
	// The services arrays written so far, by their first element: a kind's
	// devices share one array, which the home never writes in place.
	services map[*string]encodedServices
	// The sorted property keys of the last device of each type.
	order map[string][]string
}

// encodedServices is the JSON of a services array of n names.
type encodedServices struct {
	n    int
	json []byte
}

// maxKeyOrders bounds listBuffer.order.
const maxKeyOrders = 256

// maxServiceArrays bounds listBuffer.services (updated devices get arrays
// of their own).
const maxServiceArrays = 256

// writeDeviceList writes GET /devices/devices without copying the
// devices or reflecting on them: the same bytes as encoding/json writes
// for home.Devices(), at a fraction of the cost.
func (s *server) writeDeviceList(w http.ResponseWriter, r *http.Request) {
	lb := listBuffers.Get().(*listBuffer)
	defer func() {
		if cap(lb.b) <= 16<<20 {
			listBuffers.Put(lb)
		}
	}()
	lb.b, lb.err = append(lb.b[:0], '['), nil
	first := true
	s.home.EachDevice(func(d *sim.Device, readings []sim.Reading) {
		if lb.err != nil {
			return
		}
		if !first {
			lb.b = append(lb.b, ',')
		}
		first = false
		lb.b, lb.err = lb.appendDevice(lb.b, d, readings)
	})
	if lb.err != nil {
		encode(w, http.StatusOK, s.home.Devices()) // a value jsonfast leaves to encoding/json failed: let it say so
		return
	}
	lb.b = append(lb.b, ']', '\n')
	writeJSONBytes(w, lb.b)
}

// writeDevice writes GET /devices/device/{id} as writeDeviceList writes
// the list: the bytes encoding/json writes, without copying the device.
// What it wrote is kept, with the home's generation it was read at, and
// written again for as long as the home stays at that generation: a device
// read again and again while nothing changes is encoded once.
func (s *server) writeDevice(w http.ResponseWriter, r *http.Request) {
	id := pathID(r)
	if c, ok := s.devices.Load(id); ok {
		if c := c.(*encodedDevice); c.gen == s.home.Generation() {
			writeJSONBytes(w, c.b)
			return
		}
	}
	lb := listBuffers.Get().(*listBuffer)
	defer listBuffers.Put(lb)
	lb.b, lb.err = lb.b[:0], nil
	var gen uint64
	err := s.home.ViewDevice(id, func(d *sim.Device, readings []sim.Reading) {
		gen = s.home.Generation() // stable: no change runs while fn does
		lb.b, lb.err = lb.appendDevice(lb.b, d, readings)
	})
	switch {
	case err != nil:
		writeError(w, r, err)
	case lb.err != nil:
		d, err := s.home.Device(id)
		respond(w, r, d, err)
	default:
		lb.b = append(lb.b, '\n')
		s.keepDevice(id, gen, lb.b)
		writeJSONBytes(w, lb.b)
	}
}

// encodedDevice is a device as writeDevice wrote it at a generation of the
// home.
type encodedDevice struct {
	gen uint64
	b   []byte
}

// maxEncodedDevices bounds the encoded devices kept: past it, they are
// all forgotten and kept again as they are read.
const maxEncodedDevices = 100_000

// keepDevice keeps a copy of b, device id encoded at generation gen.
func (s *server) keepDevice(id string, gen uint64, b []byte) {
	if _, loaded := s.devices.Swap(id, &encodedDevice{gen: gen, b: bytes.Clone(b)}); !loaded {
		if s.devicesKept.Add(1) > maxEncodedDevices {
			s.devices.Clear()
			s.devicesKept.Store(0)
		}
	}
}

// writeJSONBytes writes b as a 200 JSON answer.
func writeJSONBytes(w http.ResponseWriter, b []byte) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// jsonContentType is the Content-Type of JSON answers, shared.
var jsonContentType = []string{"application/json; charset=utf-8"}

// appendDevice appends d as encoding/json writes a sim.Device, with the
// readings in its properties; lb.keys is scratch space.
func (lb *listBuffer) appendDevice(b []byte, d *sim.Device, readings []sim.Reading) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonfast.AppendString(b, d.ID)
	b = append(b, `,"name":`...)
	b = jsonfast.AppendString(b, d.Name)
	b = append(b, `,"type":`...)
	b = jsonfast.AppendString(b, d.Type)
	if d.Location != "" {
		b = append(b, `,"location":`...)
		b = jsonfast.AppendString(b, d.Location)
	}
	b = append(b, `,"positionX":`...)
	b = strconv.AppendInt(b, int64(d.PositionX), 10)
	b = append(b, `,"positionY":`...)
	b = strconv.AppendInt(b, int64(d.PositionY), 10)
	if d.Width != 0 {
		b = append(b, `,"width":`...)
		b = strconv.AppendInt(b, int64(d.Width), 10)
	}
	if d.Height != 0 {
		b = append(b, `,"height":`...)
		b = strconv.AppendInt(b, int64(d.Height), 10)
	}
	b = append(b, `,"state":`...)
	b = jsonfast.AppendString(b, d.State)
	b = append(b, `,"fault":`...)
	b = jsonfast.AppendString(b, d.Fault)
	b = append(b, `,"services":`...)
	b = lb.appendServices(b, d.Services)
	b = append(b, `,"properties":`...)
	if d.Properties == nil && len(readings) == 0 {
		return append(b, "null}"...), nil
	}
	n := len(d.Properties) // the device's keys: its properties and the readings that are not
	for _, r := range readings {
		if _, ok := d.Properties[r.Name]; !ok {
			n++
		}
	}
	if keys, ok := lb.order[d.Type]; ok && len(keys) == n {
		// The keys of the last device of this type, in order: if the
		// device has each of them, it has no other (as many keys).
		start := len(b)
		b, ok, err := appendProperties(b, keys, d, readings)
		if ok || err != nil {
			return append(b, '}'), err
		}
		b = b[:start]
	}
	keys := lb.keys[:0]
	for k := range d.Properties {
		keys = append(keys, k)
	}
	for _, r := range readings {
		if _, ok := d.Properties[r.Name]; !ok {
			keys = append(keys, r.Name)
		}
	}
	slices.Sort(keys)
	lb.keys = keys // kept for the next device
	if lb.order == nil || len(lb.order) >= maxKeyOrders {
		lb.order = map[string][]string{}
	}
	lb.order[d.Type] = slices.Clone(keys)
	b, _, err := appendProperties(b, keys, d, readings)
	return append(b, '}'), err
}

// appendProperties appends the properties object of d, readings first,
// with keys in order; it reports false (and what it appended is to be
// dropped) when d has no property or reading of one of the keys.
func appendProperties(b []byte, keys []string, d *sim.Device, readings []sim.Reading) ([]byte, bool, error) {
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonfast.AppendString(b, k)
		b = append(b, ':')
		v, found := any(nil), false
		for _, r := range readings {
			if r.Name == k {
				v, found = r.Value, true
				break
			}
		}
		if !found {
			if v, found = d.Properties[k]; !found {
				return b, false, nil
			}
		}
		var err error
		if b, err = jsonfast.Append(b, v); err != nil {
			return b, true, err
		}
	}
	return append(b, '}'), true, nil
}

// appendServices appends the services array ss, written once per array.
func (lb *listBuffer) appendServices(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	if len(ss) > 0 {
		if e, ok := lb.services[&ss[0]]; ok && e.n == len(ss) {
			return append(b, e.json...)
		}
	}
	start := len(b)
	b = append(b, '[')
	for i, sv := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonfast.AppendString(b, sv)
	}
	b = append(b, ']')
	if len(ss) > 0 {
		if lb.services == nil || len(lb.services) >= maxServiceArrays {
			lb.services = map[*string]encodedServices{}
		}
		lb.services[&ss[0]] = encodedServices{n: len(ss), json: bytes.Clone(b[start:])}
	}
	return b
}
