package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/pervasim/pervasim/sim"
)

// TestDotIDsRefused: "." and ".." are not ids. They were, and a zone,
// device or person of that id could be made over REST but never read,
// changed or deleted from the house plan: a browser resolves the dot
// segment of /devices/device/.. to /devices/. Ids that merely hold dots
// stay valid.
func TestDotIDsRefused(t *testing.T) {
	for _, id := range []string{".", ".."} {
		if sim.ValidID(id) {
			t.Errorf("ValidID(%q) = true, want false", id)
		}
		h, _ := newHome(t)
		x, y := 10, 10
		for what, err := range map[string]error{
			"CreateZone":   func() error { _, err := h.CreateZone(rect(id, 0, 0, 100, 100)); return err }(),
			"CreateDevice": func() error { _, err := h.CreateDevice(sim.DeviceSpec{ID: id, Type: "BinaryLight"}); return err }(),
			"CreatePerson": func() error {
				_, err := h.CreatePerson(sim.PersonSpec{ID: id, Type: "Boy", PositionX: &x, PositionY: &y})
				return err
			}(),
			"AddScript": func() error { _, err := h.AddScript(id, []byte("<behavior/>")); return err }(),
		} {
			if !errors.Is(err, sim.ErrInvalid) {
				t.Errorf("%s with id %q = %v, want an error wrapping %v", what, id, err, sim.ErrInvalid)
			}
		}
		// A script's action of such an id is a problem of the script.
		s, err := h.ParseScript(strings.NewReader(`<behavior><create-device id="` + id + `" type="iCasa.BinaryLight"/></behavior>`))
		if err != nil {
			t.Errorf("ParseScript of create-device id=%q: %v", id, err)
		} else if len(s.Problems) != 1 {
			t.Errorf("ParseScript of create-device id=%q: problems %q, want one", id, s.Problems)
		}
	}
	for _, id := range []string{"...", "a..", ".a", "house.bhv"} {
		if !sim.ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
}
