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
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first signal starts the graceful shutdown; a second ends the
		// process at once, as a signal does by default (with -state, what
		// was acknowledged is in the journal already).
		<-ctx.Done()
		stop()
		fmt.Fprintln(os.Stderr, "server: stopping; Ctrl-C again stops it at once")
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}
