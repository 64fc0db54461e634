package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestSecondSignalStopsAtOnce: the first Ctrl-C starts the graceful
// shutdown, which waits for a stalled request until it is cut; a second
// Ctrl-C ends the process at once rather than being swallowed.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	cmd := exec.Command(serverBinary(t), "-addr", "127.0.0.1:0", "-log", "off")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	var addr string
	out := bufio.NewScanner(stdout)
	for out.Scan() {
		if s, ok := strings.CutPrefix(out.Text(), "listening on http://"); ok {
			addr = s
			break
		}
	}
	if addr == "" {
		t.Fatal("the server did not say where it listens")
	}
	go func() { // the rest of its output, so that it never blocks writing
		for out.Scan() {
		}
	}()
	// A request whose body never comes: the graceful shutdown waits for it.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /platform/zones/zone HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	// The server has taken that connection once it answers one made after
	// it (connections are accepted in order): a signal before would find
	// only a connection waiting to be accepted, which the shutdown drops.
	if res, err := http.Get("http://" + addr + "/healthz"); err == nil {
		res.Body.Close()
	} else {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	errs := bufio.NewScanner(stderr)
	said := false
	for !said && errs.Scan() {
		said = strings.Contains(errs.Text(), "Ctrl-C again")
	}
	if !said {
		t.Fatal("the server did not say that a second Ctrl-C stops it")
	}
	go func() {
		for errs.Scan() {
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("after a second Ctrl-C the server exited with %v, want ended by the signal", err)
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Fatalf("after a second Ctrl-C the server exited with %v, want ended by SIGINT", err)
	}
}

// TestNoSecondSignalNoticeAtExit: the notice that a second Ctrl-C stops
// the server at once follows a signal, not the end of the signal context
// that main's deferred stop makes as it returns: `server -version` (or
// -h) printed it now and then.
func TestNoSecondSignalNoticeAtExit(t *testing.T) {
	for range 100 {
		ctx, cancel := context.WithCancel(context.Background())
		finished := make(chan struct{})
		var out bytes.Buffer
		done := make(chan struct{})
		go func() {
			secondSignal(ctx, func() {}, finished, &out)
			close(done)
		}()
		close(finished) // as main returns: finished, then stop
		cancel()
		<-done
		if out.Len() > 0 {
			t.Fatalf("at exit without a signal: %q", out.String())
		}
	}
	// A signal: stop is called and the notice given.
	ctx, cancel := context.WithCancel(context.Background())
	stopped := false
	var out bytes.Buffer
	cancel()
	secondSignal(ctx, func() { stopped = true }, make(chan struct{}), &out)
	if !stopped || !strings.Contains(out.String(), "Ctrl-C again") {
		t.Errorf("after a signal: stop called %v, said %q", stopped, out.String())
	}
}
