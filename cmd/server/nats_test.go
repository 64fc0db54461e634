package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/pervasim/pervasim/httpapi"
	"github.com/pervasim/pervasim/mediation"
	"github.com/pervasim/pervasim/natsbus"
	"github.com/pervasim/pervasim/sim"
)

// The server binary the process tests start, built once.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// serverBinary builds this command once per test run.
func serverBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "pervasim-server-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "server")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is a server running as a process of its own.
type proc struct {
	cmd  *exec.Cmd
	base string // http://host:port
	nats string // nats://host:port, when it says
}

// startProc starts the server binary with args and reads its start lines.
func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(serverBinary(t), append([]string{"-addr", "127.0.0.1:0", "-log", "off"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd}
	t.Cleanup(func() { p.kill() })
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("server %v: %v", args, err)
		}
		if s, ok := strings.CutPrefix(line, "listening on "); ok {
			p.base = strings.TrimSpace(s)
		}
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "NATS"); ok {
			p.nats = strings.Fields(s)[0]
		}
		if strings.Contains(line, "health") {
			break // the last line that always comes
		}
	}
	if strings.Contains(strings.Join(args, " "), "-nats") {
		line, _ := r.ReadString('\n')
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "NATS"); ok {
			p.nats = strings.Fields(s)[0]
		}
	}
	go io.Copy(io.Discard, r)
	return p
}

// kill ends the process at once (SIGKILL) and waits for it.
func (p *proc) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.cmd.Wait()
}

// form posts a form body to the process and fails on anything but 200.
func (p *proc) form(t *testing.T, path, body string) {
	t.Helper()
	formCall(t, p.base, "POST", path, body, 200, "")
}

// natsClient connects the test itself.
func natsClient(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// listen subscribes the test to subject, with room for every message of
// the cross-process tests.
func listen(t *testing.T, url, subject string) chan *nats.Msg {
	t.Helper()
	nc := natsClient(t, url)
	msgs := make(chan *nats.Msg, crossMessages)
	sub, err := nc.ChanSubscribe(subject, msgs)
	if err != nil {
		t.Fatal(err)
	}
	sub.SetPendingLimits(-1, -1)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return msgs
}

// sendBatches sends n numbers into the chain's rest-in "in", in batches of
// 1,000 that its splitter splits. It runs on a goroutine of its own, so it
// returns its error on errc.
func (p *proc) sendBatches(chain string, n int, errc chan<- error) {
	for start := 0; start < n; start += 1000 {
		nums := make([]int, 0, 1000)
		for i := start; i < min(start+1000, n); i++ {
			nums = append(nums, i)
		}
		b, _ := json.Marshal(nums)
		res, err := http.Post(p.base+"/mediation/runtime/"+chain+"/components/in/data", "application/json", bytes.NewReader(b))
		if err != nil {
			errc <- err
			return
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			errc <- fmt.Errorf("batch at %d: %d %s", start, res.StatusCode, body)
			return
		}
	}
	errc <- nil
}

// collectInOrder takes n messages from sub, whose contents must be 0, 1,
// 2, … in that order.
func collectInOrder(t *testing.T, msgs chan *nats.Msg, n int) {
	t.Helper()
	timeout := time.After(2 * time.Minute) // a hang, not a speed check
	for i := 0; i < n; i++ {
		select {
		case m := <-msgs:
			if string(m.Data) != fmt.Sprint(i) {
				t.Fatalf("message %d is %s: out of order or lost", i, m.Data)
			}
		case <-timeout:
			t.Fatalf("received %d messages of %d", i, n)
		}
	}
}

const crossMessages = 100_000

// TestChainAcrossProcesses: two servers as processes of their own, joined
// by the first's embedded NATS server. A chain of the first splits batches
// into 100,000 messages and publishes them through nats-out; a chain of the
// second takes all of them through nats-in, in order, and forwards them to
// where the test listens.
func TestChainAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a := startProc(t, "-nats", "127.0.0.1:0")
	b := startProc(t, "-nats-url", a.nats)
	msgs := listen(t, a.nats, "test.done")

	b.form(t, "/mediation/recv", "")
	b.form(t, "/mediation/recv/adapter/nats-in/in", "properties={subject=test.data}")
	b.form(t, "/mediation/recv/adapter/nats-out/out", "properties={subject=test.done}")
	b.form(t, "/mediation/recv/bindings", "from=in:out&to=out:in")

	a.form(t, "/mediation/send", "")
	a.form(t, "/mediation/send/adapter/rest-in/in", "")
	a.form(t, "/mediation/send/mediator/splitter/split", "")
	a.form(t, "/mediation/send/adapter/nats-out/out", "properties={subject=test.data}")
	a.form(t, "/mediation/send/bindings", "from=in:out&to=split:in")
	a.form(t, "/mediation/send/bindings", "from=split:out&to=out:in")

	errc := make(chan error, 1)
	go a.sendBatches("send", crossMessages, errc)
	collectInOrder(t, msgs, crossMessages)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestLinkerAcrossProcesses: one chain defined in two servers, its binding
// split → out carried by the nats linker: the first server's side sends,
// the second's receives; 100,000 messages arrive in order.
func TestLinkerAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two servers")
	}
	a := startProc(t, "-nats", "127.0.0.1:0")
	b := startProc(t, "-nats-url", a.nats)
	msgs := listen(t, a.nats, "test.done")
	for _, side := range []struct {
		p    *proc
		role string
	}{{b, "receive"}, {a, "send"}} {
		side.p.form(t, "/mediation/c", "")
		side.p.form(t, "/mediation/c/adapter/rest-in/in", "")
		side.p.form(t, "/mediation/c/mediator/splitter/split", "")
		side.p.form(t, "/mediation/c/adapter/nats-out/out", "properties={subject=test.done}")
		side.p.form(t, "/mediation/c/bindings", "from=in:out&to=split:in")
		side.p.form(t, "/mediation/c/bindings", "from=split:out&to=out:in&linker=nats&properties={subject=test.link; role="+side.role+"}")
	}
	errc := make(chan error, 1)
	go a.sendBatches("c", crossMessages, errc)
	collectInOrder(t, msgs, crossMessages)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestJetStreamSurvivesKill: as TestChainAcrossProcesses, over JetStream
// streams; the receiving server is killed (SIGKILL) mid-stream and started
// again. All 100,000 messages come out, none twice.
func TestJetStreamSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three servers")
	}
	a := startProc(t, "-nats", "127.0.0.1:0", "-nats-store", t.TempDir())
	nc := natsClient(t, a.nats)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DONE", Subjects: []string{"test.done"}, Duplicates: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	receiver := func() *proc {
		b := startProc(t, "-nats-url", a.nats)
		b.form(t, "/mediation/recv", "")
		b.form(t, "/mediation/recv/adapter/nats-in/in", "properties={subject=test.data; stream=DATA; durable=recv}")
		b.form(t, "/mediation/recv/adapter/nats-out/out", "properties={subject=test.done; stream=DONE}")
		b.form(t, "/mediation/recv/bindings", "from=in:out&to=out:in")
		return b
	}
	b := receiver()
	a.form(t, "/mediation/send", "")
	a.form(t, "/mediation/send/adapter/rest-in/in", "")
	a.form(t, "/mediation/send/mediator/splitter/split", "")
	a.form(t, "/mediation/send/adapter/nats-out/out", "properties={subject=test.data; stream=DATA}")
	a.form(t, "/mediation/send/bindings", "from=in:out&to=split:in")
	a.form(t, "/mediation/send/bindings", "from=split:out&to=out:in")
	errc := make(chan error, 1)
	go a.sendBatches("send", crossMessages, errc)

	// Read what comes out; kill the receiver once a fifth has, and start
	// another.
	cons, err := out.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	iter, err := cons.Messages()
	if err != nil {
		t.Fatal(err)
	}
	defer iter.Stop()
	go func() { <-ctx.Done(); iter.Stop() }() // a hang ends the wait
	seen := make([]bool, crossMessages)
	for i := range crossMessages {
		if i == crossMessages/5 {
			b.kill()
			receiver()
		}
		m, err := iter.Next()
		if err != nil {
			t.Fatalf("after %d messages: %v", i, err)
		}
		var n int
		if err := json.Unmarshal(m.Data(), &n); err != nil || n < 0 || n >= crossMessages || seen[n] {
			t.Fatalf("message %s: not a number, or twice", m.Data())
		}
		seen[n] = true
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	info, err := out.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != crossMessages {
		t.Fatalf("the output stream holds %d messages, want %d", info.State.Msgs, crossMessages)
	}
}

// waitABit waits for other processes to make progress: they run on their
// own clocks, so there is nothing to step.
func waitABit(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(20 * time.Millisecond):
	}
}

// TestHomesOnNATS: with -nats, the homes made under /homes answer device
// requests on their own subjects, and stop when deleted.
func TestHomesOnNATS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-nats", "127.0.0.1:0", "-log", "off"}, pw, io.Discard)
		pw.Close()
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run = %v", err)
		}
	}()
	r := bufio.NewReader(pr)
	base, url := "", ""
	for url == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := strings.CutPrefix(line, "listening on "); ok {
			base = strings.TrimSpace(s)
		}
		if s, ok := strings.CutPrefix(strings.TrimSpace(line), "NATS"); ok {
			url = strings.Fields(s)[0]
		}
	}
	go io.Copy(io.Discard, r)
	nc := natsClient(t, url)
	for _, c := range []call{
		{method: "POST", path: "/homes/lab", status: 200},
		{method: "POST", path: "/homes/lab/platform/devices/device", body: `{"deviceId":"lamp","type":"iCasa.BinaryLight"}`, status: 200},
	} {
		c.do(t, base)
	}
	for _, tt := range []struct{ subject, status string }{
		{"pervasim.lab.devices.lamp.set", "200"},
		{"pervasim.default.devices.lamp.set", "404"}, // the default home has no lamp
	} {
		reply, err := nc.Request(tt.subject, []byte(`{"state":"deactivated"}`), 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tt.subject, err)
		}
		if got := reply.Header.Get("Pervasim-Status"); got != tt.status {
			t.Errorf("%s: status %s %s, want %s", tt.subject, got, reply.Data, tt.status)
		}
	}
	call{method: "GET", path: "/homes/lab/platform/devices/device/lamp", status: 200,
		check: func(t *testing.T, d map[string]any) {
			if d["state"] != "deactivated" {
				t.Errorf("the lamp is %v, want deactivated", d["state"])
			}
		}}.do(t, base)
	call{method: "DELETE", path: "/homes/lab", status: 200}.do(t, base)
	if _, err := nc.Request("pervasim.lab.devices.lamp.set", []byte(`{}`), 2*time.Second); err == nil {
		t.Errorf("a deleted home still answers on NATS")
	}
}

// TestStoppedHomeLeavesNothingOnNATS: a home's Stop (DELETE /homes/{home})
// ends its chains' NATS subscriptions and the nats linker's publishers: a
// queue group's later members get every message, and no goroutine of the
// home's links is left.
func TestStoppedHomeLeavesNothingOnNATS(t *testing.T) {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc := natsClient(t, srv.URL())
	o := options{natsPrefix: "pervasim", maxDeliveries: 100_000}
	home := func(name string) (httpapi.HomeParts, *mediation.Chain) {
		parts, _, err := buildHome(o, name, nc, time.UTC, sim.PhysicsContract, io.Discard, nil)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := parts.Engine.CreateChain("q")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ typ, id string }{{"nats-in", "i"}, {"rest-out", "o"}, {"rest-in", "src"}, {"rest-out", "far"}} {
			props := map[string]any{}
			if c.typ == "nats-in" {
				props = map[string]any{"subject": "work.r", "queue": "workers"}
			}
			if _, err := ch.AddComponent(mediation.KindAdapter, c.typ, c.id, props); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range [][3]string{{"i:out", "o:in", ""}, {"src:out", "far:in", "nats"}} {
			if _, err := ch.Bind(b[0], b[1], b[2], nil); err != nil {
				t.Fatal(err)
			}
		}
		if err := ch.Start(); err != nil {
			t.Fatal(err)
		}
		if err := ch.Send("src", mediation.Message{Content: "through the nats linker"}); err != nil {
			t.Fatal(err)
		}
		return parts, ch
	}
	publishers := func() int {
		buf := make([]byte, 1<<22)
		return strings.Count(string(buf[:runtime.Stack(buf, true)]), "natsbus.(*natsLink).publisher")
	}
	before := publishers()
	first, _ := home("w1")
	for wait := time.Now().Add(30 * time.Second); publishers() <= before; runtime.Gosched() {
		if time.Now().After(wait) {
			t.Fatal("the nats linker started no publisher")
		}
	}
	first.Stop()
	if n := publishers(); n != before {
		t.Errorf("%d nats publishers left by a stopped home", n-before)
	}
	second, ch := home("w2")
	defer second.Stop()
	for i := range 50 {
		if err := nc.Publish("work.r", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms, err := ch.Messages("o")
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 50 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second home's member of the queue group got %d of 50", len(ms))
		}
		runtime.Gosched()
	}
}

// lineWriter hands each write (one log record) on lines.
type lineWriter struct{ lines chan string }

func (w lineWriter) Write(p []byte) (int, error) {
	w.lines <- string(p)
	return len(p), nil
}

// waitForLine reads records until one contains want.
func waitForLine(t *testing.T, lines chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l := <-lines:
			if strings.Contains(l, want) {
				return
			}
		case <-timeout:
			t.Fatalf("nothing logged with %q", want)
		}
	}
}

// TestNATSConnectionLogged: the server says when its NATS connection is
// lost and when it is back; it used to say nothing, and chains and homes
// stopped reaching NATS without a trace.
func TestNATSConnectionLogged(t *testing.T) {
	srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL(), "nats://")
	lines := make(chan string, 64)
	nc, _, stop, err := connectNATS(options{natsURL: srv.URL()}, slog.New(slog.NewTextHandler(lineWriter{lines}, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	srv.Shutdown()
	waitForLine(t, lines, "NATS connection lost")
	srv, err = natsbus.StartServer(natsbus.ServerConfig{Addr: addr, StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	waitForLine(t, lines, "NATS connection back")
	if !nc.IsConnected() {
		t.Error("not connected")
	}
}

// TestNATSShutdownNotLoggedAsLoss: closing the NATS connection at shutdown
// is not logged as a loss. It used to log a warning that the connection
// was lost and was being made again at every shutdown, and, with the NATS
// server down, an error that chains and homes no longer reached NATS.
func TestNATSShutdownNotLoggedAsLoss(t *testing.T) {
	for _, down := range []bool{false, true} {
		t.Run(fmt.Sprintf("down=%v", down), func(t *testing.T) {
			srv, err := natsbus.StartServer(natsbus.ServerConfig{Addr: "127.0.0.1:0", StoreDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Shutdown()
			const dispatcher = "asyncCBDispatcher("
			before := strings.Count(allGoroutines(), dispatcher)
			lines := make(chan string, 64)
			_, _, stop, err := connectNATS(options{natsURL: srv.URL()}, slog.New(slog.NewTextHandler(lineWriter{lines}, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if down {
				srv.Shutdown()
				waitForLine(t, lines, "NATS connection lost") // a real loss is logged
			}
			stop()
			// The connection's callbacks run on a goroutine of its own:
			// wait for it to end, having run them all.
			// Polled, not spun: each look stops the world and reads every
			// goroutine's stack.
			give := time.After(30 * time.Second)
			for strings.Count(allGoroutines(), dispatcher) > before {
				select {
				case <-give:
					t.Fatal("the connection's callbacks never ended")
				case <-time.After(5 * time.Millisecond):
				}
			}
			// Not closed: a callback of another test's connection ending
			// meanwhile could let the loop end before this one's, which
			// would then send on a closed channel.
			for drained := false; !drained; {
				select {
				case l := <-lines:
					t.Errorf("logged at shutdown: %s", l)
				default:
					drained = true
				}
			}
		})
	}
}

func allGoroutines() string {
	buf := make([]byte, 1<<22)
	return string(buf[:runtime.Stack(buf, true)])
}
