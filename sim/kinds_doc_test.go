package sim_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/sim"
)

var updateKinds = flag.Bool("update-kinds", false, "rewrite docs/kinds.md from the kind registry")

// kindsDoc writes the table of every built-in kind's properties, as the
// realistic model has them (the contract model has the same but
// luminous_efficacy and the openings' area).
func kindsDoc() []byte {
	var b bytes.Buffer
	b.WriteString("# Device kinds\n\n")
	b.WriteString("Generated from the kind registry (`sim.NewKindRegistry`) by `go test ./sim -run TestKindsDoc -update-kinds`;\n")
	b.WriteString("a test fails when this file is stale. `GET /platform/devices/kinds` serves the same, as JSON.\n\n")
	b.WriteString("Derived properties are set by the simulation: a value sent for one is ignored, so a device read can be sent back as it is.\n")
	b.WriteString("Properties marked *realistic* exist only in homes of the realistic physics model.\n")
	h := sim.MustNew(sim.Config{Physics: sim.PhysicsRealistic})
	for _, k := range h.DeviceKinds() {
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n", k.Type(), k.Doc)
		if len(k.Properties) == 0 {
			b.WriteString("No property of its own.\n")
			continue
		}
		b.WriteString("| Property | Type | Range | Default | Unit | Derived | Also accepted | Meaning |\n|---|---|---|---|---|---|---|---|\n")
		for _, p := range k.Properties {
			rng := ""
			if p.Min != 0 || p.Max != 0 {
				rng = fmt.Sprintf("%g – %g", p.Min, p.Max)
			}
			derived := ""
			if p.Derived {
				derived = "yes"
				if p.Follows != "" {
					derived = "follows the zone's " + p.Follows
				}
			}
			doc := p.Doc
			if p.Physics != "" {
				doc += " (*" + string(p.Physics) + "*)"
			}
			aliases := ""
			if len(p.Aliases) > 0 {
				aliases = "`" + strings.Join(p.Aliases, "`, `") + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %v | %s | %s | %s | %s |\n", p.Name, p.Type, rng, fmtDefault(p.Default), p.Unit, derived, aliases, doc)
		}
	}
	return b.Bytes()
}

func fmtDefault(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// TestKindsDoc fails when docs/kinds.md is not what the registry says.
func TestKindsDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "kinds.md")
	want := kindsDoc()
	if *updateKinds {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("docs/kinds.md is stale (%v): go test ./sim -run TestKindsDoc -update-kinds", err)
	}
}
