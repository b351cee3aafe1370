package ingest

import (
	"cmp"
	"maps"
	"slices"
	"sort"
	"strings"
	"unsafe"
)

// nameSet holds names, each with a one-byte value: a package's top-level
// names with their kinds (table.names), or its methods as "Recv.Method"
// (table.methods). Every package of the tree has a table, typed or not,
// kept until the extraction ends; as maps of strings they took about 70
// bytes a name plus the parser's string of each (185 MB of std×20's live
// heap). Sealed, a set is one byte slice of its entries in name order,
// each its value byte then the name, found by binary search over the
// entries' 4-byte offsets: the name's length plus 5 bytes, and nothing for
// the collector to follow. What is added after a seal waits in a map until
// the next; a name set again takes the later value, as a map does.
//
// A sealed slice is never written again (seal makes a new one): the
// strings the set hands out are views of it.
type nameSet struct {
	blob []byte          // sealed entries in name order: value byte, then the name
	at   []uint32        // each sealed entry's start in blob
	open map[string]byte // set since the last seal; it wins over blob
}

// sealed is the name and value of sealed entry i.
func (s *nameSet) sealed(i int) (string, byte) {
	lo, hi := s.at[i], uint32(len(s.blob))
	if i+1 < len(s.at) {
		hi = s.at[i+1]
	}
	if hi == lo+1 {
		return "", s.blob[lo] // an empty name (no identifier is one)
	}
	return unsafe.String(&s.blob[lo+1], hi-lo-1), s.blob[lo]
}

// search is the first sealed entry whose name is not below the key c
// compares names with (c(name) < 0: name sorts before the key).
func (s *nameSet) search(c func(name string) int) int {
	return sort.Search(len(s.at), func(i int) bool {
		name, _ := s.sealed(i)
		return c(name) >= 0
	})
}

// get is name's value, if set.
func (s *nameSet) get(name string) (byte, bool) {
	if v, ok := s.open[name]; ok {
		return v, true
	}
	i := s.search(func(n string) int { return strings.Compare(n, name) })
	if i < len(s.at) {
		if n, v := s.sealed(i); n == name {
			return v, true
		}
	}
	return 0, false
}

// getJoined is the value of the name a + "." + b, if set, without making
// that string.
func (s *nameSet) getJoined(a, b string) (byte, bool) {
	if len(s.open) > 0 {
		var buf [128]byte
		k := append(append(append(buf[:0], a...), '.'), b...)
		if v, ok := s.open[string(k)]; ok {
			return v, true
		}
	}
	i := s.search(func(n string) int { return cmpJoined(n, a, b) })
	if i < len(s.at) {
		if n, v := s.sealed(i); cmpJoined(n, a, b) == 0 {
			return v, true
		}
	}
	return 0, false
}

// cmpJoined compares e with a + "." + b.
func cmpJoined(e, a, b string) int {
	if len(e) <= len(a) {
		if c := strings.Compare(e, a[:len(e)]); c != 0 {
			return c
		}
		return -1 // a prefix of the key, and shorter
	}
	if c := strings.Compare(e[:len(a)], a); c != 0 {
		return c
	}
	if e[len(a)] != '.' {
		return cmp.Compare(e[len(a)], '.')
	}
	return strings.Compare(e[len(a)+1:], b)
}

// set sets name's value.
func (s *nameSet) set(name string, v byte) {
	if s.open == nil {
		s.open = make(map[string]byte)
	}
	s.open[name] = v
}

// each calls fn for every name and its value, in name order.
func (s *nameSet) each(fn func(name string, v byte)) {
	open := slices.Sorted(maps.Keys(s.open))
	i := 0
	for _, k := range open {
		for ; i < len(s.at); i++ {
			n, v := s.sealed(i)
			if n >= k {
				break
			}
			fn(n, v)
		}
		if i < len(s.at) {
			if n, _ := s.sealed(i); n == k {
				i++ // the later value: the open one
			}
		}
		fn(k, s.open[k])
	}
	for ; i < len(s.at); i++ {
		fn(s.sealed(i))
	}
}

// seal moves what was set since the last seal into a new sealed slice.
func (s *nameSet) seal() {
	if len(s.open) == 0 {
		return
	}
	size := len(s.blob)
	for k := range s.open {
		size += 1 + len(k)
	}
	blob := make([]byte, 0, size)
	at := make([]uint32, 0, len(s.at)+len(s.open))
	s.each(func(n string, v byte) {
		at = append(at, uint32(len(blob)))
		blob = append(append(blob, v), n...)
	})
	s.blob, s.at, s.open = blob, at, nil
}

// clone is a copy of s that setting leaves s as it is (the sealed slice,
// never written, is shared).
func (s *nameSet) clone() nameSet {
	return nameSet{blob: s.blob, at: s.at, open: maps.Clone(s.open)}
}

// kindCodes are the kinds a table's names take, by their value in
// table.names (0: none).
var kindCodes = [...]string{"", KindFunc, KindType, KindInterface, KindVar, KindConst}

// kindCode is kind's value in table.names.
func kindCode(kind string) byte {
	return byte(slices.Index(kindCodes[:], kind))
}

// kind is the kind of top-level name in t ("" if t declares none).
func (t *table) kind(name string) string {
	v, _ := t.names.get(name)
	return kindCodes[v]
}

// setKind records that t declares name as kind.
func (t *table) setKind(name, kind string) { t.names.set(name, kindCode(kind)) }

// addMethod records that t declares method m on type recv.
func (t *table) addMethod(recv, m string) { t.methods.set(recv+"."+m, 1) }

// hasMethod reports whether t declares method m on type recv.
func (t *table) hasMethod(recv, m string) bool {
	_, ok := t.methods.getJoined(recv, m)
	return ok
}

// recvs are the types t declares methods on, in order.
func (t *table) recvs() []string {
	var out []string
	t.methods.each(func(n string, _ byte) {
		recv, _, _ := strings.Cut(n, ".")
		if len(out) == 0 || out[len(out)-1] != recv {
			out = append(out, recv)
		}
	})
	return out
}

// methodSet is the set of methods t declares on type recv.
func (t *table) methodSet(recv string) map[string]bool {
	out := make(map[string]bool)
	for k := range t.methods.open {
		if r, m, _ := strings.Cut(k, "."); r == recv {
			out[m] = true
		}
	}
	s := &t.methods
	for i := s.search(func(n string) int { return cmpJoined(n, recv, "") }); i < len(s.at); i++ {
		n, _ := s.sealed(i)
		m, ok := strings.CutPrefix(n, recv+".")
		if !ok {
			break
		}
		out[m] = true
	}
	return out
}

// seal seals t's names and methods (nameSet.seal).
func (t *table) seal() {
	t.names.seal()
	t.methods.seal()
}

// release lets go of what no later reader needs of t (tableSpans): its
// names, methods, interfaces, imports and inference declarations. Its
// import path and name stay (packageName).
func (t *table) release() {
	t.names, t.methods = nameSet{}, nameSet{}
	t.ifaces, t.imports = nil, nil
	t.typeSpecs, t.sigs, t.vars = nil, nil, nil
	t.released = true
}
