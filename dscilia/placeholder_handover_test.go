package dscilia_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/dscilia"
	"github.com/pervasim/pervasim/mediation"
)

// TestPlaceholderAdapterHandsOverWhatItKeeps: the messages a placeholder
// adapter keeps (readable as a rest-out's) survive a change of its
// properties, and a Replace hands them to the component that takes over,
// as a rest-out's are: none is lost or kept twice.
func TestPlaceholderAdapterHandsOverWhatItKeeps(t *testing.T) {
	sent := []mediation.Message{
		{Content: "one", Properties: map[string]any{"kind": "temp"}},
		{Content: "two", Properties: map[string]any{}},
	}
	for _, tc := range []struct {
		name   string
		change func(*mediation.Chain) error
		// where the messages must be afterwards: component id -> messages
		want map[string][]mediation.Message
	}{
		{
			name: "properties changed",
			change: func(ch *mediation.Chain) error {
				_, err := ch.UpdateProperties("dst", map[string]any{"port": "7003"})
				return err
			},
			want: map[string][]mediation.Message{"dst": sent},
		},
		{
			name: "replaced by a rest-out",
			change: func(ch *mediation.Chain) error {
				if _, err := ch.AddAdapter("rest-out", "out", nil); err != nil {
					return err
				}
				return ch.Replace("dst", "out")
			},
			want: map[string][]mediation.Message{"dst": {}, "out": sent},
		},
		{
			name: "replaced by another placeholder adapter",
			change: func(ch *mediation.Chain) error {
				if _, err := ch.Copy("dst", "dst2"); err != nil {
					return err
				}
				return ch.Replace("dst", "dst2")
			},
			want: map[string][]mediation.Message{"dst": {}, "dst2": sent},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mediation.NewEngine(mediation.Config{})
			defer e.Close()
			if _, err := dscilia.Load(e, fixture(t, "adapters-in-out"), dscilia.LoadOptions{Placeholders: true}); err != nil {
				t.Fatal(err)
			}
			ch, _ := e.Chain("socket")
			for _, m := range sent {
				if err := ch.Send("src", m.Clone()); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.change(ch); err != nil {
				t.Fatal(err)
			}
			got := map[string][]mediation.Message{}
			for id := range tc.want {
				ms, err := ch.Messages(id)
				if err != nil {
					t.Fatal(err)
				}
				got[id] = ms
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("messages kept (-want +got):\n%s", d)
			}
			info, _ := ch.Component("dst")
			if info.Counters.Dropped != 0 {
				t.Errorf("dst dropped %d messages", info.Counters.Dropped)
			}
		})
	}
}
