package plaincodec

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

type inner struct {
	parent     int
	start, end uint
}

// scopes is a named map type over a fast-path map.
type scopes map[int]map[string]bool

type sample struct {
	inner
	terms  map[string]int
	set    map[string]bool
	named  scopes
	Name   string
	tags   []string
	empty  []string // non-nil, no elements
	none   []string // nil
	scopes map[int]map[string]bool
	vals   map[string][]int8
	flag   bool
	b      byte
	u16    uint16
	f32    float32
	f64    float64
	raw    json.RawMessage
	arr    [2][]string
	ptr    *inner
	nilPtr *inner
	pairs  []struct{ a, b string }
}

func full() *sample {
	return &sample{
		inner: inner{parent: -1, start: 3, end: 1 << 40},
		Name:  "x", tags: []string{"a", "", "ü"}, empty: []string{},
		scopes: map[int]map[string]bool{-1: {"a": true, "b": false}, 7: {}, 8: nil},
		vals:   map[string][]int8{"lo": {-128, 127}, "nil": nil},
		terms:  map[string]int{"a": -1, "b": 1 << 40}, set: map[string]bool{"x": true, "y": false},
		named: scopes{1: {"q": true}, 2: nil, 3: {}},
		flag:  true, b: 255, u16: 65535, f32: -1.5, f64: 1e300,
		raw: json.RawMessage(`{"k":1}`), arr: [2][]string{nil, {"z"}},
		ptr:   &inner{parent: 2},
		pairs: []struct{ a, b string }{{"p", "q"}},
	}
}

func TestRoundTrip(t *testing.T) {
	c := MustNew(reflect.TypeFor[*sample]())
	for _, v := range []*sample{full(), {}, nil} {
		b := c.Append(nil, v)
		d := NewDecoder(b)
		got := c.Decode(d).(*sample)
		if err := d.Finish(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("round trip:\n got %#v\nwant %#v", got, v)
		}
	}
	// nil and empty stay apart (DeepEqual tells them apart too, but say it).
	got := c.Decode(NewDecoder(c.Append(nil, full()))).(*sample)
	if got.empty == nil || got.none != nil || got.scopes[7] == nil || got.scopes[8] != nil || got.nilPtr != nil {
		t.Fatalf("nil/empty lost: %#v", got)
	}
}

// TestSharedDecoder: a shared decoder decodes what a copying one does,
// and its strings and byte slices are the input's memory (a byte of the
// input changed after decoding shows through them, which is why its input
// must not change).
func TestSharedDecoder(t *testing.T) {
	c := MustNew(reflect.TypeFor[*sample]())
	b := c.Append(nil, full())
	d := NewSharedDecoder(b)
	got := c.Decode(d).(*sample)
	if err := d.Finish(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, full()) {
		t.Fatalf("shared decode:\n got %#v\nwant %#v", got, full())
	}
	copied := c.Decode(NewDecoder(b)).(*sample)
	for i := range b {
		if b[i] == 'x' { // the Name "x" (and the set's key "x")
			b[i] = 'w'
		}
		if b[i] == 'k' { // in the raw JSON
			b[i] = 'j'
		}
	}
	if got.Name != "w" || string(got.raw) != `{"j":1}` {
		t.Fatalf("shared decode copied: Name %q, raw %s", got.Name, got.raw)
	}
	if copied.Name != "x" || string(copied.raw) != `{"k":1}` {
		t.Fatalf("copying decode shares the input: Name %q, raw %s", copied.Name, copied.raw)
	}
	if s := NewSharedDecoder(AppendString(nil, "")).String(); s != "" {
		t.Fatalf("empty string: %q", s)
	}
}

// TestAppendPtr: AppendPtr writes what Append writes (as long, maps in
// another order) and decodes back to the value.
func TestAppendPtr(t *testing.T) {
	c := MustNew(reflect.TypeFor[sample]())
	for _, v := range []sample{*full(), {}} {
		got, want := c.AppendPtr([]byte{7}, &v), c.Append([]byte{7}, v)
		if len(got) != len(want) || got[0] != 7 {
			t.Fatalf("AppendPtr wrote %x, Append %x", got, want)
		}
		d := NewDecoder(got[1:])
		if back := c.Decode(d); d.Finish() != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("AppendPtr's encoding decodes to %#v (%v), want %#v", back, d.Err(), v)
		}
	}
}

func TestDecodeInto(t *testing.T) {
	c := MustNew(reflect.TypeFor[sample]())
	want := *full()
	var got sample
	d := NewDecoder(c.Append(nil, want))
	c.DecodeInto(d, &got)
	if err := d.Finish(); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v\n got %#v\nwant %#v", err, got, want)
	}
}

// Every strict prefix of an encoding fails (never panics, never returns a
// value as if whole); so does a trailing byte.
func TestTruncatedAndTrailing(t *testing.T) {
	c := MustNew(reflect.TypeFor[*sample]())
	b := c.Append(nil, full())
	for n := 0; n < len(b); n++ {
		d := NewDecoder(b[:n])
		c.Decode(d)
		if err := d.Finish(); !errors.Is(err, ErrFormat) {
			t.Fatalf("prefix of %d of %d bytes: err %v", n, len(b), err)
		}
	}
	d := NewDecoder(append(b, 0))
	c.Decode(d)
	if err := d.Finish(); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
}

// Damaged bytes decode to a value or an error, never a panic nor a huge
// allocation.
func TestDamaged(t *testing.T) {
	c := MustNew(reflect.TypeFor[*sample]())
	b := c.Append(nil, full())
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		x := append([]byte(nil), b...)
		for k := 0; k < 1+r.IntN(3); k++ {
			x[r.IntN(len(x))] = byte(r.IntN(256))
		}
		d := NewDecoder(x)
		c.Decode(d)
		_ = d.Finish()
	}
}

func TestOutOfRange(t *testing.T) {
	for _, tc := range []struct {
		t reflect.Type
		b []byte
	}{
		{reflect.TypeFor[int8](), []byte{0x80, 0x02}}, // zigzag 128
		{reflect.TypeFor[uint8](), []byte{0x80, 0x02}},
		{reflect.TypeFor[bool](), []byte{2}},
		{reflect.TypeFor[*int](), []byte{2, 0}},
		{reflect.TypeFor[[]string](), []byte{0xff, 0xff, 0x03}}, // many elements claimed
		{reflect.TypeFor[string](), []byte{5, 'a'}},
	} {
		d := NewDecoder(tc.b)
		MustNew(tc.t).Decode(d)
		if !errors.Is(d.Finish(), ErrFormat) {
			t.Errorf("%s from % x: no error", tc.t, tc.b)
		}
	}
}

func TestRefused(t *testing.T) {
	type rec struct{ Next *rec }
	type withAny struct{ X any }
	for _, typ := range []reflect.Type{reflect.TypeFor[any](), reflect.TypeFor[struct{}](), reflect.TypeFor[[0]int](),
		reflect.TypeFor[rec](), reflect.TypeFor[withAny](), reflect.TypeFor[func()](), reflect.TypeFor[chan int](),
		reflect.TypeFor[complex64]()} {
		if _, err := New(typ); err == nil {
			t.Errorf("New(%s) accepted", typ)
		}
	}
}

// The shape follows field names, order and kinds, not type names.
func TestShape(t *testing.T) {
	type a struct{ X, Y int }
	type b struct{ X, Y int }
	type renamed struct{ X, Z int }
	type swapped struct{ Y, X int }
	type narrower struct{ X, Y int32 }
	sa := MustNew(reflect.TypeFor[a]()).Shape()
	if MustNew(reflect.TypeFor[b]()).Shape() != sa {
		t.Error("same layout, other shape")
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[renamed](), reflect.TypeFor[swapped](), reflect.TypeFor[narrower]()} {
		if MustNew(typ).Shape() == sa {
			t.Errorf("%s: same shape as a", typ)
		}
	}
}

// noFloat is sample without floats (a NaN is not DeepEqual to itself).
type noFloat struct {
	inner
	tags   []string
	scopes map[int]map[string]bool
	vals   map[string][]int8
	flag   bool
	u16    uint16
	raw    json.RawMessage
	arr    [2][]string
	ptr    *inner
	pairs  []struct{ a, b string }
}

func FuzzDecode(f *testing.F) {
	c := MustNew(reflect.TypeFor[*noFloat]())
	s := full()
	f.Add(c.Append(nil, &noFloat{inner: s.inner, tags: s.tags, scopes: s.scopes, vals: s.vals, flag: true, u16: 9,
		raw: s.raw, arr: s.arr, ptr: s.ptr, pairs: s.pairs}))
	f.Add(c.Append(nil, &noFloat{}))
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(b)
		v := c.Decode(d)
		if d.Finish() != nil {
			return
		}
		// What decodes whole encodes back to a value that decodes equal.
		again := c.Decode(NewDecoder(c.Append(nil, v)))
		if !reflect.DeepEqual(again, v) {
			t.Fatalf("re-encoding changed the value")
		}
	})
}
