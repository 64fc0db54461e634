package sim_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pervasim/pervasim/sim"
)

func mustPerson(tb testing.TB, h *sim.Home, spec sim.PersonSpec) sim.Person {
	tb.Helper()
	p, err := h.CreatePerson(spec)
	if err != nil {
		tb.Fatalf("CreatePerson(%+v) = %v, want nil error", spec, err)
	}
	return p
}

func mustGetPerson(tb testing.TB, h *sim.Home, id string) sim.Person {
	tb.Helper()
	p, err := h.Person(id)
	if err != nil {
		tb.Fatalf("Person(%q) = %v, want nil error", id, err)
	}
	return p
}

func TestPersonTypes(t *testing.T) {
	want := []sim.PersonType{
		{ID: "Grandfather", Name: "Grandfather"},
		{ID: "Grandmother", Name: "Grandmother"},
		{ID: "Father", Name: "Father"},
		{ID: "Mother", Name: "Mother"},
		{ID: "Boy", Name: "Boy"},
		{ID: "Girl", Name: "Girl"},
		{ID: "Old man", Name: "Old man"},
		{ID: "Old woman", Name: "Old woman"},
		{ID: "Man", Name: "Man"},
		{ID: "Woman", Name: "Woman"},
	}
	if diff := cmp.Diff(want, sim.PersonTypes()); diff != "" {
		t.Errorf("PersonTypes() (-want +got):\n%s", diff)
	}
	sim.PersonTypes()[0].ID = "Robot"
	if diff := cmp.Diff(want, sim.PersonTypes()); diff != "" {
		t.Errorf("PersonTypes() after mutating a previous result (-want +got):\n%s", diff)
	}
}

func TestCreatePerson(t *testing.T) {
	tests := []struct {
		name string
		spec sim.PersonSpec
		want sim.Person
	}{
		{"defaults", sim.PersonSpec{ID: "p", Type: "Father"},
			sim.Person{ID: "p", Name: "p", Type: "Father", Location: "unknown", PositionX: -1, PositionY: -1}},
		{"type in lower case", sim.PersonSpec{ID: "p", Type: "grandmother"},
			sim.Person{ID: "p", Name: "p", Type: "Grandmother", Location: "unknown", PositionX: -1, PositionY: -1}},
		{"type with a space in upper case", sim.PersonSpec{ID: "p", Type: "OLD MAN"},
			sim.Person{ID: "p", Name: "p", Type: "Old man", Location: "unknown", PositionX: -1, PositionY: -1}},
		{"type in mixed case", sim.PersonSpec{ID: "p", Type: "old WOMAN"},
			sim.Person{ID: "p", Name: "p", Type: "Old woman", Location: "unknown", PositionX: -1, PositionY: -1}},
		{"name and position in a zone", sim.PersonSpec{ID: "p", Name: "Paul", Type: "Boy", PositionX: ptr(50), PositionY: ptr(60)},
			sim.Person{ID: "p", Name: "Paul", Type: "Boy", Location: "kitchen", PositionX: 50, PositionY: 60}},
		{"position outside every zone", sim.PersonSpec{ID: "p", Type: "Girl", PositionX: ptr(500), PositionY: ptr(60)},
			sim.Person{ID: "p", Name: "p", Type: "Girl", Location: "unknown", PositionX: 500, PositionY: 60}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			got, err := h.CreatePerson(tt.spec)
			if err != nil {
				t.Fatalf("CreatePerson(%+v) = %v, want nil error", tt.spec, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CreatePerson(%+v) (-want +got):\n%s", tt.spec, diff)
			}
			if diff := cmp.Diff(tt.want, mustGetPerson(t, h, tt.spec.ID)); diff != "" {
				t.Errorf("Person(%q) (-want +got):\n%s", tt.spec.ID, diff)
			}
		})
	}
}

func TestCreatePersonInvalid(t *testing.T) {
	tests := []struct {
		name string
		spec sim.PersonSpec
		want error
	}{
		{"unknown type", sim.PersonSpec{ID: "p", Type: "Robot"}, sim.ErrInvalid},
		{"type without its space", sim.PersonSpec{ID: "p", Type: "OldMan"}, sim.ErrInvalid},
		{"missing type", sim.PersonSpec{ID: "p"}, sim.ErrInvalid},
		{"empty id", sim.PersonSpec{Type: "Man"}, sim.ErrInvalid},
		{"id of 129 chars", sim.PersonSpec{ID: strings.Repeat("p", sim.MaxIDLength+1), Type: "Man"}, sim.ErrInvalid},
		{"id with slash", sim.PersonSpec{ID: "p/1", Type: "Man"}, sim.ErrInvalid},
		{"id with space", sim.PersonSpec{ID: "p 1", Type: "Man"}, sim.ErrInvalid},
		{"id with unicode", sim.PersonSpec{ID: "zoé", Type: "Girl"}, sim.ErrInvalid},
		{"positionX below the plan", sim.PersonSpec{ID: "p", Type: "Man", PositionX: ptr(-sim.MaxCoordinate - 1)}, sim.ErrInvalid},
		{"positionY beyond MaxCoordinate", sim.PersonSpec{ID: "p", Type: "Man", PositionY: ptr(sim.MaxCoordinate + 1)}, sim.ErrInvalid},
		{"duplicate id", sim.PersonSpec{ID: "taken", Type: "Woman"}, sim.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustPerson(t, h, sim.PersonSpec{ID: "taken", Type: "Man"})
			before := h.Persons()
			got, err := h.CreatePerson(tt.spec)
			if !errors.Is(err, tt.want) {
				t.Fatalf("CreatePerson(%+v) = %v, want an error wrapping %v", tt.spec, err, tt.want)
			}
			if diff := cmp.Diff(sim.Person{}, got); diff != "" {
				t.Errorf("CreatePerson returned a person with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, h.Persons()); diff != "" {
				t.Errorf("Persons() after failed create (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown type lists the known types", func(t *testing.T) {
		h, _ := newHome(t)
		_, err := h.CreatePerson(sim.PersonSpec{ID: "p", Type: "Robot"})
		for _, pt := range sim.PersonTypes() {
			if err == nil || !strings.Contains(err.Error(), pt.ID) {
				t.Errorf("CreatePerson(type Robot) error %v does not list type %q", err, pt.ID)
			}
		}
	})
}

func TestUpdatePerson(t *testing.T) {
	tests := []struct {
		name   string
		update sim.PersonUpdate
		edit   func(p *sim.Person) // turns the base person into the wanted one
	}{
		{"empty update", sim.PersonUpdate{}, func(*sim.Person) {}},
		{"name", sim.PersonUpdate{Name: ptr("Paula")}, func(p *sim.Person) { p.Name = "Paula" }},
		{"empty name resets to id", sim.PersonUpdate{Name: ptr("")}, func(p *sim.Person) { p.Name = "p" }},
		{"type in other case", sim.PersonUpdate{Type: ptr("mother")}, func(p *sim.Person) { p.Type = "Mother" }},
		{"position in another zone", sim.PersonUpdate{PositionX: ptr(250), PositionY: ptr(10)}, func(p *sim.Person) {
			p.PositionX, p.PositionY, p.Location = 250, 10, "bedroom"
		}},
		{"position ignores location", sim.PersonUpdate{PositionX: ptr(20), PositionY: ptr(30), Location: ptr("bedroom")}, func(p *sim.Person) {
			p.PositionX, p.PositionY = 20, 30
		}},
		{"position out of every zone ignores location", sim.PersonUpdate{PositionX: ptr(1000), Location: ptr("kitchen")}, func(p *sim.Person) {
			p.PositionX, p.Location = 1000, "unknown"
		}},
		{"only positionY keeps X", sim.PersonUpdate{PositionY: ptr(90)}, func(p *sim.Person) { p.PositionY = 90 }},
		{"location only moves to the zone's centre", sim.PersonUpdate{Location: ptr("bedroom")}, func(p *sim.Person) {
			p.PositionX, p.PositionY, p.Location = 250, 50, "bedroom"
		}},
		{"location of the current zone moves to its centre", sim.PersonUpdate{Location: ptr("kitchen")}, func(p *sim.Person) {
			p.PositionX, p.PositionY = 50, 50
		}},
		{"unplaced by position", sim.PersonUpdate{PositionX: ptr(-1), PositionY: ptr(-1)}, func(p *sim.Person) {
			p.PositionX, p.PositionY, p.Location = -1, -1, "unknown"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			mustZone(t, h, rect("bedroom", 200, 0, 301, 101))
			mustPerson(t, h, sim.PersonSpec{ID: "p", Name: "Pat", Type: "Woman", PositionX: ptr(10), PositionY: ptr(10)})
			want := sim.Person{ID: "p", Name: "Pat", Type: "Woman", Location: "kitchen", PositionX: 10, PositionY: 10}
			tt.edit(&want)
			got, err := h.UpdatePerson("p", tt.update)
			if err != nil {
				t.Fatalf("UpdatePerson(p, %+v) = %v, want nil error", tt.update, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("UpdatePerson(p, %+v) (-want +got):\n%s", tt.update, diff)
			}
			if diff := cmp.Diff(want, mustGetPerson(t, h, "p")); diff != "" {
				t.Errorf("Person(p) after update (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unplaced person sent to a zone", func(t *testing.T) {
		h, _ := newHome(t)
		mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
		mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Man"})
		got, err := h.UpdatePerson("p", sim.PersonUpdate{Location: ptr("kitchen")})
		if err != nil {
			t.Fatalf("UpdatePerson(location kitchen) = %v", err)
		}
		want := sim.Person{ID: "p", Name: "p", Type: "Man", Location: "kitchen", PositionX: 50, PositionY: 50}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("UpdatePerson(location kitchen) (-want +got):\n%s", diff)
		}
	})
}

func TestUpdatePersonInvalidChangesNothing(t *testing.T) {
	tests := []struct {
		name   string
		update sim.PersonUpdate
		want   error
	}{
		{"unknown type", sim.PersonUpdate{Type: ptr("Robot")}, sim.ErrInvalid},
		{"empty type", sim.PersonUpdate{Type: ptr("")}, sim.ErrInvalid},
		{"location of no zone", sim.PersonUpdate{Location: ptr("attic")}, sim.ErrNotFound},
		{"empty location", sim.PersonUpdate{Location: ptr("")}, sim.ErrNotFound},
		{"location unknown", sim.PersonUpdate{Location: ptr("unknown")}, sim.ErrNotFound},
		{"positionX below the plan", sim.PersonUpdate{PositionX: ptr(-sim.MaxCoordinate - 1)}, sim.ErrInvalid},
		{"positionY beyond MaxCoordinate", sim.PersonUpdate{PositionY: ptr(sim.MaxCoordinate + 1)}, sim.ErrInvalid},
		{"valid name and position + bad type", sim.PersonUpdate{Name: ptr("New"), PositionX: ptr(250), PositionY: ptr(50), Type: ptr("Robot")}, sim.ErrInvalid},
		{"valid name and type + unknown zone", sim.PersonUpdate{Name: ptr("New"), Type: ptr("Boy"), Location: ptr("attic")}, sim.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newHome(t)
			mustZone(t, h, rect("kitchen", 0, 0, 100, 100))
			mustZone(t, h, rect("bedroom", 200, 0, 300, 100))
			before := mustPerson(t, h, sim.PersonSpec{ID: "p", Type: "Woman", PositionX: ptr(10), PositionY: ptr(10)})
			got, err := h.UpdatePerson("p", tt.update)
			if !errors.Is(err, tt.want) {
				t.Fatalf("UpdatePerson(p, %+v) = %v, want an error wrapping %v", tt.update, err, tt.want)
			}
			if diff := cmp.Diff(sim.Person{}, got); diff != "" {
				t.Errorf("UpdatePerson returned a person with its error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, mustGetPerson(t, h, "p")); diff != "" {
				t.Errorf("Person(p) after failed update (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("unknown person", func(t *testing.T) {
		h, _ := newHome(t)
		if _, err := h.UpdatePerson("nope", sim.PersonUpdate{Name: ptr("x")}); !errors.Is(err, sim.ErrNotFound) {
			t.Errorf("UpdatePerson(nope) = %v, want an error wrapping %v", err, sim.ErrNotFound)
		}
		if _, err := h.Person("nope"); !errors.Is(err, sim.ErrNotFound) {
			t.Errorf("Person(nope) = %v, want an error wrapping %v", err, sim.ErrNotFound)
		}
	})
}

func TestDeletePerson(t *testing.T) {
	h, _ := newHome(t)
	for _, id := range []string{"a", "b", "c"} {
		mustPerson(t, h, sim.PersonSpec{ID: id, Type: "Man"})
	}
	if err := h.DeletePerson("a"); err != nil {
		t.Fatalf("DeletePerson(a) = %v, want nil error", err)
	}
	if err := h.DeletePerson("a"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("DeletePerson(a) twice = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	if _, err := h.Person("a"); !errors.Is(err, sim.ErrNotFound) {
		t.Errorf("Person(a) after delete = %v, want an error wrapping %v", err, sim.ErrNotFound)
	}
	var ids []string
	for _, p := range h.Persons() {
		ids = append(ids, p.ID)
	}
	if diff := cmp.Diff([]string{"b", "c"}, ids); diff != "" {
		t.Errorf("Persons() ids (-want +got):\n%s", diff)
	}
	mustPerson(t, h, sim.PersonSpec{ID: "a", Type: "Woman"})
}
