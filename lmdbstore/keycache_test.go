package lmdbstore

import (
	"math/rand/v2"
	"testing"
)

// TestIDTableAgreesWithMap: the key cache's open-addressing table answers
// as a Go map does over random ids, clustered ids (equal low and high
// bits, which collide in the table's probe order) and id 0, through
// several growths.
func TestIDTableAgreesWithMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	var tab idTable
	model := map[NodeID]uint64{}
	ids := []NodeID{0}
	for i := range 5000 {
		ids = append(ids, NodeID(rng.Uint64()), NodeID(i)<<40, NodeID(i))
	}
	for i, id := range ids {
		if _, ok := model[id]; ok {
			continue
		}
		x := uint64(i+1)<<16 | 7
		tab.set(id, x)
		model[id] = x
		if i%97 == 0 { // check everything so far, and ids never set
			for id, want := range model {
				if got, ok := tab.get(id); !ok || got != want {
					t.Fatalf("after %d sets: get(%d) = %d, %v; want %d", i, id, got, ok, want)
				}
			}
			for range 50 {
				id := NodeID(rng.Uint64())
				_, inModel := model[id]
				if _, ok := tab.get(id); ok != inModel {
					t.Fatalf("get(%d) found %v, the model %v", id, ok, inModel)
				}
			}
		}
	}
	if tab.len() != len(model) {
		t.Errorf("table holds %d ids, the model %d", tab.len(), len(model))
	}
	if 2*tab.len() > len(tab.slots) {
		t.Errorf("table more than half full: %d of %d slots", tab.len(), len(tab.slots))
	}
}
