package natsbus

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/pervasim/pervasim/internal/errkind"
	"github.com/pervasim/pervasim/mediation"
)

// validJSName is what JetStream takes as a stream or consumer name (the
// server's isValidAssetName, and its length bound).
func validJSName(s string) bool {
	return s != "" && len(s) <= maxNameLength && !strings.ContainsAny(s, " \t\r\n\f.*>/\\")
}

// FuzzAdapterProperties gives the nats-in and nats-out adapters and the
// nats linker any string properties (they come from REST requests and
// DSCilia documents): each refuses them with an error of kind Invalid (400
// over REST) or takes only what NATS and JetStream take later, when the
// chain starts or a message is published: a refusal then would only be
// counted, or fail the start with an error of no kind (500).
func FuzzAdapterProperties(f *testing.F) {
	f.Add(uint8(0), "work", "workers", "", "", "")
	f.Add(uint8(0), "sensors.>", "", "S", "worker", "100")
	f.Add(uint8(0), "a.>.b", "", "", "", "")
	f.Add(uint8(0), "work", "two words", "", "", "")
	f.Add(uint8(1), "out.x", "", "S", "true", "5s")
	f.Add(uint8(1), "out.*", "", "", "false", "2m")
	f.Add(uint8(1), "out\fx", "", "S", "", "1s")
	f.Add(uint8(2), "link.x", "send", "S", "", "10")
	f.Add(uint8(2), "", "both", "", "", "")
	f.Add(uint8(2), "a..b", "receive", "S.T", "d", "x")
	f.Fuzz(func(t *testing.T, which uint8, subject, a, stream, b, c string) {
		ch := &Chains{streams: map[string]bool{}}
		props := map[string]any{}
		set := func(k, v string) {
			if v != "" {
				props[k] = v
			}
		}
		set("subject", subject)
		set("stream", stream)
		check := func(err error) bool {
			t.Helper()
			if err != nil && !errors.Is(err, errkind.Invalid) {
				t.Fatalf("%v: error %v of no kind Invalid", props, err)
			}
			return err == nil
		}
		checkName := func(what, name string) {
			t.Helper()
			if name != "" && !validJSName(name) {
				t.Fatalf("%v: %s %q taken, which JetStream refuses", props, what, name)
			}
		}
		switch which % 3 {
		case 0:
			set("queue", a)
			set("durable", b)
			set("dedup-window", c)
			v, err := ch.newIn(props, mediation.Env{Chain: "c", ID: "in"})
			if !check(err) {
				return
			}
			in := v.(*natsIn)
			if !server.IsValidSubject(in.subject) {
				t.Fatalf("%v: subject %q taken, which NATS refuses", props, in.subject)
			}
			if in.queue != "" && strings.ContainsAny(in.queue, " \t\r\n\f") {
				t.Fatalf("%v: queue group %q taken, which NATS refuses", props, in.queue)
			}
			checkName("stream", in.stream)
			checkName("durable", in.durable)
		case 1:
			set("jetstream", b)
			set("timeout", c)
			v, err := ch.newOut(props, mediation.Env{Chain: "c", ID: "out"})
			if !check(err) {
				return
			}
			o := v.(*natsOut)
			if !server.IsValidPublishSubject(o.subject) {
				t.Fatalf("%v: subject %q taken, which NATS refuses to publish to", props, o.subject)
			}
			checkName("stream", o.stream)
			if o.timeout <= 0 || o.timeout > time.Minute {
				t.Fatalf("%v: timeout %v", props, o.timeout)
			}
		case 2:
			set("role", a)
			set("durable", b)
			set("dedup-window", c)
			v, err := ch.newLink(props, nil)
			if !check(err) {
				return
			}
			l := v.(*natsLink)
			l.cancel()
			if !server.IsValidPublishSubject(l.subject) {
				t.Fatalf("%v: subject %q taken, which NATS refuses", props, l.subject)
			}
			checkName("stream", l.stream)
			checkName("durable", l.durable)
		}
	})
}
