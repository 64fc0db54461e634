package dscilia_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/mediation"
)

// ciliaFiles maps every DSCilia file of Cilia's repository (and its
// .cfgcilia files, extensions that reconfigure a running chain) to the
// fixture of ours that has its shape (written for these tests in the format, not
// copied): the same elements, attributes, nesting, ports and linkers.
var ciliaFiles = map[string]string{
	"components/ea/ea-it/src/test/resources/test.dscilia":                                                   "linker-event-admin",
	"components/jms-adapter/src/test/resources/testAdapter.dscilia":                                         "adapters-in-out",
	"components/jms/jms-it/src/test/resources/test.dscilia":                                                 "linker-jms",
	"examples/autonomic-exemple/gateway/src/main/resources/save-conf-files/modbus.dscilia":                  "field-bus",
	"examples/hello-world-example-annotations/gateway/generator-mesures.dscilia":                            "readings",
	"examples/hello-world-example-annotations/gateway/presence-sensor-adapter.dscilia":                      "readings-extension",
	"examples/hello-world-example-annotations/gateway/src/main/resources/load/helloWorld.dscilia":           "gui-loop",
	"examples/hello-world-example/gateway/src/main/resources/load/tp2_1.dscilia":                            "gui-loop",
	"examples/joram-example/gateway01/load/demo.dscilia":                                                    "generator",
	"examples/joram-example/gateway01/src/main/resources/applications/demo.dscilia":                         "generator",
	"examples/joram-example/gateway01/src/main/resources/save-conf-files/demo.dscilia":                      "generator",
	"examples/joram-example/gateway02/save-conf-files/demo.dscilia":                                         "jms-in-console",
	"examples/joram-example/gateway02/src/main/resources/applications/demo.dscilia":                         "jms-in-console",
	"examples/joram-example/gateway02/src/main/resources/save-conf-files/demo.dscilia":                      "jms-in-console",
	"examples/joram-example/origina-chain.dscilia":                                                          "generator",
	"examples/monitoring-habits/distribution1/src/main/resources/save-conf-files/generator-mesures.dscilia": "readings",
	"examples/monitoring-habits/distribution2/src/main/resources/save-conf-files/generator-mesures.dscilia": "readings",
	"examples/si-example/gateway/initial-config/split-aggregate.cfgcilia":                                   "route-merge-config",
	"examples/si-example/gateway/src/main/resources/application/split-aggregate.cfgcilia":                   "route-merge-config",
	"examples/si-example/gateway/src/main/resources/save-conf-files/split-aggregate.cfgcilia":               "route-merge-config",
	"examples/si-example/gateway/initial-config/split-aggregate.dscilia":                                    "route-merge",
	"examples/si-example/gateway/save-conf-files/split-aggregate.dscilia":                                   "route-merge",
	"examples/si-example/gateway/src/main/resources/save-conf-files/split-aggregate.dscilia":                "route-merge",
	"tests/ea-it/src/main/resources/test.dscilia":                                                           "linker-event-admin",
	"tests/ea-it/src/main/resources/testAdapter.dscilia":                                                    "adapters-in-out",
	"tests/ea-it/src/test/resources/testAdapter.dscilia":                                                    "adapters-in-out",
	"tests/jms-it/src/main/resources/test.dscilia":                                                          "linker-jms",
	"tests/jms-it/src/main/resources/testAdapter.dscilia":                                                   "adapters-in-out",
	"tests/runtime/src/main/resources/EnricherTest.dscilia":                                                 "nested-properties",
	"tests/runtime/src/main/resources/ReplacerTest.dscilia":                                                 "stub-pair",
	"tests/runtime/src/main/resources/mediatorDisposedState.dscilia":                                        "stub-pair",
	"tests/runtime/src/main/resources/mediatorInvalidAfterCreateSpecification.dscilia":                      "stub-pair",
	"tests/runtime/src/main/resources/mediatorInvalidState.dscilia":                                         "stub-pair",
	"tests/runtime/src/main/resources/mediatorValid.dscilia":                                                "stub-pair",
	"tests/runtime/src/main/resources/test1.dscilia":                                                        "mediators-only",
	"tests/runtime/src/test/resources/AggregatorTest.dscilia":                                               "stub-pair",
	"tests/runtime/src/test/resources/CopyTest.dscilia":                                                     "item-maps",
	"tests/runtime/src/test/resources/EnricherTest.dscilia":                                                 "nested-properties",
	"tests/runtime/src/test/resources/ReplacerTest.dscilia":                                                 "linker-event-admin",
	"tests/runtime/src/test/resources/reliableTest.dscilia":                                                 "linker-event-admin",
	"tests/runtime/src/test/resources/remoteTest.dscilia":                                                   "remote",
	"tests/runtime/src/test/resources/test1.dscilia":                                                        "mediators-only",
	"tests/tcp-it/src/test/resources/testAdapter.dscilia":                                                   "adapters-in-out",
}

// needs lists the fixtures another must be loaded before.
var needs = map[string]string{"readings-extension": "readings", "route-merge-config": "route-merge"}

func fixture(t *testing.T, name string) *dscilia.Document {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "cilia", name+".dscilia"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := dscilia.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return d
}

// TestCiliaFiles loads every fixture, standing for every DSCilia file of
// Cilia, into an engine of its own with placeholders, and checks that what
// the engine holds is what the file describes.
func TestCiliaFiles(t *testing.T) {
	fixtures := map[string]bool{}
	for _, f := range ciliaFiles {
		fixtures[f] = true
	}
	entries, _ := os.ReadDir(filepath.Join("testdata", "cilia"))
	if len(entries) != len(fixtures) {
		t.Errorf("%d fixtures on disk, %d mapped to Cilia's files", len(entries), len(fixtures))
	}
	for name := range fixtures {
		t.Run(name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			if base, ok := needs[name]; ok {
				if _, err := dscilia.Load(e, fixture(t, base), dscilia.LoadOptions{Placeholders: true}); err != nil {
					t.Fatal(err)
				}
			}
			d := fixture(t, name)
			if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); err == nil || !errors.Is(err, mediation.ErrInvalid) || !strings.Contains(err.Error(), "unknown component types") {
				if len(unknownTypes(e, d)) > 0 {
					t.Fatalf("Load without placeholders = %v, want the unknown types listed", err)
				}
			}
			ids, err := dscilia.Load(e, d, dscilia.LoadOptions{Placeholders: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, dc := range d.Chains {
				if ids[i] != dc.ID {
					t.Errorf("loaded %v", ids)
				}
				ch, err := e.Chain(dc.ID)
				if err != nil {
					t.Fatal(err)
				}
				if ch.State() != "started" {
					t.Errorf("chain %s is %s, want started", dc.ID, ch.State())
				}
				info, _ := ch.Info()
				for _, c := range append(slices.Clone(dc.Mediators), dc.Adapters...) {
					got, err := ch.Component(c.ID)
					if err != nil {
						t.Errorf("component %s: %v", c.ID, err)
						continue
					}
					if got.Type != c.Type {
						t.Errorf("component %s has type %s, want %s (kept)", c.ID, got.Type, c.Type)
					}
					for k, v := range c.Properties {
						if d := cmp.Diff(v, got.Properties[k]); d != "" {
							t.Errorf("component %s property %s (-file +engine):\n%s", c.ID, k, d)
						}
					}
				}
				for _, r := range dc.Reconfigurations {
					got, err := ch.Component(r.ID)
					if err != nil {
						t.Errorf("reconfigured component %s: %v", r.ID, err)
						continue
					}
					for k, v := range r.Properties {
						if d := cmp.Diff(v, got.Properties[k]); d != "" {
							t.Errorf("reconfigured component %s property %s (-file +engine):\n%s", r.ID, k, d)
						}
					}
				}
				// Cilia's "unique" is the component's in or out port.
				var want []string
				for _, b := range dc.Bindings {
					want = append(want, strings.Replace(b.From, ":unique", ":out", 1)+" "+strings.Replace(b.To, ":unique", ":in", 1))
				}
				var got []string
				for _, b := range info.Bindings[len(info.Bindings)-len(dc.Bindings):] {
					got = append(got, b.From+" "+b.To)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("bindings (-file +engine):\n%s", d)
				}
			}
		})
	}
}

// unknownTypes lists the types of d that e does not know.
func unknownTypes(e *mediation.Engine, d *dscilia.Document) []string {
	var out []string
	for _, ch := range d.Chains {
		for _, c := range append(slices.Clone(ch.Mediators), ch.Adapters...) {
			if _, err := e.Registry().Type(c.Type); err != nil {
				out = append(out, c.Type)
			}
		}
	}
	return out
}

// TestPlaceholdersPassThrough: a Cilia chain of unknown types loads with
// placeholders, carries messages through unchanged, and its placeholders
// can be replaced one by one with real types.
func TestPlaceholdersPassThrough(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	if _, err := dscilia.Load(e, fixture(t, "adapters-in-out"), dscilia.LoadOptions{Placeholders: true}); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.Chain("socket")
	m := mediation.Message{Content: map[string]any{"t": 21.0}, Properties: map[string]any{"kind": "temp"}}
	if err := ch.Send("src", m.Clone()); err != nil {
		t.Fatal(err)
	}
	got, err := ch.Messages("dst")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]mediation.Message{m}, got); d != "" {
		t.Errorf("what reached dst (-sent +got):\n%s", d)
	}
	info, _ := ch.Component("mid")
	if info.Counters.In != 1 || info.Counters.Out != 1 {
		t.Errorf("mid counted %+v", info.Counters)
	}
	// Replace the placeholder mediator with a real enricher.
	if _, err := ch.AddMediator("enricher", "tagger", map[string]any{"site": "lab"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Replace("mid", "tagger"); err != nil {
		t.Fatal(err)
	}
	if err := ch.Send("src", m.Clone()); err != nil {
		t.Fatal(err)
	}
	got, _ = ch.Messages("dst")
	if len(got) != 2 || got[1].Properties["site"] != "lab" {
		t.Errorf("after the replace, dst got %v", got)
	}
}

// TestLoop: a chain that runs out of an in-out adapter and back in (Cilia's
// endpoint and window adapters) loads; the binding that closes the loop is
// made asynchronous, and a message goes round once.
func TestLoop(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	if _, err := dscilia.Load(e, fixture(t, "gui-loop"), dscilia.LoadOptions{Placeholders: true}); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.Chain("EchoChain")
	info, _ := ch.Info()
	if info.Bindings[1].Linker != "queue" {
		t.Errorf("the binding back into the window is %s, want queue", info.Bindings[1].Linker)
	}
	if err := ch.Send("window", mediation.Message{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	// The answer comes back to the window through the queue, on the
	// queue's goroutine: wait for it (a hang, not a speed check).
	var got []mediation.Message
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); runtime.Gosched() {
		got, _ = ch.Messages("window")
	}
	if len(got) != 1 || got[0].Content != "hello" {
		t.Fatalf("the window got %v back, want hello once", got)
	}
	echo, _ := ch.Component("echo")
	if echo.Counters.In != 1 {
		t.Errorf("echo processed %d messages, want 1: no loop", echo.Counters.In)
	}
}

// TestLoadIsAllOrNothing: a document whose second chain fails leaves no
// trace of its first; an existing chain is a conflict.
func TestLoadIsAllOrNothing(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	doc := `<cilia>
		<chain id="good"><mediators><mediator-instance id="p" type="passthrough"/></mediators></chain>
		<chain id="bad"><mediators><mediator-instance id="p" type="passthrough"/></mediators>
			<bindings><binding from="p:out" to="nobody:in"/></bindings></chain>
	</cilia>`
	d, err := dscilia.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); err == nil {
		t.Fatal("a binding to nobody loaded")
	}
	if got := e.Chains(); len(got) != 0 {
		t.Errorf("chains left after a failed load: %v", got)
	}
	e.CreateChain("good")
	if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); !errors.Is(err, mediation.ErrConflict) {
		t.Errorf("loading over an existing chain = %v, want a conflict", err)
	}
	// Unknown types are all named.
	d, _ = dscilia.Parse([]byte(`<cilia><chain id="x"><mediators><mediator-instance id="a" type="Zeta"/><mediator-instance id="b" type="Alpha"/></mediators></chain></cilia>`))
	if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "Alpha, Zeta") {
		t.Errorf("unknown types = %v, want Alpha, Zeta named", err)
	}
}

// typeNames returns the names of the types e's registry holds.
func typeNames(e *mediation.Engine) []string {
	var out []string
	for _, t := range e.Registry().Types() {
		out = append(out, t.Name)
	}
	return out
}

// TestPlaceholderTypesGo: a load that fails leaves no placeholder type
// behind, and PrunePlaceholders unregisters those no chain uses any more,
// keeping the ones in use.
func TestPlaceholderTypesGo(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	builtin := typeNames(e)
	parse := func(doc string) *dscilia.Document {
		t.Helper()
		d, err := dscilia.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	bad := parse(`<cilia><chain id="p"><mediators><mediator-instance id="m" type="Ghost"/></mediators>
		<bindings><binding from="m:out" to="nosuch:in"/></bindings></chain></cilia>`)
	if _, err := dscilia.Load(e, bad, dscilia.LoadOptions{Placeholders: true}); !errors.Is(err, mediation.ErrNotFound) {
		t.Fatalf("a binding to nobody = %v, want not found", err)
	}
	if diff := cmp.Diff(builtin, typeNames(e)); diff != "" {
		t.Errorf("types after a failed load (-before +after):\n%s", diff)
	}

	for _, id := range []string{"a", "b"} {
		doc := parse(`<cilia><chain id="` + id + `"><mediators><mediator-instance id="m" type="Ghost"/><mediator-instance id="n" type="Ghost` + id + `"/></mediators></chain></cilia>`)
		if _, err := dscilia.Load(e, doc, dscilia.LoadOptions{Placeholders: true}); err != nil {
			t.Fatal(err)
		}
	}
	if n := dscilia.PrunePlaceholders(e); n != 0 {
		t.Errorf("PrunePlaceholders with every placeholder in use = %d, want 0", n)
	}
	if err := e.DeleteChain("a"); err != nil {
		t.Fatal(err)
	}
	if n := dscilia.PrunePlaceholders(e); n != 1 {
		t.Errorf("PrunePlaceholders after chain a went = %d, want 1 (Ghosta; Ghost is b's too)", n)
	}
	want := append(slices.Clone(builtin), "Ghost", "Ghostb")
	slices.Sort(want)
	got := typeNames(e)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("types after pruning (-want +got):\n%s", diff)
	}
}

// TestRoundTrip: every fixture, loaded, exported, written, read and loaded
// into an empty engine, gives the same chains.
func TestRoundTrip(t *testing.T) {
	for name := range set(ciliaFiles) {
		t.Run(name, func(t *testing.T) {
			e1 := mediation.NewEngine(mediation.Config{})
			defer e1.Close()
			if base, ok := needs[name]; ok {
				dscilia.Load(e1, fixture(t, base), dscilia.LoadOptions{Placeholders: true})
			}
			ids, err := dscilia.Load(e1, fixture(t, name), dscilia.LoadOptions{Placeholders: true})
			if err != nil {
				t.Fatal(err)
			}
			var out dscilia.Document
			for _, id := range ids {
				ch, _ := e1.Chain(id)
				c, err := dscilia.Export(ch)
				if err != nil {
					t.Fatal(err)
				}
				out.Chains = append(out.Chains, c)
			}
			var buf bytes.Buffer
			if err := dscilia.Write(&buf, &out); err != nil {
				t.Fatal(err)
			}
			back, err := dscilia.Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if d := cmp.Diff(&out, back); d != "" {
				t.Fatalf("written and read (-exported +read):\n%s", d)
			}
			e2 := mediation.NewEngine(mediation.Config{})
			defer e2.Close()
			if _, err := dscilia.Load(e2, back, dscilia.LoadOptions{Placeholders: true}); err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			for _, id := range ids {
				c1, _ := e1.Chain(id)
				c2, _ := e2.Chain(id)
				x1, _ := dscilia.Export(c1)
				x2, _ := dscilia.Export(c2)
				if d := cmp.Diff(x1, x2); d != "" {
					t.Errorf("chain %s (-first engine +second):\n%s", id, d)
				}
			}
		})
	}
}

func set(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

func TestParseErrors(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{``, "no <cilia>"},
		{`<chains/>`, "not <cilia>"},
		{`<cilia><chain/></cilia>`, "without an id"},
		{`<cilia><chain id="a"/><chain id="a"/></cilia>`, "twice"},
		{`<cilia><chain id="a"><mediators><mediator-instance id="x"/></mediators></chain></cilia>`, "needs an id and a type"},
		{`<cilia><chain id="a"><bindings><binding from="x"/></bindings></chain></cilia>`, "from and a to"},
		{"<cilia>\n<chain id=\"a\">\n<mediators><mediator-instance id=\"x\" type=\"t\"><property name=\"n\" type=\"Number\" value=\"ten\"/></mediator-instance></mediators></chain></cilia>", "line 3"},
		{`<cilia><chain id="a">`, "ends inside"},
		{`<cilia></cilia><cilia/>`, "second root"},
		{`<cilia>text</cilia>`, "unexpected text"},
		{`<cilia><chain id="a" extension="maybe"/></cilia>`, "extension"},
		{`<cilia>` + strings.Repeat("<x>", 100) + strings.Repeat("</x>", 100) + `</cilia>`, "nested"},
	} {
		_, err := dscilia.Parse([]byte(tt.doc))
		if err == nil || !errors.Is(err, mediation.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%.60q) = %v, want an invalid error saying %q", tt.doc, err, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	entries, _ := os.ReadDir(filepath.Join("testdata", "cilia"))
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join("testdata", "cilia", e.Name()))
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := dscilia.Parse(data)
		if err != nil {
			return
		}
		// What reads, writes (unless XML cannot hold a string of it) and
		// reads back the same.
		var buf bytes.Buffer
		if err := dscilia.Write(&buf, d); err != nil {
			return
		}
		back, err := dscilia.Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if d := cmp.Diff(d, back); d != "" {
			t.Fatalf("(-read +written and read):\n%s", d)
		}
	})
}

// TestWriteCarriesAnyText: property values that XML cannot hold (control
// characters, U+FFFE, U+FFFF), in strings, in map keys and deep inside, are
// written as JSON and read back as they were; a property name XML cannot
// hold is an error, and nothing is written.
func TestWriteCarriesAnyText(t *testing.T) {
	props := map[string]any{
		"bell":    "a\x07b",
		"noncar":  "x\uFFFEy\uFFFF",
		"fine":    "tab\tline\nreturn\r<&\"'>",
		"keys":    map[string]any{"k\x01": "v"},
		"deepkey": map[string]any{"outer": map[string]any{"in\x02ner": 1.0}},
		"items":   map[string]any{"a": "ok", "b": "not\x03ok"},
		"nested":  map[string]any{"n": 2.0, "s": "\x1b[0m"},
		"list":    []any{"\x00", "ok"},
	}
	doc := &dscilia.Document{Chains: []dscilia.Chain{{ID: "c", Mediators: []dscilia.Component{{ID: "m", Type: "enricher", Properties: props}}}}}
	var b bytes.Buffer
	if err := dscilia.Write(&b, doc); err != nil {
		t.Fatalf("Write = %v", err)
	}
	back, err := dscilia.Parse(b.Bytes())
	if err != nil {
		t.Fatalf("Parse(written) = %v\n%s", err, b.String())
	}
	if diff := cmp.Diff(props, back.Chains[0].Mediators[0].Properties); diff != "" {
		t.Errorf("properties (-written +read):\n%s\n%s", diff, b.String())
	}

	b.Reset()
	doc.Chains[0].Mediators[0].Properties = map[string]any{"na\x01me": "v"}
	if err := dscilia.Write(&b, doc); err == nil || b.Len() != 0 {
		t.Errorf("Write of a property name with a control character = %v, %d bytes; want an error and nothing written", err, b.Len())
	}
}

// TestReconfiguration: an extension reconfigures the components it names
// by id, as Cilia's .cfgcilia files do, all or nothing with the rest of the
// document; it names components the chain has, of their kind.
func TestReconfiguration(t *testing.T) {
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	base, err := dscilia.Parse([]byte(`<cilia><chain id="words">
		<mediators><mediator-instance id="t" type="translator"><property name="dictionary"><item key="hi" value="salut"/></property></mediator-instance></mediators>
		<adapters><adapter-instance id="in" type="rest-in"/><adapter-instance id="out" type="rest-out"/></adapters>
		<bindings><binding from="in:out" to="t:in"/><binding from="t:out" to="out:in"/></bindings></chain></cilia>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dscilia.Load(e, base, dscilia.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.Chain("words")
	props := func(id string) map[string]any {
		t.Helper()
		c, err := ch.Component(id)
		if err != nil {
			t.Fatal(err)
		}
		return c.Properties
	}
	before := map[string]map[string]any{"t": props("t"), "out": props("out")}

	// Refused documents change nothing: an unknown component, a mediator
	// named as an adapter, a reconfiguration the type refuses, and one
	// followed by a binding that fails.
	for _, tt := range []struct {
		doc  string
		kind error
	}{
		{`<mediators><mediator id="nobody"/></mediators>`, mediation.ErrNotFound},
		{`<adapters><adapter id="t"/></adapters>`, mediation.ErrInvalid},
		{`<mediators><mediator id="t"><property name="dictionary" value="not a map"/></mediator></mediators>`, mediation.ErrInvalid},
		{`<mediators><mediator id="t"><property name="dictionary"><item key="hello" value="bonjour"/></property></mediator></mediators>
			<adapters><adapter id="out"><property name="capacity" type="Integer" value="5"/></adapter></adapters>
			<bindings><binding from="t:out" to="nobody:in"/></bindings>`, mediation.ErrNotFound},
	} {
		d, err := dscilia.Parse([]byte(`<cilia><chain id="words" extension="true">` + tt.doc + `</chain></cilia>`))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); !errors.Is(err, tt.kind) {
			t.Errorf("Load(%.60q) = %v, want an error of kind %v", tt.doc, err, tt.kind)
		}
		for id, want := range before {
			if diff := cmp.Diff(want, props(id)); diff != "" {
				t.Errorf("after the refused %.60q, %s's properties (-want +got):\n%s", tt.doc, id, diff)
			}
		}
	}

	d, err := dscilia.Parse([]byte(`<cilia><chain id="words" extension="true">
		<mediators><mediator id="t"><processor><property name="dictionary"><item key="hello" value="bonjour"/></property></processor></mediator></mediators>
		<adapters><adapter id="out"><property name="capacity" type="Integer" value="5"/></adapter></adapters></chain></cilia>`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	// A property is replaced whole, as over REST: the dictionary is the new one.
	if got := props("t")["dictionary"]; !cmp.Equal(got, map[string]any{"hello": "bonjour"}) {
		t.Errorf("t's dictionary = %v, want {hello: bonjour}", got)
	}
	if got := props("out")["capacity"]; got != 5.0 {
		t.Errorf("out's capacity = %v, want 5", got)
	}
	if err := ch.Send("in", mediation.Message{Content: "hello hi"}); err != nil {
		t.Fatal(err)
	}
	if ms, _ := ch.Messages("out"); len(ms) != 1 || ms[0].Content != "bonjour hi" {
		t.Errorf("messages = %+v, want the new dictionary's translation", ms)
	}
}

// TestParseCiliaForms: keyless items make a list (Cilia's String[]); a
// binding's deprecated protocol attribute is its linker.
func TestParseCiliaForms(t *testing.T) {
	d, err := dscilia.Parse([]byte(`<cilia><chain id="c">
		<mediators><mediator-instance id="e" type="enricher"><property name="arr"><item value="a"/><item value="b"/></property></mediator-instance></mediators>
		<bindings><binding from="e:out" to="f:in" protocol="event-admin"><property name="topic" value="t"/></binding></bindings></chain></cilia>`))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Chains[0].Mediators[0].Properties["arr"]; !cmp.Equal(got, []any{"a", "b"}) {
		t.Errorf("arr = %#v, want [a b]", got)
	}
	if b := d.Chains[0].Bindings[0]; b.Linker != "event-admin" {
		t.Errorf("linker = %q, want event-admin", b.Linker)
	}
	for _, doc := range []string{
		`<property name="m"><item key="k" value="v"/><item value="b"/></property>`,
		`<property name="m"><item value="b"/><item key="k" value="v"/></property>`,
		`<property name="m"><item value="b"/><property name="k" value="v"/></property>`,
	} {
		_, err := dscilia.Parse([]byte(`<cilia><chain id="c"><mediators><mediator-instance id="e" type="enricher">` + doc + `</mediator-instance></mediators></chain></cilia>`))
		if err == nil || !strings.Contains(err.Error(), "mixes") {
			t.Errorf("Parse(%s) = %v, want an error: it mixes lists and maps", doc, err)
		}
	}
}

// TestParseByteOrderMark: a document may start with a UTF-8 byte order
// mark, as editors on Windows write them.
func TestParseByteOrderMark(t *testing.T) {
	doc, err := dscilia.Parse([]byte("\xef\xbb\xbf<?xml version=\"1.0\" encoding=\"UTF-8\"?><cilia><chain id=\"bom\"/></cilia>"))
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Chains) != 1 || doc.Chains[0].ID != "bom" {
		t.Errorf("chains = %+v, want chain bom", doc.Chains)
	}
}

// TestParseLatin1: a chain file declaring ISO-8859-1 reads as its text.
func TestParseLatin1(t *testing.T) {
	doc, err := dscilia.Parse([]byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<cilia><chain id=\"c\"><mediators>" +
		"<mediator-instance id=\"m\" type=\"enricher\"><property name=\"lieu\" value=\"s\xe9jour\"/></mediator-instance></mediators></chain></cilia>"))
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Chains[0].Mediators[0].Properties["lieu"]; got != "séjour" {
		t.Errorf("property lieu = %q, want séjour", got)
	}
}

// TestWhatTheEngineTakesLoadsBack: properties the engine accepts, at the
// deepest nesting it takes and with keys a chain file gives no room for as
// an element (an empty one), export to a document that loads back the same;
// a property without a name is refused by the engine where it comes in.
func TestWhatTheEngineTakesLoadsBack(t *testing.T) {
	deep := func(levels int) map[string]any { // levels maps, the properties included
		m := map[string]any{"leaf": 1.0}
		for range levels - 1 {
			m = map[string]any{"a": m}
		}
		return m
	}
	tests := []struct {
		name  string
		props map[string]any
	}{
		{"deepest nesting", deep(mediation.MaxPropertyDepth)},
		{"deepest nesting of strings", map[string]any{"a": deep(mediation.MaxPropertyDepth - 1)["a"], "s": map[string]any{"x": "y"}}},
		{"an empty key inside", map[string]any{"a": map[string]any{"": 1.0, "b": 2.0}}},
		{"an empty key among strings", map[string]any{"a": map[string]any{"": "v"}}},
		{"an empty key deep inside", map[string]any{"a": map[string]any{"b": map[string]any{"": true}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e1 := mediation.NewEngine(mediation.Config{})
			defer e1.Close()
			ch, err := e1.CreateChain("c")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ch.AddMediator("enricher", "m", tt.props); err != nil {
				t.Fatalf("AddMediator = %v", err)
			}
			x1, err := dscilia.Export(ch)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := dscilia.Write(&buf, &dscilia.Document{Chains: []dscilia.Chain{x1}}); err != nil {
				t.Fatal(err)
			}
			back, err := dscilia.Parse(buf.Bytes())
			if err != nil {
				t.Fatalf("Parse(written) = %v\n%s", err, buf.String())
			}
			e2 := mediation.NewEngine(mediation.Config{})
			defer e2.Close()
			if _, err := dscilia.Load(e2, back, dscilia.LoadOptions{}); err != nil {
				t.Fatalf("Load(written) = %v", err)
			}
			c2, _ := e2.Chain("c")
			x2, _ := dscilia.Export(c2)
			if d := cmp.Diff(x1, x2); d != "" {
				t.Errorf("loaded back (-first engine +second):\n%s", d)
			}
		})
	}

	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	ch, _ := e.CreateChain("c")
	for _, props := range []map[string]any{{"": 1.0}, {"": "v", "b": "w"}} {
		if _, err := ch.AddMediator("enricher", "m", props); !errors.Is(err, mediation.ErrInvalid) {
			t.Errorf("AddMediator(%v) = %v, want ErrInvalid", props, err)
		}
	}
}

// TestNonFiniteNumbers: a Number property that is NaN or infinite (Java
// writes a double's infinity as "Infinity") loads, as it did before the
// engine refused numbers JSON cannot carry: it stays the text it was,
// which a component reading a number reads as that number, and the chain
// can be written out and read back.
func TestNonFiniteNumbers(t *testing.T) {
	d, err := dscilia.Parse([]byte(`<cilia><chain id="c"><mediators><mediator-instance id="m" type="enricher">
<property name="max" type="Double" value="Infinity"/>
<property name="min" type="Number" value="-Inf"/>
<property name="none" type="Float" value="NaN"/>
<property name="n" type="Number" value="2.5"/>
</mediator-instance></mediators></chain></cilia>`))
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	if _, err := dscilia.Load(e, d, dscilia.LoadOptions{}); err != nil {
		t.Fatalf("Load = %v", err)
	}
	ch, err := e.Chain("c")
	if err != nil {
		t.Fatal(err)
	}
	info, err := ch.Component("m")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"max": "Infinity", "min": "-Inf", "none": "NaN", "n": 2.5}
	for k, v := range want {
		if got := info.Properties[k]; got != v {
			t.Errorf("property %s = %#v, want %#v", k, got, v)
		}
	}
	x, err := dscilia.Export(ch)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := dscilia.Write(&buf, &dscilia.Document{Chains: []dscilia.Chain{x}}); err != nil {
		t.Fatalf("Write = %v", err)
	}
	if _, err := dscilia.Parse(buf.Bytes()); err != nil {
		t.Errorf("Parse(written) = %v\n%s", err, buf.String())
	}
}

// TestUniquePort: Cilia's "unique" port is a component's only port on that
// side, whatever its name (a router without conditions has one out port,
// default), and its in or out port when it has several.
func TestUniquePort(t *testing.T) {
	doc, err := dscilia.Parse([]byte(`<cilia><chain id="c">
	<adapters><adapter-instance id="in" type="rest-in"/><adapter-instance id="o" type="rest-out"/></adapters>
	<mediators>
		<mediator-instance id="r" type="router"/>
		<mediator-instance id="p" type="placeholder-type"/>
	</mediators>
	<bindings>
		<binding from="in" to="r"/>
		<binding from="r" to="p"/>
		<binding from="p:extra" to="o"/>
		<binding from="p" to="o"/>
	</bindings>
</chain></cilia>`))
	if err != nil {
		t.Fatal(err)
	}
	e := mediation.NewEngine(mediation.Config{})
	defer e.Close()
	if _, err := dscilia.Load(e, doc, dscilia.LoadOptions{Placeholders: true}); err != nil {
		t.Fatal(err)
	}
	ch, _ := e.Chain("c")
	info, _ := ch.Info()
	var got []string
	for _, b := range info.Bindings {
		got = append(got, b.From+" "+b.To)
	}
	want := []string{"in:out r:in", "r:default p:in", "p:extra o:in", "p:out o:in"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bindings (-want +got):\n%s", diff)
	}
}

// TestColonInComponentIDs: a component id may hold ':' (ids are letters,
// digits and -_.:), and a port never does, so an endpoint is split at its
// last ':', as the engine splits it. Cilia's default port and the ports of
// a placeholder, which the bindings give, work for such an id as for any.
func TestColonInComponentIDs(t *testing.T) {
	for _, tt := range []struct {
		name, doc string
		want      []mediation.BindingInfo
	}{
		{"default ports", `<cilia><chain id="c"><mediators><mediator-instance id="p:1" type="passthrough"/></mediators>
			<adapters><adapter-instance id="in:a" type="rest-in"/><adapter-instance id="out" type="rest-out"/></adapters>
			<bindings><binding from="in:a:unique" to="p:1:unique"/><binding from="p:1:unique" to="out:unique"/></bindings></chain></cilia>`,
			[]mediation.BindingInfo{{From: "in:a:out", To: "p:1:in", Linker: "direct"}, {From: "p:1:out", To: "out:in", Linker: "direct"}}},
		{"placeholder ports", `<cilia><chain id="c"><mediators><mediator-instance id="g:h" type="Ghost"/></mediators>
			<adapters><adapter-instance id="out" type="rest-out"/></adapters>
			<bindings><binding from="g:h:left" to="out:in"/><binding from="g:h:unique" to="out:in"/></bindings></chain></cilia>`,
			[]mediation.BindingInfo{{From: "g:h:left", To: "out:in", Linker: "direct"}, {From: "g:h:out", To: "out:in", Linker: "direct"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dscilia.Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			if _, err := dscilia.Load(e, d, dscilia.LoadOptions{Placeholders: true}); err != nil {
				t.Fatalf("Load = %v", err)
			}
			ch, _ := e.Chain("c")
			ci, err := ch.Info()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ci.Bindings); diff != "" {
				t.Errorf("bindings (-want +got):\n%s", diff)
			}
		})
	}
}
