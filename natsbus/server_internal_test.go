package natsbus

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// TestEmbeddedServerCutsClientsThatStopReading: a client of the embedded
// server that subscribes and stops reading is cut once 16 MiB (clientMaxPending)
// wait for it, as an event stream drops a client that falls behind. The
// server's default, 64 MiB a client, let a few such clients make the
// process hold gigabytes of a home's events.
func TestEmbeddedServerCutsClientsThatStopReading(t *testing.T) {
	s, err := StartServer(ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown()
	c, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "nats://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096) // little for the kernel to take in
	fmt.Fprintf(c, "CONNECT {\"verbose\":false}\r\nSUB slow.> 1\r\nPING\r\n")
	r := bufio.NewReader(c)
	for { // the server has the subscription once it answers the PING
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "PONG\r\n" {
			break
		}
	}
	// From here on the client reads nothing.
	nc, err := nats.Connect(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	data := make([]byte, 1<<20)
	for range 16 + 8 { // MiB: past the bound (clientMaxPending), and past what the sockets hold
		if err := nc.Publish("slow.x", data); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil { // the server has taken every message
		t.Fatal(err)
	}
	if n := s.ns.NumSlowConsumers(); n != 1 {
		t.Errorf("%d slow consumers cut, want the client that stopped reading", n)
	}
}
