// Command simulate plays iCasa .bhv scripts in simulated time, as fast as
// the machine allows, and writes what happened: every event as JSON lines,
// the zones' variables and the sensors' readings as CSV, and a plot of each
// zone's temperature and illuminance.
//
//	go run ./cmd/simulate -for 24h -events day.jsonl -csv day.csv -plot day.svg examples/scripts/house.bhv
//
// The scripts play one after the other in one home, from the first one's
// start date (or -start). The same inputs give byte-identical outputs. It
// exits with status 1 on any error (a script that does not parse, an action
// that fails: each named by file and line), 0 otherwise.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "simulate:", err)
			os.Exit(1)
		}
	}
}
