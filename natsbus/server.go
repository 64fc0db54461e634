package natsbus

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ServerConfig configures an embedded NATS server. ServerConfig is a plain
// value, safe for concurrent use as long as nobody modifies it.
type ServerConfig struct {
	// Addr is the host:port NATS clients connect to; port 0 picks a free
	// one ([Server.URL] tells which).
	Addr string
	// StoreDir is where JetStream keeps its streams. Empty means a new
	// temporary directory, removed at Shutdown.
	StoreDir string
	// MQTTAddr, when set, is the host:port of the server's MQTT listener
	// (MQTT 3.1.1; port 0 picks a free one). MQTT clients then see the
	// subjects as topics: a.b.c is a/b/c.
	MQTTAddr string
}

// clientMaxPending is how many bytes may wait for one client of the embedded
// server: one that falls further behind (it stops reading) is cut, as NATS
// cuts a slow consumer. The server's own default, 64 MiB, let a few
// clients that subscribe to a home's events and read nothing make the
// process hold gigabytes. Twice the largest message, so that one fits.
const clientMaxPending = 16 << 20

// Server is an embedded NATS server with JetStream. It is safe for
// concurrent use.
type Server struct {
	ns       *server.Server
	tempDir  string
	mqttAddr string
}

// StartServer starts an embedded NATS server with JetStream and, when
// asked, MQTT, and waits until it accepts connections.
func StartServer(cfg ServerConfig) (*Server, error) {
	host, port, err := splitAddr(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("NATS address: %w", err)
	}
	if port != 0 {
		// A port in use fails at once, rather than after the server's
		// wait for readiness.
		if err := checkFree(host, port); err != nil {
			return nil, fmt.Errorf("NATS address: %w", err)
		}
	}
	s := &Server{}
	opts := &server.Options{Host: host, Port: port, JetStream: true, StoreDir: cfg.StoreDir,
		ServerName: "pervasim", NoSigs: true, NoLog: true, MaxPayload: 8 << 20, MaxPending: clientMaxPending}
	if port == 0 {
		opts.Port = server.RANDOM_PORT
	}
	if opts.StoreDir == "" {
		if s.tempDir, err = os.MkdirTemp("", "pervasim-nats-"); err != nil {
			return nil, err
		}
		opts.StoreDir = s.tempDir
	}
	if cfg.MQTTAddr != "" {
		mh, mp, err := splitAddr(cfg.MQTTAddr)
		if err != nil {
			s.removeTemp()
			return nil, fmt.Errorf("MQTT address: %w", err)
		}
		if mp == 0 { // the server does not say which port it picked: pick one here
			if mp, err = freePort(mh); err != nil {
				s.removeTemp()
				return nil, fmt.Errorf("MQTT address: %w", err)
			}
		} else if err := checkFree(mh, mp); err != nil {
			s.removeTemp()
			return nil, fmt.Errorf("MQTT address: %w", err)
		}
		opts.MQTT = server.MQTTOpts{Host: mh, Port: mp}
		s.mqttAddr = net.JoinHostPort(mh, strconv.Itoa(mp))
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		s.removeTemp()
		return nil, err
	}
	s.ns = ns
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		s.removeTemp()
		return nil, fmt.Errorf("the NATS server on %s did not start (is the address free?)", cfg.Addr)
	}
	return s, nil
}

func splitAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q: want 0 to 65535", p)
	}
	return host, port, nil
}

// checkFree fails when host:port cannot be listened on now (in use).
func checkFree(host string, port int) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	return ln.Close()
}

// freePort returns a port free on host now.
func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// URL returns the nats:// URL clients connect to.
func (s *Server) URL() string { return s.ns.ClientURL() }

// MQTTAddr returns the host:port of the MQTT listener, or "" without one.
func (s *Server) MQTTAddr() string { return s.mqttAddr }

// Shutdown stops the server and waits for it, and removes its temporary
// store, if it made one.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	s.removeTemp()
}

func (s *Server) removeTemp() {
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
	}
}
