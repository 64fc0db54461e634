package store_test

import (
	"path/filepath"
	"testing"

	"github.com/pervasim/pervasim/store"
)

// TestStateNewUntilItHoldsSomething: a directory holds a state once it
// holds a snapshot or a journaled change. One that the first start opened
// and that a crash cut off before its first snapshot holds neither: the
// next start finds it new (HasState, and Open's restored), so that it sets
// up -demo and -chains, which the crashed start had not kept.
func TestStateNewUntilItHoldsSomething(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		dir  string
	}{{"missing", filepath.Join(dir, "missing")}, {"empty", dir}} {
		if has, err := store.HasState(tc.dir); has || err != nil {
			t.Errorf("HasState of a %s directory = %v, %v; want false, nil", tc.name, has, err)
		}
	}

	open(t, dir) // killed by the next open: a journal of its header alone
	s, restored := open(t, dir)
	if restored {
		t.Error("a directory holding a journal's header alone restored something")
	}
	if rec := s.do(t, "POST", "/platform/zones/zone", "application/json", `{"zoneId":"z","leftX":0,"topY":0,"rightX":1,"bottomY":1}`); rec.Code != 200 {
		t.Fatal(rec.Body)
	}
	if has, err := store.HasState(dir); !has || err != nil {
		t.Errorf("HasState with a journaled change = %v, %v; want true, nil", has, err)
	}
	s, restored = open(t, dir)
	defer s.st.Close()
	if !restored {
		t.Error("a journaled change was not restored")
	}
}
