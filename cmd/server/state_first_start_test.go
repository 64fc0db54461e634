package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/store"
)

// TestStateFirstStartThatFailsLeavesItNew: a first start on a new state
// directory that stops on a -chains file that does not load leaves the
// directory new, so that the next start, with the file fixed, loads it.
// The failed start had made the directory a state (a journal and, at its
// exit, a snapshot of the empty engine), and every later start restored
// that and skipped -chains without a word.
func TestStateFirstStartThatFailsLeavesItNew(t *testing.T) {
	dir := t.TempDir()
	chains := filepath.Join(dir, "app.dscilia")
	state := filepath.Join(dir, "state")
	write := func(typ string) {
		t.Helper()
		text := `<cilia><chain id="app"><mediators><mediator-instance id="m" type="` + typ + `"/></mediators></chain></cilia>`
		if err := os.WriteFile(chains, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-addr", "127.0.0.1:0", "-chains", chains, "-state", state, "-log", "off"}

	write("NoSuchType")
	if err := run(t.Context(), args, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "NoSuchType") {
		t.Fatalf("run with an unknown type = %v, want an error naming it", err)
	}
	write("passthrough")
	base, shutdown := startRun(t, args...)
	call{method: "GET", path: "/mediation/", status: 200, want: `{"chains":["app"]}`}.do(t, base)
	shutdown("")

	// Then the state is kept: a chain deleted stays deleted.
	base, shutdown = startRun(t, args...)
	call{method: "DELETE", path: "/mediation/app", status: 200}.do(t, base)
	shutdown("")
	base, shutdown = startRun(t, args...)
	defer shutdown("")
	call{method: "GET", path: "/mediation/", status: 200, want: `{"chains":[]}`}.do(t, base)
}

// TestStateLastSnapshotFailureSaid: a last snapshot that cannot be
// written at shutdown (the directory is gone, the disk full) is said on
// stderr; it was dropped without a word.
func TestStateLastSnapshotFailureSaid(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	var stderr strings.Builder
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-state", state, "-log", "off"}, pw, &stderr)
		pw.Close()
	}()
	if _, err := bufio.NewReader(pr).ReadString('\n'); err != nil { // listening
		cancel()
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	if err := os.RemoveAll(state); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run = %v", err)
	}
	if got := stderr.String(); !strings.Contains(got, "the last snapshot was not written") {
		t.Errorf("stderr %q does not say the last snapshot failed", got)
	}
}

// TestStateNewUntilItsFirstSnapshot: a device update (over NATS or MQTT)
// that comes once the state directory of a first start is open, before the
// snapshot of what -demo made, is refused as the server is starting. It
// was journaled: the directory held a change and no snapshot, and a crash
// then left it a state without the demo home, which every later start
// restored instead of setting the demo up.
func TestStateNewUntilItsFirstSnapshot(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	var code int
	var has bool
	var err error
	stateOpened = func(devices func(string, []byte) (int, []byte)) {
		code, _ = devices("lamp", []byte(`{"properties":{"binaryLight.powerStatus":true}}`))
		has, err = store.HasState(state)
	}
	defer func() { stateOpened = nil }()
	_, shutdown := startRun(t, "-addr", "127.0.0.1:0", "-demo", "-state", state, "-log", "off")
	shutdown("")
	if err != nil {
		t.Fatal(err)
	}
	if has {
		t.Errorf("a device update before the first snapshot (%d) left the directory a state: a crash then loses the demo", code)
	}
	if code != http.StatusServiceUnavailable {
		t.Errorf("a device update before the first snapshot = %d, want 503", code)
	}
}
