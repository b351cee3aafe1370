package snapshot_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/memctl/memctl/csr"
	"github.com/memctl/memctl/snapshot"
)

// validityState has a node valid at the export, one expired there, and a
// superseded one (format 2.0, SPEC.md §7.7).
func validityState(inclSup, inclExp bool) *snapshot.MemState {
	st := tinyState()
	st.InclSuperseded, st.InclExpired = inclSup, inclExp
	for i := range st.NodeList {
		n := &st.NodeList[i]
		switch n.Key {
		case "sym:main.run":
			n.ValidUntil, n.HasValidUntil = st.ValidAtTime, true // ends exactly at valid_at: expired
			n.Expired = true
		case "sym:util.Load":
			n.Superseded = true
		}
	}
	return st
}

func TestValidityRoundTrip(t *testing.T) {
	st := validityState(true, true)
	b := mustWrite(t, st, snapshot.WriterOptions{})
	f, err := snapshot.FromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Verify(); err != nil {
		t.Fatal(err)
	}
	h := f.Header()
	if h.ValidAt != st.ValidAtTime || h.Flags&(snapshot.FlagIncludesSuperseded|snapshot.FlagIncludesExpired) != snapshot.FlagIncludesSuperseded|snapshot.FlagIncludesExpired {
		t.Fatalf("header %+v", h)
	}
	checkAgainstModel(t, st, csr.New(f), false)

	// The writer refuses flags the state says it excludes.
	if _, _, err := snapshot.Write(validityState(false, true), snapshot.WriterOptions{}); !errors.Is(err, snapshot.ErrInvalidState) {
		t.Errorf("superseded node in a state excluding them: %v", err)
	}
	if _, _, err := snapshot.Write(validityState(true, false), snapshot.WriterOptions{}); !errors.Is(err, snapshot.ErrInvalidState) {
		t.Errorf("expired node in a state excluding them: %v", err)
	}

	// Verify catches an expired flag that disagrees with valid_at, and a
	// header that drops the includes flag.
	g := csr.New(f)
	i, _, _ := g.LookupKey("file:main.go")
	row := &f.NodeRows()[i]
	off := int(f.Sections()[4].Offset) + int(i)*72 + 16
	bad := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(bad[off:], row.Flags|snapshot.NodeFlagExpired)
	refreshCRCs(bad)
	if err := openAndVerify(bad); err == nil {
		t.Error("an expired flag on a valid node passed Verify")
	}
	bad = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(bad[12:], 0)
	refreshCRCs(bad)
	if err := openAndVerify(bad); err == nil {
		t.Error("superseded/expired rows in a file without the includes flags passed Verify")
	}
	// The hash covers validity: an exported interval change changes it.
	h1, _ := f.LogicalHash()
	st2 := validityState(true, true)
	for j := range st2.NodeList {
		if st2.NodeList[j].Key == "file:main.go" {
			st2.NodeList[j].ValidFrom, st2.NodeList[j].HasValidFrom = 1, true
		}
	}
	f2, err := snapshot.FromBytes(mustWrite(t, st2, snapshot.WriterOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if h2, _ := f2.LogicalHash(); h1 == h2 {
		t.Error("logical hash ignores the valid time")
	}
}
