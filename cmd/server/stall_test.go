package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/pervasim/pervasim/natsbus"
)

// stallProxy forwards TCP connections to a NATS server until stall is
// called; from then on it reads nothing more from its clients (new ones
// included), as a NATS server that hangs, connected but not reading.
type stallProxy struct {
	ln      net.Listener
	stalled chan struct{} // closed by stall
	done    chan struct{} // closed at the test's end
	once    sync.Once
	mu      sync.Mutex
	conns   []net.Conn
}

func newStallProxy(t *testing.T, upstream string) *stallProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln, stalled: make(chan struct{}), done: make(chan struct{})}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			c.(*net.TCPConn).SetReadBuffer(4096) // little for the kernel to take in once stalled
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go io.Copy(c, up)
			go func() {
				buf := make([]byte, 4096)
				for {
					select {
					case <-p.stalled: // reads nothing more, until the test ends
						<-p.done
						up.Close()
						return
					default:
					}
					n, err := c.Read(buf)
					if n > 0 {
						up.Write(buf[:n])
					}
					if err != nil {
						up.Close()
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		close(p.done)
	})
	return p
}

func (p *stallProxy) url() string { return "nats://" + p.ln.Addr().String() }

// stall stops reading from the clients, for the rest of the test.
func (p *stallProxy) stall() { p.once.Do(func() { close(p.stalled) }) }

// TestShutdownWithNATSStalled: a NATS server that hangs (connected, reading
// nothing) while the home's events wait for it holds up no change, and the
// shutdown still ends well within its deadline. A write to it used to wait
// for the NATS client's default write timeout, a minute, holding the
// connection's lock, and closing the connection waited for it and for a
// flush of its own: the server took a minute or two to exit.
func TestShutdownWithNATSStalled(t *testing.T) {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	proxy := newStallProxy(t, strings.TrimPrefix(srv.URL(), "nats://"))
	base, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-log", "off", "-nats-url", proxy.url())
	do := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s = %d %s", method, path, res.StatusCode, b)
		}
	}
	do("POST", "/platform/devices/device", `{"deviceId":"lamp","type":"iCasa.BinaryLight","positionX":10,"positionY":10}`)
	proxy.stall()
	// About 40 MiB of events (each holds the device, its ten notes of 60
	// KiB included): more than the sockets between the server and NATS
	// hold, less than the 64 MiB that may wait.
	for i := range 6 {
		var props []string
		for k := range 10 {
			props = append(props, fmt.Sprintf(`"note%d":%q`, k, strings.Repeat(string(rune('a'+i%2)), 60<<10)))
		}
		do("PUT", "/platform/devices/device/lamp", `{"properties":{`+strings.Join(props, ",")+`}}`)
	}
	shutdown("with NATS stalled")
}
