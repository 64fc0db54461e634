package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnvironment walks the environment resource: a read, partial updates,
// a round trip of what was read, and every kind of bad value (400, nothing
// changed).
func TestEnvironment(t *testing.T) {
	f := newFixture(t)
	got := f.mustDo(t, "GET", "/platform/environment", "").Body.String()
	if diff := jsonDiff(t, `{"physics":"contract","outdoorTemperature":283.15,"latitude":45.19,"longitude":5.72,
		"sky":"clear","windowShare":0.15,"sunElevation":0,"outdoorIlluminance":0}`, maskSun(t, got)); diff != "" {
		t.Errorf("GET /environment (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{"a daily curve", `{"outdoorMin":268.15,"outdoorMax":278.15}`, 200, ""},
		{"one end of the curve", `{"outdoorMax":280.15,"latitude":48.85,"longitude":2.35}`, 200, ""},
		{"the sky", `{"sky":"partly-cloudy","windowShare":0.2}`, 200, ""},
		{"latitude out of range", `{"latitude":95}`, 400, "invalid"},
		{"a string for a number", `{"longitude":"east"}`, 400, "invalid"},
		{"too hot", `{"outdoorTemperature":400}`, 400, "invalid"},
		{"min above max", `{"outdoorMin":290}`, 400, "invalid"},
		{"constant and curve", `{"outdoorTemperature":270,"outdoorMin":260,"outdoorMax":265}`, 400, "invalid"},
		{"another physics", `{"physics":"realistic"}`, 400, "invalid"},
		{"an unknown sky", `{"sky":"stormy"}`, 400, "invalid"},
		{"not an object", `[1]`, 400, "invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := f.state(t)
			rec := f.do(t, "PUT", "/platform/environment", tt.body)
			if rec.Code != tt.status {
				t.Fatalf("PUT %s = %d %s, want %d", tt.body, rec.Code, rec.Body, tt.status)
			}
			if tt.code != "" {
				if c := errorCode(t, rec.Body.String()); c != tt.code {
					t.Errorf("code = %q, want %q", c, tt.code)
				}
				if f.state(t) != before {
					t.Errorf("a refused update changed the state")
				}
			}
		})
	}
	got = f.mustDo(t, "GET", "/platform/environment", "").Body.String()
	// Sent back whole, what was read changes nothing.
	if rec := f.do(t, "PUT", "/platform/environment", got); rec.Code != http.StatusOK {
		t.Errorf("round trip: PUT = %d %s", rec.Code, rec.Body)
	}
	after := f.mustDo(t, "GET", "/platform/environment", "").Body.String()
	if diff := jsonDiff(t, got, after); diff != "" {
		t.Errorf("round trip changed the environment (-before +after):\n%s", diff)
	}
	if diff := jsonDiff(t, `{"physics":"contract","outdoorTemperature":0,"outdoorMin":268.15,"outdoorMax":280.15,
		"latitude":48.85,"longitude":2.35,"sky":"partly-cloudy","windowShare":0.2,"sunElevation":0,"outdoorIlluminance":0}`,
		maskTemperature(t, maskSun(t, after))); diff != "" {
		t.Errorf("after the updates (-want +got):\n%s", diff)
	}
	if rec := f.do(t, "DELETE", "/platform/environment", ""); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /environment = %d, want 405", rec.Code)
	}
}

// TestKindsEndpoint checks the extension that serves the kinds' property
// specs.
func TestKindsEndpoint(t *testing.T) {
	f := newFixture(t)
	body := f.mustDo(t, "GET", "/platform/devices/kinds", "").Body.String()
	var kinds []struct {
		ID         string
		Properties []map[string]any
	}
	decodeJSON(t, body, &kinds)
	if len(kinds) != 24 || kinds[0].ID != "iCasa.Heater" {
		t.Fatalf("GET /devices/kinds: %d kinds, first %q; want the 24 of iCasa's catalogue, Heater first", len(kinds), kinds[0].ID)
	}
	want := map[string]any{"name": "heater.powerLevel", "type": "number", "default": 0.0, "min": 0.0, "max": 1.0, "doc": "share of the maximum power in use"}
	if diff := cmpDiff(want, kinds[0].Properties[0]); diff != "" {
		t.Errorf("Heater's first property (-want +got):\n%s", diff)
	}
	for _, k := range kinds {
		if k.ID != "iCasa.DimmerLight" {
			continue
		}
		want := map[string]any{"name": "power_level", "type": "number", "default": 0.0, "min": 0.0, "max": 1.0,
			"doc": "share of the maximum power in use", "aliases": []any{"dimmerLight.powerLevel", "light.powerLevel"}}
		if diff := cmpDiff(want, k.Properties[0]); diff != "" {
			t.Errorf("DimmerLight's first property (-want +got):\n%s", diff)
		}
	}
}

func decodeJSON(tb testing.TB, body string, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		tb.Fatalf("%v: %s", err, body)
	}
}

func cmpDiff(want, got any) string { return cmp.Diff(want, got) }

// maskSun zeroes the sun's elevation and the daylight, which sim's tests
// compute by hand.
func maskSun(tb testing.TB, body string) string {
	zero := func(float64) float64 { return 0 }
	return mask(tb, mask(tb, body, "sunElevation", zero), "outdoorIlluminance", zero)
}

// maskTemperature replaces the current outdoor temperature of a daily
// curve with 0.
func maskTemperature(tb testing.TB, body string) string {
	return mask(tb, body, "outdoorTemperature", func(float64) float64 { return 0 })
}

func mask(tb testing.TB, body, field string, f func(float64) float64) string {
	tb.Helper()
	var m map[string]any
	decodeJSON(tb, body, &m)
	v, _ := m[field].(float64)
	m[field] = f(v)
	b, err := json.Marshal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
