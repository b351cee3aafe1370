// Package testcmp holds the go-cmp options the tests of several packages
// share. Only tests import it.
package testcmp

import (
	"reflect"

	"github.com/google/go-cmp/cmp"
)

// EquateEmpty equates empty maps and slices of one type, as
// cmpopts.EquateEmpty does, but decides it from the path: cmp calls a
// FilterValues function (EquateEmpty's) through reflect.Value.Call for every
// pair of values it visits, which was half of what comparing whole logs
// cost under -race (lmdbstore's TestLogStreamedReadsAsWhole and
// TestKeyedLogRoundTrip, 30 CPU-s -> 14.5); a FilterPath function is a
// plain call. The rule is EquateEmpty's: both values valid and
// interfaceable, of the same type, a map or a slice, both of length zero
// (TestEquateEmptyIsCmpopts compares the two).
func EquateEmpty() cmp.Option { return equateEmpty }

var equateEmpty = cmp.FilterPath(func(p cmp.Path) bool {
	vx, vy := p.Last().Values()
	return vx.IsValid() && vy.IsValid() && vx.CanInterface() && vy.CanInterface() && vx.Type() == vy.Type() &&
		(vx.Kind() == reflect.Slice || vx.Kind() == reflect.Map) && vx.Len() == 0 && vy.Len() == 0
}, cmp.Comparer(func(_, _ any) bool { return true }))
