package mediation

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"time"
)

// rest-in.

func newRestIn(map[string]any, Env) (any, error) {
	return InjectorFunc(func(m Message, out Emitter) error {
		out.Emit("out", m)
		return nil
	}), nil
}

// rest-out.

type restOut struct {
	buf      []Message // ring of capacity len(buf)
	sizes    []int
	head     int
	n        int
	bytes    int
	maxBytes int
}

// DefaultRestOutMaxBytes is the most bytes of messages a rest-out keeps
// without a max-bytes property: 64 MiB.
const DefaultRestOutMaxBytes = 64 << 20

func newRestOut(props map[string]any, _ Env) (any, error) {
	c, err := IntProperty(props, "capacity", 100, 1, 1<<20)
	if err != nil {
		return nil, err
	}
	mb, err := IntProperty(props, "max-bytes", DefaultRestOutMaxBytes, 1024, 1<<30)
	if err != nil {
		return nil, err
	}
	return &restOut{buf: make([]Message, c), sizes: make([]int, c), maxBytes: mb}, nil
}

// dropOldest forgets the oldest message.
func (r *restOut) dropOldest() {
	r.bytes -= r.sizes[r.head]
	r.buf[r.head], r.sizes[r.head] = Message{}, 0
	r.head = (r.head + 1) % len(r.buf)
	r.n--
}

func (r *restOut) Process(_ string, m Message, out Emitter) error {
	size := messageSize(m)
	if size > r.maxBytes {
		out.Drop(1)
		return errorf(ErrBusy, "rest-out: a message of %d bytes is more than it may keep (max-bytes %d)", size, r.maxBytes)
	}
	evicted := 0
	for r.n > 0 && (r.n == len(r.buf) || r.bytes+size > r.maxBytes) {
		r.dropOldest() // the oldest ones go
		evicted++
	}
	if evicted > 0 {
		out.Drop(evicted) // evicted messages are dropped (see Counters)
	}
	i := (r.head + r.n) % len(r.buf)
	r.buf[i], r.sizes[i] = m, size
	r.n++
	r.bytes += size
	return nil
}

// Retained implements Retainer.
func (r *restOut) Retained() []Message {
	ms := make([]Message, r.n)
	for i := range ms {
		ms[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	return ms
}

// preview implements previewer: what Retained will give once hs, handed
// over and not processed yet, are: the newest messages that fit the
// capacity and max-bytes, as Process keeps them.
func (r *restOut) preview(hs []Held) []Message {
	ms := r.Retained()
	sizes := make([]int, 0, len(ms)+len(hs))
	for i := range r.n {
		sizes = append(sizes, r.sizes[(r.head+i)%len(r.buf)])
	}
	for _, h := range hs {
		if size := messageSize(h.Message); size <= r.maxBytes { // Process refuses the others
			ms, sizes = append(ms, h.Message), append(sizes, size)
		}
	}
	start, bytes := len(ms), 0
	for start > 0 && len(ms)-start < len(r.buf) && bytes+sizes[start-1] <= r.maxBytes {
		start--
		bytes += sizes[start]
	}
	return ms[start:]
}

// Drain implements Drainer: the retained messages move to a replacement.
func (r *restOut) Drain() []Held {
	hs := make([]Held, r.n)
	for i, m := range r.Retained() {
		hs[i] = Held{Port: "in", Message: m}
	}
	clear(r.buf)
	clear(r.sizes)
	r.head, r.n, r.bytes = 0, 0, 0
	return hs
}

// console.

type console struct {
	prefix string
	w      io.Writer
}

func newConsole(_ map[string]any, env Env) (any, error) {
	w := env.Output
	if w == nil {
		w = io.Discard
	}
	return &console{prefix: env.Chain + "/" + env.ID, w: w}, nil
}

func (c *console) Process(_ string, m Message, _ Emitter) error {
	b, err := json.Marshal(m)
	if err != nil {
		b = fmt.Appendf(nil, "%#v", m)
	}
	line := make([]byte, 0, len(c.prefix)+len(b)+2)
	line = append(append(append(append(line, c.prefix...), ' '), b...), '\n')
	_, err = c.w.Write(line)
	return err
}

// number-generator.

type numberGenerator struct {
	period   time.Duration
	min, max float64
	rng      *mrand.Rand
}

func newNumberGenerator(props map[string]any, _ Env) (any, error) {
	period, err := IntProperty(props, "period", 5000, 1, 1<<31-1)
	if err != nil {
		return nil, err
	}
	lo, err := optFloat(props["min"])
	if err != nil {
		return nil, errorf(ErrInvalid, "number-generator: property min: %v", err)
	}
	hi, err := optFloat(props["max"])
	if err != nil {
		return nil, errorf(ErrInvalid, "number-generator: property max: %v", err)
	}
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil, errorf(ErrInvalid, "number-generator: min %v must be below max %v, both finite", lo, hi)
	}
	seed, err := optInt(props["seed"])
	if err != nil {
		return nil, errorf(ErrInvalid, "number-generator: property seed: %v", err)
	}
	s := uint64(seed)
	if s == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		s = binary.LittleEndian.Uint64(b[:])
	}
	return &numberGenerator{
		period: time.Duration(period) * time.Millisecond,
		min:    lo, max: hi,
		rng: mrand.New(mrand.NewPCG(s, s^0x9e3779b97f4a7c15)),
	}, nil
}

// Period implements Periodic.
func (g *numberGenerator) Period() time.Duration { return g.period }

// Tick implements Periodic.
func (g *numberGenerator) Tick(_ time.Time, out Emitter) error {
	r := g.rng.Float64()
	v := g.min + r*(g.max-g.min)
	if math.IsInf(v, 0) || math.IsNaN(v) { // max-min beyond the largest float64
		v = g.min*(1-r) + g.max*r
	}
	out.Emit("out", Message{Content: v})
	return nil
}
