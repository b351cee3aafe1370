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

type (
	encFn func(b []byte, v reflect.Value) []byte
	// decFn decodes into v, which is settable.
	decFn func(d *Decoder, v reflect.Value)
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
	return c.enc(b, rv)
}

// Decode decodes one value from d and returns it (as the codec's type);
// on error (then also d.Err()) it returns the zero value.
func (c *Codec) Decode(d *Decoder) any {
	v := reflect.New(c.t).Elem()
	c.dec(d, v)
	if d.err != nil {
		return reflect.Zero(c.t).Interface()
	}
	return v.Interface()
}

// DecodeInto decodes one value from d into *ptr (ptr must be a pointer
// to the codec's type).
func (c *Codec) DecodeInto(d *Decoder, ptr any) {
	v := reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer || v.Type().Elem() != c.t {
		panic(fmt.Sprintf("plaincodec: DecodeInto %s with the codec of %s", v.Type(), c.t))
	}
	c.dec(d, v.Elem())
}

// Decoder reads encodings from a byte slice. Its error is sticky: once a
// read fails, every later read returns zero values.
type Decoder struct {
	b   []byte
	err error
}

// NewDecoder reads b (which must not change while decoding).
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

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

// String reads a length-prefixed string.
func (d *Decoder) String() string { return string(d.Bytes()) }

// count reads the n+1 prefix of a slice or map: -1 for nil. Every element
// takes at least one byte, so more elements than bytes left is an error.
func (d *Decoder) count() int {
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

// settable returns v itself when it can be set, else (a field reached
// through an unexported name) the same memory without the read-only flag.
// Decoding fills only values it allocated.
func settable(v reflect.Value) reflect.Value {
	if v.CanSet() {
		return v
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
}

// compile builds the encoder and decoder of t (writeShape accepted t).
func compile(t reflect.Type) (encFn, decFn) {
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte, v reflect.Value) []byte {
				if v.Bool() {
					return append(b, 1)
				}
				return append(b, 0)
			}, func(d *Decoder, v reflect.Value) {
				if len(d.b) == 0 || d.b[0] > 1 {
					d.failf("bad bool")
					return
				}
				v.SetBool(d.b[0] == 1)
				d.b = d.b[1:]
			}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return func(b []byte, v reflect.Value) []byte { return binary.AppendVarint(b, v.Int()) },
			func(d *Decoder, v reflect.Value) {
				x := d.Varint()
				if bits < 64 && (x < -1<<(bits-1) || x >= 1<<(bits-1)) {
					d.failf("%d overflows int%d", x, bits)
					return
				}
				v.SetInt(x)
			}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		bits := t.Bits()
		return func(b []byte, v reflect.Value) []byte { return binary.AppendUvarint(b, v.Uint()) },
			func(d *Decoder, v reflect.Value) {
				x := d.Uvarint()
				if bits < 64 && x >= 1<<bits {
					d.failf("%d overflows uint%d", x, bits)
					return
				}
				v.SetUint(x)
			}
	case reflect.Float32:
		return func(b []byte, v reflect.Value) []byte {
				return binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v.Float())))
			}, func(d *Decoder, v reflect.Value) {
				if len(d.b) < 4 {
					d.failf("short float32")
					return
				}
				v.SetFloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(d.b))))
				d.b = d.b[4:]
			}
	case reflect.Float64:
		return func(b []byte, v reflect.Value) []byte {
				return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
			}, func(d *Decoder, v reflect.Value) {
				if len(d.b) < 8 {
					d.failf("short float64")
					return
				}
				v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(d.b)))
				d.b = d.b[8:]
			}
	case reflect.String:
		return func(b []byte, v reflect.Value) []byte { return AppendString(b, v.String()) },
			func(d *Decoder, v reflect.Value) { v.SetString(d.String()) }
	case reflect.Slice:
		return compileSlice(t)
	case reflect.Array:
		ee, ed := compile(t.Elem())
		return func(b []byte, v reflect.Value) []byte {
				for i := 0; i < v.Len(); i++ {
					b = ee(b, v.Index(i))
				}
				return b
			}, func(d *Decoder, v reflect.Value) {
				for i := 0; i < v.Len() && d.err == nil; i++ {
					ed(d, v.Index(i))
				}
			}
	case reflect.Pointer:
		ee, ed := compile(t.Elem())
		return func(b []byte, v reflect.Value) []byte {
				if v.IsNil() {
					return append(b, 0)
				}
				return ee(append(b, 1), v.Elem())
			}, func(d *Decoder, v reflect.Value) {
				if len(d.b) == 0 || d.b[0] > 1 {
					d.failf("bad pointer tag")
					return
				}
				nilPtr := d.b[0] == 0
				d.b = d.b[1:]
				if nilPtr {
					return
				}
				p := reflect.New(t.Elem())
				ed(d, p.Elem())
				v.Set(p)
			}
	case reflect.Map:
		return compileMap(t)
	case reflect.Struct:
		return compileStruct(t)
	}
	panic("plaincodec: compile of " + t.String()) // writeShape refused it
}

func compileSlice(t reflect.Type) (encFn, decFn) {
	if t.Elem().Kind() == reflect.Uint8 {
		return func(b []byte, v reflect.Value) []byte {
				if v.IsNil() {
					return append(b, 0)
				}
				b = binary.AppendUvarint(b, uint64(v.Len())+1)
				return append(b, v.Bytes()...)
			}, func(d *Decoder, v reflect.Value) {
				n := d.count()
				if n < 0 {
					return
				}
				buf := make([]byte, n)
				copy(buf, d.b)
				v.SetBytes(buf)
				d.b = d.b[n:]
			}
	}
	ee, ed := compile(t.Elem())
	return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(v.Len())+1)
			for i := 0; i < v.Len(); i++ {
				b = ee(b, v.Index(i))
			}
			return b
		}, func(d *Decoder, v reflect.Value) {
			n := d.count()
			if n < 0 {
				return
			}
			s := reflect.MakeSlice(t, n, n)
			for i := 0; i < n && d.err == nil; i++ {
				ed(d, s.Index(i))
			}
			v.Set(s)
		}
}

func compileMap(t reflect.Type) (encFn, decFn) {
	ke, kd := compile(t.Key())
	ve, vd := compile(t.Elem())
	return func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			b = binary.AppendUvarint(b, uint64(v.Len())+1)
			it := v.MapRange()
			for it.Next() {
				b = ke(b, it.Key())
				b = ve(b, it.Value())
			}
			return b
		}, func(d *Decoder, v reflect.Value) {
			n := d.count()
			if n < 0 {
				return
			}
			m := reflect.MakeMapWithSize(t, n)
			k, e := reflect.New(t.Key()).Elem(), reflect.New(t.Elem()).Elem()
			zk, ze := reflect.Zero(t.Key()), reflect.Zero(t.Elem())
			for i := 0; i < n && d.err == nil; i++ {
				k.Set(zk)
				e.Set(ze)
				kd(d, k)
				vd(d, e)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
}

func compileStruct(t reflect.Type) (encFn, decFn) {
	n := t.NumField()
	encs, decs := make([]encFn, n), make([]decFn, n)
	for i := 0; i < n; i++ {
		encs[i], decs[i] = compile(t.Field(i).Type)
	}
	return func(b []byte, v reflect.Value) []byte {
			for i, e := range encs {
				b = e(b, v.Field(i))
			}
			return b
		}, func(d *Decoder, v reflect.Value) {
			for i, dec := range decs {
				if d.err != nil {
					return
				}
				dec(d, settable(v.Field(i)))
			}
		}
}
