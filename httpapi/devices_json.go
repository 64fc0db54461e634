package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/pervasim/pervasim/internal/jsonfast"
	"github.com/pervasim/pervasim/sim"
)

// listBuffers keeps the buffers of device lists between requests.
var listBuffers = sync.Pool{New: func() any { return new(listBuffer) }}

type listBuffer struct {
	b   []byte
	err error
	// The services arrays written so far, by their first element: a kind's
	// devices share one array, which the home never writes in place.
	services map[*string]encodedServices
}

// encodedServices is the JSON of a services array of n names.
type encodedServices struct {
	n    int
	json []byte
}

// maxServiceArrays bounds listBuffer.services (a kind's devices share
// one array, but user kinds can be many).
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
	s.home.EachDevice(func(d *sim.Device, props sim.Props) {
		if lb.err != nil {
			return
		}
		if !first {
			lb.b = append(lb.b, ',')
		}
		first = false
		lb.b, lb.err = lb.appendDevice(lb.b, d, props)
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
	err := s.home.ViewDevice(id, func(d *sim.Device, props sim.Props) {
		gen = s.home.Generation() // stable: no change runs while fn does
		lb.b, lb.err = lb.appendDevice(lb.b, d, props)
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

// appendDevice appends d, with props for its properties (as a snapshot
// shows them, in name order: encoding/json sorts a map's keys the same
// way), as encoding/json writes a sim.Device.
func (lb *listBuffer) appendDevice(b []byte, d *sim.Device, props sim.Props) ([]byte, error) {
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
	b = append(b, `,"properties":{`...)
	for i := range props.Len() {
		if i > 0 {
			b = append(b, ',')
		}
		k := props.Name(i)
		b = jsonfast.AppendString(b, k)
		b = append(b, ':')
		if k == sim.PropLocation {
			b = jsonfast.AppendString(b, d.Location) // without making the string an any
			continue
		}
		_, v := props.At(i)
		var err error
		if b, err = jsonfast.Append(b, v); err != nil {
			return b, err
		}
	}
	return append(b, "}}"...), nil
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
