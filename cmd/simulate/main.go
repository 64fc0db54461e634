// Command simulate plays iCasa .bhv scripts in simulated time, as fast as
// the machine allows, and writes what happened: every event as JSON lines,
// the zones' variables and the sensors' readings as CSV, and a plot of each
// zone's temperature and illuminance.
//
//	go run ./cmd/simulate -for 24h -events day.jsonl -csv day.csv -plot day.svg examples/scripts/house.bhv
//
// The scripts play one after the other in one home, from the first one's
// start date (or -start). The same inputs give byte-identical outputs. It
// exits with status 2 on an error in the command line (a flag that does not
// exist or whose value is wrong, no script), 1 on any other error (a script
// that does not parse, an action that fails: each named by file and line),
// 0 otherwise. Ctrl-C (or SIGTERM) stops the run early, writes the outputs
// up to that instant and exits with status 1.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Ctrl-C or SIGTERM ends the run at its next step, with its outputs
	// written as far as it got; a second one kills it at once.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	os.Exit(exitCode(runContext(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}
