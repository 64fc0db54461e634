// Package dscilia reads and writes DSCilia, the XML in which Cilia's users
// describe mediation chains, and loads such descriptions into a
// [mediation.Engine] or writes an engine's chains out.
//
// A document is a <cilia> element holding <chain id="…"> elements. A chain
// holds <mediators> (<mediator-instance id type namespace>), <adapters>
// (<adapter-instance …>) and <bindings> (<binding from="a:port" to="b:port"
// linker="…">). A component's properties are <property name value> elements,
// directly under the instance or under its <processor>, <dispatcher> or
// <scheduler>; a property whose value is a map holds <item key value>
// elements or nested <property name value> elements. A content-based
// dispatcher (<content-based language><when condition sendTo/>, in any
// namespace) is read as the properties "language" and "conditions" (a map
// from condition to port). A chain marked extension="true" adds to a chain
// of that id instead of making it, and may reconfigure its components as
// Cilia's .cfgcilia files do: a <mediator id> or <adapter id> (no type),
// under its <mediators> or <adapters>, holds properties merged into that
// component's. A binding's deprecated
// protocol attribute stands for its linker. Other elements are skipped.
//
// Values are strings unless the property's type attribute says otherwise:
// Number (also Integer, Long, Float, Double), Boolean, or json (the value
// attribute holds JSON), which is how [Write] keeps every property value
// as it was. A Number that is NaN or infinite stays a string, which JSON
// can carry and a component reads as that number.
//
// Everything this package exports is safe for concurrent use, as long as a
// [Document] is not modified while another goroutine reads it.
package dscilia

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/internal/xmlcharset"
	"github.com/pervasim/pervasim/mediation"
)

// Document is a DSCilia document: its chains, in order.
type Document struct {
	Chains []Chain
}

// Chain is one <chain> element.
type Chain struct {
	// ID is the chain's id.
	ID string
	// Type is Cilia's chain type attribute, kept as it was.
	Type string
	// Extension marks a chain that adds to the chain of its id.
	Extension bool
	// Mediators and Adapters are the components, in document order.
	Mediators []Component
	Adapters  []Component
	// Bindings are the bindings, in document order.
	Bindings []Binding
	// Reconfigurations are, in an extension, the <mediator id> and
	// <adapter id> elements of Cilia's .cfgcilia format, in document order.
	Reconfigurations []Reconfiguration
}

// Reconfiguration is a <mediator id> or <adapter id> of an extension:
// properties to merge into an existing component of the chain, as
// Chain.UpdateProperties does.
type Reconfiguration struct {
	ID string
	// Adapter is set for an <adapter id>.
	Adapter    bool
	Properties map[string]any
}

// Component is a <mediator-instance> or an <adapter-instance>.
type Component struct {
	ID        string
	Type      string
	Namespace string
	// Properties are the component's properties; nil when it has none.
	Properties map[string]any
}

// Binding is a <binding>. From and To are "<component>:<port>"; a missing
// port is Cilia's default port name, "unique".
type Binding struct {
	From, To string
	// Linker is empty for the default (direct) linker.
	Linker     string
	Properties map[string]any
}

// DefaultPort is Cilia's port name when a component has one port on a side.
const DefaultPort = "unique"

// maxDepth bounds the nesting of elements: room for property values nested
// as deep as the engine takes them, inside the few elements of the document
// around them (cilia, chain, mediators, mediator).
const maxDepth = mediation.MaxPropertyDepth + 16

// Parse reads a DSCilia document. Errors are of kind Invalid (400 over
// REST) and name the line.
func Parse(data []byte) (*Document, error) {
	data, err := xmlcharset.ToUTF8(data)
	if err != nil {
		return nil, errkind.Errorf(errkind.Invalid, "DSCilia: line 1: %v", err)
	}
	p := &parser{dec: xml.NewDecoder(bytes.NewReader(data)), data: data}
	p.dec.Strict = true
	p.dec.CharsetReader = xmlcharset.Converted
	doc, err := p.document()
	if err != nil {
		return nil, errkind.Errorf(errkind.Invalid, "DSCilia: %v", err)
	}
	return doc, nil
}

type parser struct {
	dec   *xml.Decoder
	data  []byte
	depth int
}

// line returns the line the decoder is at.
func (p *parser) line() int {
	off := min(int(p.dec.InputOffset()), len(p.data))
	return 1 + bytes.Count(p.data[:off], []byte("\n"))
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("line %d: %s", p.line(), fmt.Sprintf(format, args...))
}

// next returns the next start or end element, skipping text, comments and
// the like.
func (p *parser) next() (xml.Token, error) {
	for {
		t, err := p.dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, err
			}
			if strings.Contains(err.Error(), "unexpected EOF") {
				return nil, p.errorf("the document ends inside an element")
			}
			return nil, p.errorf("%v", err)
		}
		switch t := t.(type) {
		case xml.StartElement:
			p.depth++
			if p.depth > maxDepth {
				return nil, p.errorf("elements nested more than %d deep", maxDepth)
			}
			return t, nil
		case xml.EndElement:
			p.depth--
			return t, nil
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return nil, p.errorf("unexpected text %q", bytes.TrimSpace(t))
			}
		}
	}
}

// skip skips the rest of the element just started.
func (p *parser) skip() error {
	for {
		t, err := p.next()
		if err != nil {
			return p.eof(err)
		}
		switch t.(type) {
		case xml.StartElement:
			if err := p.skip(); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

func (p *parser) eof(err error) error {
	if errors.Is(err, io.EOF) {
		return p.errorf("the document ends inside an element")
	}
	return err
}

// children calls f for each child element of the element just started,
// until its end.
func (p *parser) children(f func(xml.StartElement) error) error {
	for {
		t, err := p.next()
		if err != nil {
			return p.eof(err)
		}
		switch t := t.(type) {
		case xml.StartElement:
			if err := f(t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

func attr(e xml.StartElement, name string) (string, bool) {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value, true
		}
	}
	return "", false
}

func (p *parser) document() (*Document, error) {
	var root xml.StartElement
	for {
		t, err := p.next()
		if errors.Is(err, io.EOF) {
			return nil, p.errorf("no <cilia> element")
		}
		if err != nil {
			return nil, err
		}
		if s, ok := t.(xml.StartElement); ok {
			root = s
			break
		}
	}
	if root.Name.Local != "cilia" {
		return nil, p.errorf("the root element is <%s>, not <cilia>", root.Name.Local)
	}
	doc := &Document{}
	ids := map[string]bool{}
	err := p.children(func(e xml.StartElement) error {
		if e.Name.Local != "chain" {
			return p.skip()
		}
		ch, err := p.chain(e)
		if err != nil {
			return err
		}
		if ids[ch.ID] {
			return p.errorf("chain %q is described twice", ch.ID)
		}
		ids[ch.ID] = true
		doc.Chains = append(doc.Chains, ch)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.next()
		if errors.Is(err, io.EOF) {
			return doc, nil
		}
		if err != nil {
			return nil, err
		}
		if _, ok := t.(xml.StartElement); ok {
			return nil, p.errorf("a second root element")
		}
	}
}

func (p *parser) chain(e xml.StartElement) (Chain, error) {
	var ch Chain
	ch.ID, _ = attr(e, "id")
	if ch.ID == "" {
		return ch, p.errorf("a chain without an id")
	}
	ch.Type, _ = attr(e, "type")
	if v, ok := attr(e, "extension"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return ch, p.errorf("chain %s: extension %q is not true or false", ch.ID, v)
		}
		ch.Extension = b
	}
	ids := map[string]bool{}
	err := p.children(func(e xml.StartElement) error {
		switch e.Name.Local {
		case "mediators", "adapters":
			section := e.Name.Local
			want := "mediator-instance"
			list := &ch.Mediators
			if e.Name.Local == "adapters" {
				want, list = "adapter-instance", &ch.Adapters
			}
			return p.children(func(e xml.StartElement) error {
				if ch.Extension && e.Name.Local+"s" == section {
					r := Reconfiguration{Adapter: section == "adapters"}
					r.ID, _ = attr(e, "id")
					if r.ID == "" {
						return p.errorf("<%s> needs an id", e.Name.Local)
					}
					props, err := p.properties()
					if len(props) > 0 {
						r.Properties = props
					}
					ch.Reconfigurations = append(ch.Reconfigurations, r)
					return err
				}
				if e.Name.Local != want {
					return p.skip()
				}
				c, err := p.component(e)
				if err != nil {
					return err
				}
				if ids[c.ID] {
					return p.errorf("chain %s: component %q is described twice", ch.ID, c.ID)
				}
				ids[c.ID] = true
				*list = append(*list, c)
				return nil
			})
		case "bindings":
			return p.children(func(e xml.StartElement) error {
				if e.Name.Local != "binding" {
					return p.skip()
				}
				b, err := p.binding(e)
				if err != nil {
					return err
				}
				ch.Bindings = append(ch.Bindings, b)
				return nil
			})
		}
		return p.skip()
	})
	return ch, err
}

func (p *parser) component(e xml.StartElement) (Component, error) {
	var c Component
	c.ID, _ = attr(e, "id")
	c.Type, _ = attr(e, "type")
	c.Namespace, _ = attr(e, "namespace")
	if c.ID == "" || c.Type == "" {
		return c, p.errorf("<%s> needs an id and a type", e.Name.Local)
	}
	props, err := p.properties()
	if len(props) > 0 {
		c.Properties = props
	}
	return c, err
}

// properties reads the properties of the component element just started:
// its <property> children, directly or under its <processor>, <dispatcher>
// or <scheduler>, and a content-based dispatcher's conditions.
func (p *parser) properties() (map[string]any, error) {
	props := map[string]any{}
	var section func(e xml.StartElement) error
	section = func(e xml.StartElement) error {
		switch e.Name.Local {
		case "property":
			name, v, err := p.property(e)
			if err != nil {
				return err
			}
			props[name] = v
			return nil
		case "processor", "dispatcher", "scheduler":
			return p.children(section)
		case "content-based":
			if lang, ok := attr(e, "language"); ok {
				props["language"] = lang
			}
			conds := map[string]any{}
			err := p.children(func(e xml.StartElement) error {
				if e.Name.Local != "when" {
					return p.skip()
				}
				cond, _ := attr(e, "condition")
				to, _ := attr(e, "sendTo")
				if cond == "" || to == "" {
					return p.errorf("<when> needs a condition and a sendTo")
				}
				conds[cond] = to
				return p.skip()
			})
			if err != nil {
				return err
			}
			props["conditions"] = conds
			return nil
		}
		return p.skip()
	}
	err := p.children(section)
	return props, err
}

// property reads a <property>: its value attribute (read by its type
// attribute), or its <item> or <property> children as a map.
func (p *parser) property(e xml.StartElement) (string, any, error) {
	name, _ := attr(e, "name")
	if name == "" {
		return "", nil, p.errorf("a property without a name")
	}
	typ, _ := attr(e, "type")
	value, hasValue := attr(e, "value")
	// Items with keys (or nested properties) make a map; items without
	// keys, a list of their values (Cilia's String[]).
	var m map[string]any
	var list []any
	err := p.children(func(c xml.StartElement) error {
		if m == nil {
			m = map[string]any{}
		}
		switch c.Name.Local {
		case "item":
			k, keyed := attr(c, "key")
			v, _ := attr(c, "value")
			if keyed {
				m[k] = v
			} else {
				list = append(list, v)
			}
			if len(list) > 0 && len(m) > 0 {
				return p.errorf("property %s mixes <item>s with and without a key", name)
			}
			return p.skip()
		case "property":
			k, v, err := p.property(c)
			if err != nil {
				return err
			}
			m[k] = v
			if len(list) > 0 {
				return p.errorf("property %s mixes <item>s without a key with <property>s", name)
			}
			return nil
		}
		return p.skip()
	})
	if err != nil {
		return "", nil, err
	}
	if m != nil {
		if hasValue {
			return "", nil, p.errorf("property %s has both a value and items", name)
		}
		if list != nil {
			return name, list, nil
		}
		return name, m, nil
	}
	v, err := typedValue(typ, value)
	if err != nil {
		return "", nil, p.errorf("property %s: %v", name, err)
	}
	return name, v, nil
}

// typedValue reads a value attribute by its type attribute.
func typedValue(typ, value string) (any, error) {
	switch strings.ToLower(typ) {
	case "", "string":
		return value, nil
	case "number", "integer", "int", "long", "short", "float", "double":
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			// NaN and Infinity (as Java writes a double) stay text, as
			// mediation.ParseProperties keeps them: the engine refuses a
			// number JSON cannot carry, and a component reading a number
			// property reads this text as the number all the same.
			return value, nil
		}
		return f, nil
	case "boolean", "bool":
		b, err := strconv.ParseBool(strings.TrimSpace(value))
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false", value)
		}
		return b, nil
	case "json":
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			return nil, fmt.Errorf("%q is not JSON", value)
		}
		return v, nil
	}
	return nil, fmt.Errorf("type %q: want String, Number, Boolean or json", typ)
}

func (p *parser) binding(e xml.StartElement) (Binding, error) {
	var b Binding
	b.From, _ = attr(e, "from")
	b.To, _ = attr(e, "to")
	b.Linker, _ = attr(e, "linker")
	if b.Linker == "" {
		b.Linker, _ = attr(e, "protocol") // its deprecated name
	}
	if b.From == "" || b.To == "" {
		return b, p.errorf("a binding needs a from and a to")
	}
	b.From, b.To = withPort(b.From), withPort(b.To)
	props := map[string]any{}
	err := p.children(func(c xml.StartElement) error {
		if c.Name.Local != "property" {
			return p.skip()
		}
		k, v, err := p.property(c)
		if err == nil {
			props[k] = v
		}
		return err
	})
	if len(props) > 0 {
		b.Properties = props
	}
	return b, err
}

// withPort adds Cilia's default port to an endpoint without one.
func withPort(end string) string {
	if strings.Contains(end, ":") {
		return end
	}
	return end + ":" + DefaultPort
}

// Write writes d as DSCilia, indented, so that Parse reads back the same
// document. It fails on a property value that JSON cannot hold. It panics
// if d is nil.
func Write(w io.Writer, d *Document) (err error) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(errNotXML)
			if !ok {
				panic(r)
			}
			err = e
		}
	}()
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cilia>\n")
	for _, ch := range d.Chains {
		b.WriteString("\t<chain")
		writeAttr(&b, "id", ch.ID)
		if ch.Type != "" {
			writeAttr(&b, "type", ch.Type)
		}
		if ch.Extension {
			writeAttr(&b, "extension", "true")
		}
		b.WriteString(">\n")
		for _, sec := range []struct {
			name, elem string
			list       []Component
			adapter    bool
		}{{"mediators", "mediator-instance", ch.Mediators, false}, {"adapters", "adapter-instance", ch.Adapters, true}} {
			var re []Reconfiguration
			if ch.Extension {
				for _, r := range ch.Reconfigurations {
					if r.Adapter == sec.adapter {
						re = append(re, r)
					}
				}
			}
			if len(sec.list) == 0 && len(re) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\t\t<%s>\n", sec.name)
			for _, r := range re {
				elem := strings.TrimSuffix(sec.name, "s")
				fmt.Fprintf(&b, "\t\t\t<%s", elem)
				writeAttr(&b, "id", r.ID)
				b.WriteString(">\n")
				if err := writeProperties(&b, r.Properties, 4); err != nil {
					return fmt.Errorf("chain %s, component %s: %w", ch.ID, r.ID, err)
				}
				fmt.Fprintf(&b, "\t\t\t</%s>\n", elem)
			}
			for _, c := range sec.list {
				fmt.Fprintf(&b, "\t\t\t<%s", sec.elem)
				writeAttr(&b, "id", c.ID)
				writeAttr(&b, "type", c.Type)
				if c.Namespace != "" {
					writeAttr(&b, "namespace", c.Namespace)
				}
				if len(c.Properties) == 0 {
					b.WriteString("/>\n")
					continue
				}
				b.WriteString(">\n")
				if err := writeProperties(&b, c.Properties, 4); err != nil {
					return fmt.Errorf("chain %s, component %s: %w", ch.ID, c.ID, err)
				}
				fmt.Fprintf(&b, "\t\t\t</%s>\n", sec.elem)
			}
			fmt.Fprintf(&b, "\t\t</%s>\n", sec.name)
		}
		if len(ch.Bindings) > 0 {
			b.WriteString("\t\t<bindings>\n")
			for _, x := range ch.Bindings {
				b.WriteString("\t\t\t<binding")
				writeAttr(&b, "from", x.From)
				writeAttr(&b, "to", x.To)
				if x.Linker != "" {
					writeAttr(&b, "linker", x.Linker)
				}
				if len(x.Properties) == 0 {
					b.WriteString("/>\n")
					continue
				}
				b.WriteString(">\n")
				if err := writeProperties(&b, x.Properties, 4); err != nil {
					return fmt.Errorf("chain %s, binding %s -> %s: %w", ch.ID, x.From, x.To, err)
				}
				b.WriteString("\t\t\t</binding>\n")
			}
			b.WriteString("\t\t</bindings>\n")
		}
		b.WriteString("\t</chain>\n")
	}
	b.WriteString("</cilia>\n")
	_, err = w.Write(b.Bytes())
	return err
}

// errNotXML is what writeAttr panics with, and Write returns, for a string
// that XML cannot hold.
type errNotXML struct{ s string }

func (e errNotXML) Error() string {
	return fmt.Sprintf("%q holds characters XML cannot hold", e.s)
}

func writeAttr(b *bytes.Buffer, name, value string) {
	b.WriteString(" " + name + `="`)
	xmlEscape(b, value)
	b.WriteString(`"`)
}

// xmlEscape escapes s for an attribute, keeping whitespace characters as
// character references so that they read back as they were. It panics
// with errNotXML for invalid UTF-8 or a character XML 1.0 excludes.
func xmlEscape(b *bytes.Buffer, s string) {
	if !xmlcharset.Text(s) {
		panic(errNotXML{s})
	}
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		case '\t':
			b.WriteString("&#x9;")
		case '\n':
			b.WriteString("&#xA;")
		case '\r':
			b.WriteString("&#xD;")
		default:
			b.WriteRune(r)
		}
	}
}

// writeProperties writes props sorted by name: strings as values, maps of
// strings as items, maps as nested properties, other values with a type.
func writeProperties(b *bytes.Buffer, props map[string]any, indent int) error {
	tabs := strings.Repeat("\t", indent)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(tabs + "<property")
		writeAttr(b, "name", k)
		switch v := props[k].(type) {
		case string:
			if !xmlcharset.Text(v) {
				if err := writeJSON(b, v); err != nil {
					return fmt.Errorf("property %s: %w", k, err)
				}
				continue
			}
			writeAttr(b, "value", v)
			b.WriteString("/>\n")
		case float64:
			writeAttr(b, "type", "Number")
			writeAttr(b, "value", strconv.FormatFloat(v, 'g', -1, 64))
			b.WriteString("/>\n")
		case bool:
			writeAttr(b, "type", "Boolean")
			writeAttr(b, "value", strconv.FormatBool(v))
			b.WriteString("/>\n")
		case map[string]any:
			if len(v) == 0 || !xmlKeys(v) {
				// Empty, or with a key XML cannot hold: as JSON, which
				// escapes it.
				if err := writeJSON(b, v); err != nil {
					return fmt.Errorf("property %s: %w", k, err)
				}
				continue
			}
			b.WriteString(">\n")
			if allStrings(v) {
				for _, ik := range slices.Sorted(maps.Keys(v)) {
					b.WriteString(tabs + "\t<item")
					writeAttr(b, "key", ik)
					writeAttr(b, "value", v[ik].(string))
					b.WriteString("/>\n")
				}
			} else if err := writeProperties(b, v, indent+1); err != nil {
				return err
			}
			b.WriteString(tabs + "</property>\n")
		default:
			if err := writeJSON(b, v); err != nil {
				return fmt.Errorf("property %s: %w", k, err)
			}
		}
	}
	return nil
}

// writeJSON ends a property element with v as a value of type json, which
// carries what XML cannot (xmlcharset.JSON).
func writeJSON(b *bytes.Buffer, v any) error {
	s, err := xmlcharset.JSON(v)
	if err != nil {
		return err
	}
	writeAttr(b, "type", "json")
	writeAttr(b, "value", s)
	b.WriteString("/>\n")
	return nil
}

// allStrings reports whether every value of m is a string XML can hold, so
// that m can be written as items.
func allStrings(m map[string]any) bool {
	for _, v := range m {
		if s, ok := v.(string); !ok || !xmlcharset.Text(s) {
			return false
		}
	}
	return true
}

// xmlKeys reports whether XML can hold every key of m and of the maps in
// it, and none is empty, so that it can be written as nested properties or
// items.
func xmlKeys(m map[string]any) bool {
	for k, v := range m {
		if k == "" || !xmlcharset.Text(k) { // a nameless <property> does not read back
			return false
		}
		if sub, ok := v.(map[string]any); ok && !xmlKeys(sub) {
			return false
		}
	}
	return true
}
