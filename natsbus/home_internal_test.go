package natsbus

import (
	"bufio"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/sim"
)

// stallingServer is a NATS server of the least kind that stops reading
// once a client has connected, until resume is closed; then it hands the
// messages published to it on pubs, in order.
type stallingServer struct {
	ln     net.Listener
	resume chan struct{}
	pubs   chan published
}

type published struct {
	subject string
	data    []byte
}

func newStallingServer(t *testing.T) *stallingServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &stallingServer{ln: ln, resume: make(chan struct{}), pubs: make(chan published, 1<<16)}
	t.Cleanup(func() { ln.Close() })
	go s.serve()
	return s
}

func (s *stallingServer) serve() {
	c, err := s.ln.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	c.Write([]byte(`INFO {"server_id":"stall","version":"2.10.0","proto":1,"headers":true,"max_payload":8388608}` + "\r\n"))
	r := bufio.NewReaderSize(c, 1<<20)
	stalled := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch f := strings.Fields(line); {
		case line == "PING":
			c.Write([]byte("PONG\r\n"))
			if !stalled { // the client has connected: stop reading
				stalled = true
				<-s.resume
			}
		case len(f) >= 3 && f[0] == "PUB":
			n, _ := strconv.Atoi(f[len(f)-1])
			data := make([]byte, n+2)
			if _, err := readFull(r, data); err != nil {
				return
			}
			s.pubs <- published{f[1], data[:n]}
		}
	}
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestStalledServerHoldsUpNoChange: while the NATS server stalls (connected
// but not reading), changes of a published home go on: its events wait
// within their bound, those past it are dropped, and once the server reads
// again the ones kept arrive in order, a gap in their ids telling what
// was missed. Published on the goroutine making the change, they held it up
// until the connection's flusher timeout (a minute by default; an hour
// here).
func TestStalledServerHoldsUpNoChange(t *testing.T) {
	srv := newStallingServer(t)
	nc, err := nats.Connect("nats://"+srv.ln.Addr().String(), nats.FlusherTimeout(time.Hour), nats.PingInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	home := sim.MustNew(sim.Config{})
	if _, err := home.CreateDevice(sim.DeviceSpec{ID: "lamp", Type: "iCasa.BinaryLight"}); err != nil {
		t.Fatal(err)
	}
	const limit, changes = 1 << 20, 400
	stop, err := publishHome(nc, "", "lab", home, func(id string, body []byte) (int, []byte) {
		return httpapi.UpdateDeviceJSON(home, id, body)
	}, limit)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)

	// 70 MB of events (each holds the device, the value and the old one):
	// more than
	// the sockets' buffers and the bound hold.
	big := strings.Repeat("x", 60<<10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range changes {
			v := strconv.Itoa(i) + big
			if _, err := home.UpdateDevice("lamp", sim.DeviceUpdate{Properties: map[string]any{"note": v}}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	resume := sync.OnceFunc(func() { close(srv.resume) })
	defer resume()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("changes are held up while the NATS server stalls")
	}
	resume()
	if _, err := home.UpdateDevice("lamp", sim.DeviceUpdate{Properties: map[string]any{"note": "end"}}); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for {
		p := <-srv.pubs
		if p.subject != "pervasim.lab.device-property-updated.lamp" {
			continue
		}
		var e struct {
			ID    string `json:"id"`
			Value any    `json:"value"`
		}
		if err := json.Unmarshal(p.data, &e); err != nil {
			t.Fatal(err)
		}
		id, _ := strconv.ParseUint(e.ID, 10, 64)
		ids = append(ids, id)
		if e.Value == "end" {
			break
		}
	}
	gaps := 0
	for i := 1; i < len(ids); i++ {
		switch {
		case ids[i] <= ids[i-1]:
			t.Fatalf("events out of order: id %d after %d", ids[i], ids[i-1])
		case ids[i] > ids[i-1]+1:
			gaps++
		}
	}
	if gaps == 0 || len(ids) > changes {
		t.Errorf("%d events arrived of %d, with %d gaps: want some dropped past the bound", len(ids), changes+1, gaps)
	}
}

// TestEventPublisherBound: events being published count within the bound
// until they are: while a publish is held up, only what fits beside it
// waits, the rest is dropped, and what was kept follows in order.
func TestEventPublisherBound(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var got []string
	p := newEventPublisher(func(subject string, _ []byte) {
		if subject == "e0" {
			close(started)
			<-release
		}
		got = append(got, subject)
	}, 100)
	data := strings.Repeat("d", 18) // with a 2-byte subject, 20 bytes an event
	p.add("e0", []byte(data))
	<-started // e0 is being published, and still counted
	for i := 1; i <= 9; i++ {
		p.add("e"+strconv.Itoa(i), []byte(data))
	}
	close(release)
	p.close()
	<-p.done
	if want := []string{"e0", "e1", "e2", "e3", "e4"}; !slices.Equal(got, want) {
		t.Errorf("published %v, want %v", got, want)
	}
}
