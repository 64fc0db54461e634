// Command server serves the home simulation and the mediation engine over
// HTTP, as the REST contract describes them.
//
//	go run ./cmd/server                       # http://127.0.0.1:8080/platform/...
//	go run ./cmd/server -addr :9000 -platform-root icasa -mediation-root cilia
//
// It stops gracefully on SIGINT or SIGTERM; a second one stops it at once.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	finished := make(chan struct{})
	defer close(finished) // before stop: its end of ctx is no signal
	go secondSignal(ctx, stop, finished, os.Stderr)
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// secondSignal waits for the first signal (ctx's end), which starts the
// graceful shutdown, then calls stop, so that a second ends the process at
// once, as a signal does by default (with -state, what was acknowledged is
// in the journal already), and says so on w. It returns, saying nothing,
// once finished is closed: run returned, and ctx ends because main calls
// stop as it returns (after -version, say), not because of a signal.
func secondSignal(ctx context.Context, stop func(), finished <-chan struct{}, w io.Writer) {
	select {
	case <-ctx.Done():
	case <-finished:
		return
	}
	select {
	case <-finished: // both were ready: ctx ended with main
		return
	default:
	}
	stop()
	fmt.Fprintln(w, "server: stopping; Ctrl-C again stops it at once")
}
