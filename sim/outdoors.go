package sim

import (
	"math"
	"time"
)

// sunElevation returns the sun's elevation above the horizon, in degrees
// (negative below it), at instant t for a place at latDeg north and lonDeg
// east. It follows NOAA's "General Solar Position Calculations" (NOAA Global
// Monitoring Division): with the fractional year γ (radians),
//
//	eqtime = 229.18·(0.000075 + 0.001868·cos γ − 0.032077·sin γ − 0.014615·cos 2γ − 0.040849·sin 2γ)   (minutes)
//	decl   = 0.006918 − 0.399912·cos γ + 0.070257·sin γ − 0.006758·cos 2γ + 0.000907·sin 2γ − 0.002697·cos 3γ + 0.00148·sin 3γ   (radians)
//	true solar time = UTC minutes + eqtime + 4·longitude, hour angle ha = tst/4 − 180 (degrees)
//	cos(zenith) = sin(lat)·sin(decl) + cos(lat)·cos(decl)·cos(ha)
//
// and elevation = 90° − zenith. Atmospheric refraction is not corrected.
func sunElevation(t time.Time, latDeg, lonDeg float64) float64 {
	t = t.UTC()
	days := 365.0
	if y := t.Year(); y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 366
	}
	minutes := float64(t.Hour()*60+t.Minute()) + float64(t.Second())/60
	gamma := 2 * math.Pi / days * (float64(t.YearDay()-1) + (minutes/60-12)/24)
	eqtime := 229.18 * (0.000075 + 0.001868*math.Cos(gamma) - 0.032077*math.Sin(gamma) -
		0.014615*math.Cos(2*gamma) - 0.040849*math.Sin(2*gamma))
	decl := 0.006918 - 0.399912*math.Cos(gamma) + 0.070257*math.Sin(gamma) - 0.006758*math.Cos(2*gamma) +
		0.000907*math.Sin(2*gamma) - 0.002697*math.Cos(3*gamma) + 0.00148*math.Sin(3*gamma)
	tst := minutes + eqtime + 4*lonDeg
	ha := (tst/4 - 180) * math.Pi / 180
	lat := latDeg * math.Pi / 180
	cosZ := math.Sin(lat)*math.Sin(decl) + math.Cos(lat)*math.Cos(decl)*math.Cos(ha)
	cosZ = min(max(cosZ, -1), 1)
	return 90 - math.Acos(cosZ)*180/math.Pi
}

// meanSolarHour returns the local mean solar time at instant t and lonDeg
// east, in hours in [0, 24): the UTC time of day + longitude / 15.
func meanSolarHour(t time.Time, lonDeg float64) float64 {
	t = t.UTC()
	h := float64(t.Hour()) + float64(t.Minute())/60 + (float64(t.Second())+float64(t.Nanosecond())/1e9)/3600 + lonDeg/15
	h = math.Mod(h, 24)
	if h < 0 {
		h += 24
	}
	return h
}

// sky is the state of the sky for daylight.
type sky string

// The skies of the IES daylight-availability model.
const (
	skyClear        sky = "clear"
	skyPartlyCloudy sky = "partly-cloudy"
	skyOvercast     sky = "overcast"
)

// outdoorIlluminance returns the daylight on a horizontal surface outdoors,
// in lux, for the sun elevDeg above the horizon on day dayOfYear, from the
// daylight-availability model of the IES Lighting Handbook: extraterrestrial
// illuminance E_xt = 127,500 lx × (1 + 0.034·cos(2π(J − 2)/365)), air mass
// m = 1/sin h, direct normal E_dn = E_xt·e^(−c·m), diffuse sky E_kh =
// A + B·sin(h)^C, global = E_dn·sin h + E_kh, with (c, A, B, C) = (0.21,
// 800, 15,500, 0.5) for a clear sky, (0.80, 300, 45,000, 1.0) partly cloudy,
// and no direct light with (A, B, C) = (300, 21,000, 1.0) overcast. It is 0
// while the sun is below the horizon: twilight is ignored.
func outdoorIlluminance(elevDeg float64, dayOfYear int, s sky) float64 {
	if elevDeg <= 0 {
		return 0
	}
	sinH := math.Sin(elevDeg * math.Pi / 180)
	ext := 127_500 * (1 + 0.034*math.Cos(2*math.Pi*float64(dayOfYear-2)/365))
	var c, a, b, e float64
	switch s {
	case skyPartlyCloudy:
		c, a, b, e = 0.80, 300, 45_000, 1
	case skyOvercast:
		c, a, b, e = math.Inf(1), 300, 21_000, 1
	default:
		c, a, b, e = 0.21, 800, 15_500, 0.5
	}
	direct := 0.0
	if !math.IsInf(c, 1) {
		direct = ext * math.Exp(-c/sinH) * sinH
	}
	return direct + a + b*math.Pow(sinH, e)
}

// outdoorTemperature returns the outdoor temperature at the local mean
// solar hour h of a day whose minimum minK comes at 05:00 and maximum maxK
// at 15:00, joined by two half-cosines (the usual interpolation of a daily
// minimum and maximum): rising from 05:00 to 15:00,
// T = min + (max − min)·(1 − cos(π·(h − 5)/10))/2, and falling from 15:00 to
// 05:00 the next day, T = max − (max − min)·(1 − cos(π·((h − 15) mod 24)/14))/2.
func outdoorTemperature(h, minK, maxK float64) float64 {
	if h >= 5 && h < 15 {
		return minK + (maxK-minK)*(1-math.Cos(math.Pi*(h-5)/10))/2
	}
	since := math.Mod(h-15+24, 24)
	return maxK - (maxK-minK)*(1-math.Cos(math.Pi*since/14))/2
}

// averageDaylightFactor returns the average daylight factor of a room, as a
// fraction, by the BRE formula (Littlefair; Crisp and Lynes): DF = T·A_w·θ /
// (A·(1 − R²)) percent, for the window area A_w (m²), the area A of every
// surface of the room (m²), the glazing's transmittance T, the angle θ of sky
// seen from the window (degrees) and the surfaces' mean reflectance R.
func averageDaylightFactor(windowArea, surfaceArea, transmittance, skyAngleDeg, reflectance float64) float64 {
	if surfaceArea <= 0 || reflectance >= 1 {
		return 0
	}
	return transmittance * windowArea * skyAngleDeg / (surfaceArea * (1 - reflectance*reflectance)) / 100
}
