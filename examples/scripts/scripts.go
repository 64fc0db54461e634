// Package scripts holds the example scenarios, embedded so that programs
// (such as the server's -demo mode) can play them from anywhere.
package scripts

import _ "embed"

// House is house.bhv: a winter morning in a four-room house, from 06:30,
// with heaters, lights, sensors and two persons.
//
//go:embed house.bhv
var House []byte
