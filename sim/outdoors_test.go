package sim

import (
	"math"
	"testing"
	"time"
)

// TestSunElevation checks the NOAA formulas against the geometry of the
// solstices at Grenoble: at solar noon the sun stands 90° − latitude ±
// the declination (23.44°) high.
func TestSunElevation(t *testing.T) {
	const lat, lon = 45.19, 5.72
	noon := func(day time.Time) float64 { // the highest elevation of the day, scanned by minute
		best := -90.0
		for m := 0; m < 24*60; m++ {
			best = max(best, sunElevation(day.Add(time.Duration(m)*time.Minute), lat, lon))
		}
		return best
	}
	for _, tt := range []struct {
		name string
		day  time.Time
		want float64
	}{
		{"June solstice", time.Date(2024, 6, 20, 0, 0, 0, 0, time.UTC), 90 - lat + 23.44},
		{"December solstice", time.Date(2024, 12, 21, 0, 0, 0, 0, time.UTC), 90 - lat - 23.44},
	} {
		if got := noon(tt.day); math.Abs(got-tt.want) > 0.5 {
			t.Errorf("%s: noon elevation = %v, want %v ± 0.5", tt.name, got, tt.want)
		}
	}
	if got := sunElevation(time.Date(2024, 6, 20, 23, 35, 0, 0, time.UTC), lat, lon); got >= 0 {
		t.Errorf("midnight elevation = %v, want negative", got)
	}
	if s, n := sunElevation(time.Date(2024, 6, 20, 11, 35, 0, 0, time.UTC), -45, lon),
		sunElevation(time.Date(2024, 12, 21, 11, 35, 0, 0, time.UTC), -45, lon); s >= n {
		t.Errorf("at 45° S: June noon %v, December noon %v; want December higher", s, n)
	}
}

func TestMeanSolarHour(t *testing.T) {
	at := time.Date(2024, 1, 1, 23, 30, 0, 0, time.UTC)
	for _, tt := range []struct{ lon, want float64 }{{0, 23.5}, {15, 0.5}, {-180, 11.5}, {180, 11.5}} {
		if got := meanSolarHour(at, tt.lon); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("meanSolarHour(23:30 UTC, %v) = %v, want %v", tt.lon, got, tt.want)
		}
	}
}

func TestOutdoorIlluminance(t *testing.T) {
	// By hand, clear sky, h = 30°, J = 172: E_xt = 127,500·(1 + 0.034·cos(2π·170/365))
	// = 123,260.6 lx; direct = E_xt·e^(−0.21/0.5)·0.5 = 40,495.0; sky = 800 + 15,500·√0.5 = 11,760.2.
	ext := 127_500 * (1 + 0.034*math.Cos(2*math.Pi*170/365))
	want := ext*math.Exp(-0.42)*0.5 + 800 + 15_500*math.Sqrt(0.5)
	if got := outdoorIlluminance(30, 172, skyClear); math.Abs(got-want) > 1e-6 || math.Abs(got-52_255) > 5 {
		t.Errorf("outdoorIlluminance(30°, 172, clear) = %v, want %v (about 52,255)", got, want)
	}
	for _, s := range []sky{skyClear, skyPartlyCloudy, skyOvercast} {
		if got := outdoorIlluminance(0, 172, s); got != 0 {
			t.Errorf("%s at the horizon = %v, want 0", s, got)
		}
		prev := 0.0
		for h := 1.0; h <= 90; h++ {
			e := outdoorIlluminance(h, 172, s)
			if e <= prev {
				t.Fatalf("%s: E(%v°) = %v not above E(%v°) = %v", s, h, e, h-1, prev)
			}
			prev = e
		}
	}
	if c, o := outdoorIlluminance(60, 172, skyClear), outdoorIlluminance(60, 172, skyOvercast); c < 80_000 || c > 120_000 || o >= c {
		t.Errorf("at 60°: clear %v, overcast %v; want clear about 100 klx, overcast less", c, o)
	}
}

func TestOutdoorTemperature(t *testing.T) {
	const lo, hi = 270.0, 280.0
	for _, tt := range []struct{ h, want float64 }{{5, lo}, {15, hi}, {10, 275}, {22, 275}, {0, hi - 10*(1-math.Cos(math.Pi*9/14))/2}} {
		if got := outdoorTemperature(tt.h, lo, hi); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("outdoorTemperature(%v h) = %v, want %v", tt.h, got, tt.want)
		}
	}
	for _, h := range []float64{5, 15} {
		if a, b := outdoorTemperature(h-1e-7, lo, hi), outdoorTemperature(h+1e-7, lo, hi); math.Abs(a-b) > 1e-6 {
			t.Errorf("not continuous at %v h: %v and %v", h, a, b)
		}
	}
	for h := 0.0; h < 24; h += 0.01 {
		if v := outdoorTemperature(h, lo, hi); v < lo || v > hi {
			t.Fatalf("outdoorTemperature(%v) = %v outside [%v, %v]", h, v, lo, hi)
		}
	}
}

func TestAverageDaylightFactor(t *testing.T) {
	if got, want := averageDaylightFactor(1.5, 37.8, 0.7, 85, 0.5), 0.7*1.5*85/(37.8*0.75)/100; math.Abs(got-want) > 1e-15 {
		t.Errorf("averageDaylightFactor = %v, want %v", got, want)
	}
	if averageDaylightFactor(1, 0, 0.7, 85, 0.5) != 0 || averageDaylightFactor(1, 10, 0.7, 85, 1) != 0 {
		t.Error("averageDaylightFactor of a room without surfaces, or of mirrors, is not 0")
	}
}

// FuzzSunElevation checks that any place and any time from 1900 to 2200
// give a finite elevation in [-90, 90].
func FuzzSunElevation(f *testing.F) {
	f.Add(45.19, 5.72, int64(0))
	f.Add(-90.0, 180.0, int64(7_000_000_000))
	f.Add(90.0, -180.0, int64(-2_000_000_000))
	f.Fuzz(func(t *testing.T, lat, lon float64, sec int64) {
		if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return
		}
		at := time.Unix(sec%7_258_118_400, 0) // 1900 … 2200 around the epoch
		if e := sunElevation(at, lat, lon); math.IsNaN(e) || e < -90 || e > 90 {
			t.Errorf("sunElevation(%v, %v, %v) = %v", at, lat, lon, e)
		}
	})
}
