package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
