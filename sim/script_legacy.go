package sim

import "strings"

// The scripts shipped with iCasa were written over several years, against
// several versions of its language. canonical rewrites the older forms
// found in them into the commands of [Script], so that they play:
//
//   - create-zone with zoneId for id, and width and height for X-Length and
//     Y-Length (the language of early 2013);
//   - deviceID for deviceId in every command, and zone for zoneId in
//     move-device-zone;
//   - add-device (deviceID, type, an ignored description, an optional room)
//     for create-device, followed by move-device-zone when a room is given;
//     configure-device (deviceID, room) for move-device-zone; a type written
//     as the Java class of iCasa's first simulated devices, such as
//     org.medical.device.presence.impl.SimulatedPresenceSensorImpl, for the
//     kind it simulated (iCasa.PresenceSensor); set-property (deviceID,
//     propertyId, value) for
//     set-device-property; modify-environment (zone, variable, value) for
//     modify-zone-variable, the variable's letter case following the
//     simulation's own names (temperature is Temperature); move (room,
//     person) for move-person-zone: the commands of iCasa's first
//     versions.
//
// Anything else is returned as it is. canonical returns one command, or two
// for an add-device with a room.
func canonical(cmd string, args map[string]string) []legacyCommand {
	rename := func(from, to string) {
		if v, ok := args[from]; ok {
			if _, clash := args[to]; !clash {
				delete(args, from)
				args[to] = v
			}
		}
	}
	switch cmd {
	case "create-zone":
		rename("zoneId", "id")
		rename("width", "X-Length")
		rename("height", "Y-Length")
	case "add-device":
		cmd = "create-device"
		rename("deviceID", "id")
		rename("deviceId", "id")
		delete(args, "description")
		if t, ok := args["type"]; ok {
			args["type"] = javaClassKind(t)
		}
		if room, ok := args["room"]; ok {
			delete(args, "room")
			out := []legacyCommand{{cmd, args}}
			if id, ok := args["id"]; ok {
				out = append(out, legacyCommand{"move-device-zone", map[string]string{"deviceId": id, "zoneId": room}})
			}
			return out
		}
	case "configure-device":
		cmd = "move-device-zone"
		rename("room", "zoneId")
	case "set-property":
		cmd = "set-device-property"
		rename("deviceID", "deviceId")
		rename("propertyId", "property")
	case "modify-environment":
		cmd = "modify-zone-variable"
		rename("zone", "zoneId")
		if v, ok := args["variable"]; ok {
			args["variable"] = canonicalVariable(v)
		}
	case "move":
		cmd = "move-person-zone"
		rename("room", "zoneId")
		rename("person", "personId")
	case "move-device-zone":
		rename("zone", "zoneId")
	}
	rename("deviceID", "deviceId")
	return []legacyCommand{{cmd, args}}
}

// legacyCommand is a command and its attributes.
type legacyCommand struct {
	cmd  string
	args map[string]string
}

// javaClassKind returns the kind iCasa.X for a type written as the Java
// class of a simulated device (a.b.SimulatedXImpl), or typ as it is.
func javaClassKind(typ string) string {
	i := strings.LastIndexByte(typ, '.')
	if i < 0 {
		return typ
	}
	class := typ[i+1:]
	name, ok := strings.CutPrefix(class, "Simulated")
	if !ok {
		return typ
	}
	name, ok = strings.CutSuffix(name, "Impl")
	if !ok || name == "" {
		return typ
	}
	return "iCasa." + name
}

// canonicalVariable returns the simulation's name of a zone variable given
// in any letter case, or name as it is.
func canonicalVariable(name string) string {
	for _, v := range []string{VarTemperature, VarIlluminance, VarVolume, VarCOConcentration, VarCO2Concentration,
		VarNoise, VarElectricity, VarWindowShare} {
		if strings.EqualFold(v, name) {
			return v
		}
	}
	return name
}

// legacyDateLayouts are the other layouts of startdate found in iCasa's
// scripts: 2011.10.27.00.00.00 (its first versions) and 2011/10/27-00:00:00.
var legacyDateLayouts = []string{"2006.01.02.15.04.05", "2006/01/02-15:04:05"}
