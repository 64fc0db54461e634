package sim

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestSpeakerHearsOthersOnly: a Speaker hears the devices of its zone
// that play, not itself: one given a free audioSource.isPlaying of true
// stays silent alone, hears an AudioSource that plays beside it, and is
// silent again once the source stops. (A zone notes which of its devices
// play, see zoneEntry.others, rather than the Speaker walking them.)
func TestSpeakerHearsOthersOnly(t *testing.T) {
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
	at := func(v int) *int { return &v }
	if _, err := h.CreateZone(ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDevice(DeviceSpec{ID: "speaker", Type: "Speaker", PositionX: at(10), PositionY: at(10),
		Properties: map[string]any{PropSpeakerVolume: 0.5, PropSpeakerMaxNoise: 20.0, PropAudioSourceIsPlaying: true}}); err != nil {
		t.Fatal(err)
	}
	noise := func(when string, want float64) {
		t.Helper()
		if err := h.Advance(2 * time.Second); err != nil { // past the Speaker's tick
			t.Fatal(err)
		}
		d, _ := h.Device("speaker")
		if got := d.Properties[PropSpeakerNoiseLevel]; got != want {
			t.Fatalf("%s: the speaker's noise level is %v, want %v", when, got, want)
		}
	}
	noise("alone, playing itself", 0)
	if _, err := h.CreateDevice(DeviceSpec{ID: "source", Type: "AudioSource", PositionX: at(20), PositionY: at(20),
		Properties: map[string]any{PropAudioSourceIsPlaying: true}}); err != nil {
		t.Fatal(err)
	}
	noise("beside a source that plays", 10)
	if _, err := h.UpdateDevice("source", DeviceUpdate{Properties: map[string]any{PropAudioSourceIsPlaying: false}}); err != nil {
		t.Fatal(err)
	}
	noise("once the source stopped", 0)
}

// TestBehaviourPlayingReachesSpeakers: a device whose own behaviour starts
// and stops playing (a Tick setting audioSource.isPlaying) is heard by the
// Speakers of its zone from their next tick: what the zone notes of its
// devices is renewed when a behaviour's Set changes it, not only when a
// client does.
func TestBehaviourPlayingReachesSpeakers(t *testing.T) {
	kinds := NewKindRegistry()
	if err := kinds.Register(Kind{Name: "Jukebox", Service: "test.Jukebox",
		Properties: []PropertySpec{{Name: PropAudioSourceIsPlaying, Type: Bool, Default: false}},
		Behavior: Behavior{Every: 10 * time.Second, Tick: func(c *DeviceContext) {
			c.Set(PropAudioSourceIsPlaying, !c.Props().Bool(PropAudioSourceIsPlaying))
		}}}); err != nil {
		t.Fatal(err)
	}
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Kinds: kinds})
	at := func(v int) *int { return &v }
	if _, err := h.CreateZone(ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDevice(DeviceSpec{ID: "speaker", Type: "Speaker", PositionX: at(10), PositionY: at(10),
		Properties: map[string]any{PropSpeakerVolume: 0.5, PropSpeakerMaxNoise: 20.0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CreateDevice(DeviceSpec{ID: "jukebox", Type: "Jukebox", PositionX: at(20), PositionY: at(20)}); err != nil {
		t.Fatal(err)
	}
	if err := h.Advance(time.Second); err != nil { // the jukebox toggles at 10 s, 20 s, ...; the speaker hears it by a second later
		t.Fatal(err)
	}
	for i := range 6 {
		if err := h.Advance(10 * time.Second); err != nil {
			t.Fatal(err)
		}
		d, _ := h.Device("speaker")
		j, _ := h.Device("jukebox")
		want := 0.0
		if j.Properties[PropAudioSourceIsPlaying] == true {
			want = 10
		}
		if got := d.Properties[PropSpeakerNoiseLevel]; got != want {
			t.Fatalf("after %d s, the jukebox playing %v: the speaker's noise level is %v, want %v", 10*(i+1)+1, j.Properties[PropAudioSourceIsPlaying], got, want)
		}
	}
}

// TestSpeakerMovedInHearsOthers: a Speaker that plays itself (a free
// audioSource.isPlaying of true), moved into a zone where an AudioSource
// plays, hears it from the Derive of the move on: the Speaker is not
// filed in its new zone yet (nor is a device being updated, whose
// working copy runs the Derive), so its own playing must not hide the
// one device of that zone that plays. Both by a device update and by a
// zone change that relocates it.
func TestSpeakerMovedInHearsOthers(t *testing.T) {
	at := func(v int) *int { return &v }
	for _, how := range []string{"device moved", "zone moved"} {
		t.Run(how, func(t *testing.T) {
			h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC})
			for _, z := range []ZoneSpec{{ID: "house", RightX: 1000, BottomY: 1000}, {ID: "b", LeftX: 400, TopY: 400, RightX: 600, BottomY: 600}} {
				if _, err := h.CreateZone(z); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := h.CreateDevice(DeviceSpec{ID: "speaker", Type: "Speaker", PositionX: at(10), PositionY: at(10),
				Properties: map[string]any{PropSpeakerVolume: 0.5, PropSpeakerMaxNoise: 20.0, PropAudioSourceIsPlaying: true}}); err != nil {
				t.Fatal(err)
			}
			if _, err := h.CreateDevice(DeviceSpec{ID: "source", Type: "AudioSource", PositionX: at(500), PositionY: at(500),
				Properties: map[string]any{PropAudioSourceIsPlaying: true}}); err != nil {
				t.Fatal(err)
			}
			var err error
			if how == "device moved" {
				_, err = h.UpdateDevice("speaker", DeviceUpdate{PositionX: at(450), PositionY: at(450)})
			} else {
				_, err = h.UpdateZone("b", ZoneUpdate{LeftX: at(0), TopY: at(0), RightX: at(600), BottomY: at(600)})
			}
			if err != nil {
				t.Fatal(err)
			}
			d, _ := h.Device("speaker")
			if d.Location != "b" {
				t.Fatalf("the speaker is in %q, want b", d.Location)
			}
			if got := d.Properties[PropSpeakerNoiseLevel]; got != 10.0 {
				t.Fatalf("the speaker's noise level is %v beside a source that plays, want 10", got)
			}
		})
	}
}

// TestZoneConsumptionLeavesOutTheDeviceUpdated: a device that draws
// power and meters its zone (ZoneConsumption, the other devices' power)
// leaves itself out in the Derive of an update as in its ticks, though
// that Derive runs on the update's working copy, not on the device the
// zone holds.
func TestZoneConsumptionLeavesOutTheDeviceUpdated(t *testing.T) {
	kinds := NewKindRegistry()
	if err := kinds.Register(Kind{Name: "MeteringPlug", Service: "test.MeteringPlug",
		Properties: []PropertySpec{{Name: "others", Type: Number, Default: 0.0, Derived: true}},
		Behavior: Behavior{
			Consumption: func(Props) float64 { return 5 },
			Derive:      func(c *DeviceContext) { c.Set("others", c.ZoneConsumption()) },
		}}); err != nil {
		t.Fatal(err)
	}
	h := MustNew(Config{WallClock: clock.NewMock(), Location: time.UTC, Kinds: kinds})
	at := func(v int) *int { return &v }
	if _, err := h.CreateZone(ZoneSpec{ID: "room", RightX: 100, BottomY: 100}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"plug", "other"} {
		if _, err := h.CreateDevice(DeviceSpec{ID: id, Type: "MeteringPlug", PositionX: at(10), PositionY: at(10)}); err != nil {
			t.Fatal(err)
		}
	}
	name := "renamed"
	d, err := h.UpdateDevice("plug", DeviceUpdate{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Properties["others"]; got != 5.0 {
		t.Fatalf("after an update, the plug meters %v W of its zone's other devices, want 5 (the other plug's)", got)
	}
}
