// Package plaincodec encodes plain Go data — booleans, integers, floats,
// strings, slices, arrays, maps, structs (exported fields or not) and
// pointers to them — into a compact binary form and back, by reflection
// compiled once per type. It is for caches that one process writes and a
// later process of the same build reads (the refresh cache, SPEC.md
// §9.10): the encoding carries no field names nor types, so a reader
// compares the writer's Shape (a digest of the type's layout) with its
// own before decoding.
//
// Encoding (varints as encoding/binary writes them):
//
//	bool                  1 byte, 0 or 1
//	int, int8 … int64     zigzag varint (binary.AppendVarint)
//	uint … uint64         uvarint
//	float32, float64      4 or 8 bytes, the IEEE 754 bits little-endian
//	string                uvarint length ‖ bytes
//	slice, map            uvarint 0 for nil, else n+1 ‖ n elements (a map's
//	                      element is key ‖ value, in no particular order)
//	array                 its elements
//	struct                its fields in declaration order
//	pointer               byte 0 for nil, else 1 ‖ the element
//
// Invariants: every type New accepts encodes to at least one byte, so
// Decode never allocates more elements than bytes remain; Decode of any
// input returns a value or an error wrapping ErrFormat, never panics;
// Decode(Append(v)) is deeply equal to v (nil and empty slices and maps
// are told apart).
package plaincodec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"unsafe"
)

// ErrFormat: the bytes are not an encoding of the type (short, too long,
// a value out of range).
var ErrFormat = errors.New("plaincodec: bad encoding")

// Codec encodes and decodes values of one type. It is immutable and safe
// for concurrent use.
type Codec struct {
	t     reflect.Type
	shape string
	enc   encFn
	dec   decFn
}

// The compiled functions work on the memory of a value (a pointer to
// it) rather than on reflect.Values: a field, element or map entry costs
// an offset, not a reflective lookup. Decoding writes only memory it
// allocated (reflect.New, reflect.MakeSlice) through typed pointers, so
// the garbage collector sees every pointer stored.
type (
	encFn func(b []byte, p unsafe.Pointer) []byte
	decFn func(d *Decoder, p unsafe.Pointer)
)

// New compiles the codec of t. It fails for the kinds it cannot encode
// (interfaces, functions, channels, complex numbers, unsafe pointers), for
// recursive types and for types that encode to no byte (an empty struct,
// an array of length 0).
func New(t reflect.Type) (*Codec, error) {
	var sb strings.Builder
	if err := writeShape(&sb, t, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(sb.String()))
	c := &Codec{t: t, shape: "sha256:" + hex.EncodeToString(sum[:16])}
	c.enc, c.dec = compile(t)
	return c, nil
}

// MustNew is New for types fixed at compile time; it panics on error.
func MustNew(t reflect.Type) *Codec {
	c, err := New(t)
	if err != nil {
		panic(err)
	}
	return c
}

// Shape is a digest of the type's layout: kinds, sizes of integers,
// field names and order, recursively. Two builds whose types have the
// same shape read each other's encodings.
func (c *Codec) Shape() string { return c.shape }

// Append appends the encoding of v, which must be of the codec's type.
func (c *Codec) Append(b []byte, v any) []byte {
	rv := reflect.ValueOf(v)
	if rv.Type() != c.t {
		panic(fmt.Sprintf("plaincodec: Append of %s with the codec of %s", rv.Type(), c.t))
	}
	at := reflect.New(c.t)
	at.Elem().Set(rv)
	return c.enc(b, at.UnsafePointer())
}

// AppendPtr appends the encoding of *ptr (ptr must be a non-nil pointer
// to the codec's type): Append without copying the value, which a loop
// over many values of a large type calls with one variable.
func (c *Codec) AppendPtr(b []byte, ptr any) []byte {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != c.t || v.IsNil() {
		panic(fmt.Sprintf("plaincodec: AppendPtr %s with the codec of %s", v.Type(), c.t))
	}
	return c.enc(b, v.UnsafePointer())
}

// Decode decodes one value from d and returns it (as the codec's type);
// on error (then also d.Err()) it returns the zero value.
func (c *Codec) Decode(d *Decoder) any {
	v := reflect.New(c.t)
	c.dec(d, v.UnsafePointer())
	if d.err != nil {
		return reflect.Zero(c.t).Interface()
	}
	return v.Elem().Interface()
}

// DecodeInto decodes one value from d into *ptr (ptr must be a pointer
// to the codec's type, to a zero value).
func (c *Codec) DecodeInto(d *Decoder, ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != c.t || v.IsNil() {
		panic(fmt.Sprintf("plaincodec: DecodeInto %s with the codec of %s", v.Type(), c.t))
	}
	c.dec(d, v.UnsafePointer())
}

// Decoder reads encodings from a byte slice. Its error is sticky: once a
// read fails, every later read returns zero values.
type Decoder struct {
	b   []byte
	err error
	// shared: strings and byte slices decoded are the input's own
	// memory (NewSharedDecoder).
	shared bool
}

// NewDecoder reads b (which must not change while decoding).
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

// NewSharedDecoder reads b, which must never change afterwards: the
// strings and byte slices it decodes are b's own memory, not copies (a
// cache read once and kept whole saves an allocation per string).
func NewSharedDecoder(b []byte) *Decoder { return &Decoder{b: b, shared: true} }

// Err is the first error of a read, nil if none.
func (d *Decoder) Err() error { return d.err }

// Len is the number of bytes left.
func (d *Decoder) Len() int { return len(d.b) }

// Rest is the bytes left (the input's own memory).
func (d *Decoder) Rest() []byte { return d.b }

// Finish returns the error of the reads, or an error when bytes remain.
func (d *Decoder) Finish() error {
	if d.err == nil && len(d.b) != 0 {
		d.failf("%d trailing bytes", len(d.b))
	}
	return d.err
}

func (d *Decoder) failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	d.b = nil
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.failf("short or overlong uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a zigzag varint.
func (d *Decoder) Varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.failf("short or overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.b) == 0 {
		d.failf("short byte")
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// Bytes reads a length-prefixed byte string; the result aliases the
// decoder's input.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if n > uint64(len(d.b)) {
		d.failf("%d bytes claimed, %d left", n, len(d.b))
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

// String reads a length-prefixed string (the input's memory when the
// decoder is shared).
func (d *Decoder) String() string {
	b := d.Bytes()
	if d.shared && len(b) > 0 {
		return unsafe.String(&b[0], len(b))
	}
	return string(b)
}

// Count reads the n+1 prefix of a slice or map (as a Codec writes them):
// -1 for nil. Every element takes at least one byte, so more elements than
// bytes left is an error.
func (d *Decoder) Count() int {
	n := d.Uvarint()
	if n == 0 || d.err != nil {
		return -1
	}
	if n-1 > uint64(len(d.b)) {
		d.failf("%d elements claimed, %d bytes left", n-1, len(d.b))
		return -1
	}
	return int(n - 1)
}

// AppendString appends a length-prefixed string (as Decoder.String reads).
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// writeShape writes the layout of t, failing for what New refuses.
func writeShape(sb *strings.Builder, t reflect.Type, open map[reflect.Type]bool) error {
	if open[t] {
		return fmt.Errorf("plaincodec: recursive type %s", t)
	}
	open[t] = true
	defer delete(open, t)
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		sb.WriteString(t.Kind().String())
	case reflect.Slice:
		sb.WriteString("[]")
		return writeShape(sb, t.Elem(), open)
	case reflect.Array:
		if t.Len() == 0 {
			return fmt.Errorf("plaincodec: %s encodes to no byte", t)
		}
		fmt.Fprintf(sb, "[%d]", t.Len())
		return writeShape(sb, t.Elem(), open)
	case reflect.Pointer:
		sb.WriteString("*")
		return writeShape(sb, t.Elem(), open)
	case reflect.Map:
		sb.WriteString("map[")
		if err := writeShape(sb, t.Key(), open); err != nil {
			return err
		}
		sb.WriteString("]")
		return writeShape(sb, t.Elem(), open)
	case reflect.Struct:
		if t.NumField() == 0 {
			return fmt.Errorf("plaincodec: %s encodes to no byte", t)
		}
		sb.WriteString("struct{")
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			sb.WriteString(f.Name)
			sb.WriteString(" ")
			if err := writeShape(sb, f.Type, open); err != nil {
				return err
			}
			sb.WriteString(";")
		}
		sb.WriteString("}")
	default:
		return fmt.Errorf("plaincodec: cannot encode %s (%s)", t, t.Kind())
	}
	return nil
}

// sliceHeader is the memory of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// compile builds the encoder and decoder of t (writeShape accepted t).
func compile(t reflect.Type) (encFn, decFn) {
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte, p unsafe.Pointer) []byte { return appendBool(b, *(*bool)(p)) },
			func(d *Decoder, p unsafe.Pointer) { *(*bool)(p) = d.bool() }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch t.Size() {
		case 1:
			return compileInt[int8]()
		case 2:
			return compileInt[int16]()
		case 4:
			return compileInt[int32]()
		}
		return compileInt[int64]()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		switch t.Size() {
		case 1:
			return compileUint[uint8]()
		case 2:
			return compileUint[uint16]()
		case 4:
			return compileUint[uint32]()
		}
		return compileUint[uint64]()
	case reflect.Float32:
		return func(b []byte, p unsafe.Pointer) []byte {
				return binary.LittleEndian.AppendUint32(b, math.Float32bits(*(*float32)(p)))
			}, func(d *Decoder, p unsafe.Pointer) {
				if len(d.b) < 4 {
					d.failf("short float32")
					return
				}
				*(*float32)(p) = math.Float32frombits(binary.LittleEndian.Uint32(d.b))
				d.b = d.b[4:]
			}
	case reflect.Float64:
		return func(b []byte, p unsafe.Pointer) []byte {
				return binary.LittleEndian.AppendUint64(b, math.Float64bits(*(*float64)(p)))
			}, func(d *Decoder, p unsafe.Pointer) {
				if len(d.b) < 8 {
					d.failf("short float64")
					return
				}
				*(*float64)(p) = math.Float64frombits(binary.LittleEndian.Uint64(d.b))
				d.b = d.b[8:]
			}
	case reflect.String:
		return func(b []byte, p unsafe.Pointer) []byte { return AppendString(b, *(*string)(p)) },
			func(d *Decoder, p unsafe.Pointer) { *(*string)(p) = d.String() }
	case reflect.Slice:
		return compileSlice(t)
	case reflect.Array:
		ee, ed := compile(t.Elem())
		n, size := t.Len(), t.Elem().Size()
		return func(b []byte, p unsafe.Pointer) []byte {
				for i := 0; i < n; i++ {
					b = ee(b, unsafe.Add(p, uintptr(i)*size))
				}
				return b
			}, func(d *Decoder, p unsafe.Pointer) {
				for i := 0; i < n && d.err == nil; i++ {
					ed(d, unsafe.Add(p, uintptr(i)*size))
				}
			}
	case reflect.Pointer:
		ee, ed := compile(t.Elem())
		elem := t.Elem()
		return func(b []byte, p unsafe.Pointer) []byte {
				q := *(*unsafe.Pointer)(p)
				if q == nil {
					return append(b, 0)
				}
				return ee(append(b, 1), q)
			}, func(d *Decoder, p unsafe.Pointer) {
				if len(d.b) == 0 || d.b[0] > 1 {
					d.failf("bad pointer tag")
					return
				}
				nilPtr := d.b[0] == 0
				d.b = d.b[1:]
				if nilPtr {
					return
				}
				q := reflect.New(elem).UnsafePointer()
				ed(d, q)
				*(*unsafe.Pointer)(p) = q
			}
	case reflect.Map:
		return compileMap(t)
	case reflect.Struct:
		return compileStruct(t)
	}
	panic("plaincodec: compile of " + t.String()) // writeShape refused it
}

// compileInt is the codec of a signed integer of T's size.
func compileInt[T int8 | int16 | int32 | int64]() (encFn, decFn) {
	return func(b []byte, p unsafe.Pointer) []byte { return binary.AppendVarint(b, int64(*(*T)(p))) },
		func(d *Decoder, p unsafe.Pointer) {
			x := d.Varint()
			if int64(T(x)) != x {
				d.failf("%d overflows %d bytes", x, unsafe.Sizeof(T(0)))
				return
			}
			*(*T)(p) = T(x)
		}
}

// compileUint is the codec of an unsigned integer of T's size.
func compileUint[T uint8 | uint16 | uint32 | uint64]() (encFn, decFn) {
	return func(b []byte, p unsafe.Pointer) []byte { return binary.AppendUvarint(b, uint64(*(*T)(p))) },
		func(d *Decoder, p unsafe.Pointer) {
			x := d.Uvarint()
			if uint64(T(x)) != x {
				d.failf("%d overflows %d bytes", x, unsafe.Sizeof(T(0)))
				return
			}
			*(*T)(p) = T(x)
		}
}

func compileSlice(t reflect.Type) (encFn, decFn) {
	if t.Elem().Kind() == reflect.Uint8 {
		return func(b []byte, p unsafe.Pointer) []byte {
				s := *(*[]byte)(p)
				if s == nil {
					return append(b, 0)
				}
				b = binary.AppendUvarint(b, uint64(len(s))+1)
				return append(b, s...)
			}, func(d *Decoder, p unsafe.Pointer) {
				n := d.Count()
				if n < 0 {
					return
				}
				if d.shared {
					*(*[]byte)(p) = d.b[:n:n]
				} else {
					buf := make([]byte, n)
					copy(buf, d.b)
					*(*[]byte)(p) = buf
				}
				d.b = d.b[n:]
			}
	}
	ee, ed := compile(t.Elem())
	size := t.Elem().Size()
	return func(b []byte, p unsafe.Pointer) []byte {
			h := (*sliceHeader)(p)
			if h.data == nil {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(h.len)+1)
			for i := 0; i < h.len; i++ {
				b = ee(b, unsafe.Add(h.data, uintptr(i)*size))
			}
			return b
		}, func(d *Decoder, p unsafe.Pointer) {
			n := d.Count()
			if n < 0 {
				return
			}
			data := reflect.MakeSlice(t, n, n).UnsafePointer()
			if data == nil {
				data = unsafe.Pointer(&zeroBase) // an empty slice that is not nil
			}
			for i := 0; i < n && d.err == nil; i++ {
				ed(d, unsafe.Add(data, uintptr(i)*size))
			}
			*(*sliceHeader)(p) = sliceHeader{data: data, len: n, cap: n}
		}
}

// zeroBase is where empty non-nil slices point (as the runtime's own
// zero-size allocations do).
var zeroBase [8]byte

// compileMap goes through reflect for the map itself (no layout to lean
// on), and through memory for keys and values — except for the maps of
// plain keys and values that facts are full of, written in Go.
func compileMap(t reflect.Type) (encFn, decFn) {
	switch {
	case t.Key() == reflect.TypeFor[string]() && t.Elem() == reflect.TypeFor[bool]():
		return compileMapOf(AppendString, (*Decoder).String, appendBool, (*Decoder).bool)
	case t.Key() == reflect.TypeFor[string]() && t.Elem() == reflect.TypeFor[int]():
		return compileMapOf(AppendString, (*Decoder).String, appendInt, (*Decoder).int)
	case t.Key() == reflect.TypeFor[int]() && t.Elem() == reflect.TypeFor[map[string]bool]():
		e, d := compileMapOf(AppendString, (*Decoder).String, appendBool, (*Decoder).bool)
		return compileMapOf(appendInt, (*Decoder).int,
			func(b []byte, m map[string]bool) []byte { return e(b, unsafe.Pointer(&m)) },
			func(dd *Decoder) (m map[string]bool) { d(dd, unsafe.Pointer(&m)); return m })
	}
	ke, kd := compile(t.Key())
	ve, vd := compile(t.Elem())
	return func(b []byte, p unsafe.Pointer) []byte {
			m := reflect.NewAt(t, p).Elem()
			if m.IsNil() {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(m.Len())+1)
			k, v := reflect.New(t.Key()), reflect.New(t.Elem())
			it := m.MapRange()
			for it.Next() {
				k.Elem().SetIterKey(it)
				v.Elem().SetIterValue(it)
				b = ke(b, k.UnsafePointer())
				b = ve(b, v.UnsafePointer())
			}
			return b
		}, func(d *Decoder, p unsafe.Pointer) {
			n := d.Count()
			if n < 0 {
				return
			}
			m := reflect.MakeMapWithSize(t, n)
			k, v := reflect.New(t.Key()), reflect.New(t.Elem())
			zk, zv := reflect.Zero(t.Key()), reflect.Zero(t.Elem())
			for i := 0; i < n && d.err == nil; i++ {
				k.Elem().Set(zk)
				v.Elem().Set(zv)
				kd(d, k.UnsafePointer())
				vd(d, v.UnsafePointer())
				m.SetMapIndex(k.Elem(), v.Elem())
			}
			reflect.NewAt(t, p).Elem().Set(m)
		}
}

func compileStruct(t reflect.Type) (encFn, decFn) {
	n := t.NumField()
	encs, decs, offs := make([]encFn, n), make([]decFn, n), make([]uintptr, n)
	for i := 0; i < n; i++ {
		encs[i], decs[i] = compile(t.Field(i).Type)
		offs[i] = t.Field(i).Offset
	}
	return func(b []byte, p unsafe.Pointer) []byte {
			for i, e := range encs {
				b = e(b, unsafe.Add(p, offs[i]))
			}
			return b
		}, func(d *Decoder, p unsafe.Pointer) {
			for i, dec := range decs {
				if d.err != nil {
					return
				}
				dec(d, unsafe.Add(p, offs[i]))
			}
		}
}

// compileMapOf is the codec of a map[K]V (or a named type of it) with
// the given codecs of K and V.
func compileMapOf[K comparable, V any](ek func([]byte, K) []byte, dk func(*Decoder) K,
	ev func([]byte, V) []byte, dv func(*Decoder) V) (encFn, decFn) {
	return func(b []byte, p unsafe.Pointer) []byte {
			m := *(*map[K]V)(p)
			if m == nil {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(len(m))+1)
			for k, v := range m {
				b = ev(ek(b, k), v)
			}
			return b
		}, func(d *Decoder, p unsafe.Pointer) {
			n := d.Count()
			if n < 0 {
				return
			}
			m := make(map[K]V, n)
			for i := 0; i < n && d.err == nil; i++ {
				k := dk(d)
				m[k] = dv(d)
			}
			*(*map[K]V)(p) = m
		}
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func (d *Decoder) bool() bool {
	if len(d.b) == 0 || d.b[0] > 1 {
		d.failf("bad bool")
		return false
	}
	v := d.b[0] == 1
	d.b = d.b[1:]
	return v
}

func appendInt(b []byte, v int) []byte { return binary.AppendVarint(b, int64(v)) }

func (d *Decoder) int() int {
	x := d.Varint()
	if x != int64(int(x)) {
		d.failf("%d overflows int", x)
		return 0
	}
	return int(x)
}
