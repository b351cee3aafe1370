package lmdbstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// TestChunkedMatchesSlice: a chunked list reads back as a plain slice given
// the same appends, writes and truncations does, across chunk boundaries,
// and an element's pointer stays valid while the list grows; in memory,
// and spilled to a file past its first chunk or from its first, with its
// pages evicted between passes. A spilled list maps every chunk past its
// resident ones, and releases them all.
func TestChunkedMatchesSlice(t *testing.T) {
	for _, resident := range []int{-1, 0, 1} { // -1: no spilling
		t.Run(fmt.Sprint("resident=", resident), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 11))
			var c chunked[uint64]
			if resident >= 0 {
				c.spillTo(t.TempDir(), resident)
			}
			var want []uint64
			first := (*uint64)(nil)
			check := func(at string) {
				t.Helper()
				if c.len() != len(want) {
					t.Fatalf("%s: len %d, want %d", at, c.len(), len(want))
				}
				for i, w := range want {
					if got := *c.at(i); got != w {
						t.Fatalf("%s: element %d is %d, want %d", at, i, got, w)
					}
					if got := c.load(i); got != w { // from the file where the chunk is mapped
						t.Fatalf("%s: element %d loads as %d, want %d", at, i, got, w)
					}
				}
				if resident < 0 {
					return
				}
				if len(c.spill.maps) != len(c.chunks) {
					t.Fatalf("%s: %d chunks, %d spill entries", at, len(c.chunks), len(c.spill.maps))
				}
				for i, m := range c.spill.maps {
					if mapped := m != nil; mapped != (i >= resident) {
						t.Fatalf("%s: chunk %d of %d mapped %v with %d resident", at, i, len(c.chunks), mapped, resident)
					}
				}
			}
			for round := range 6 {
				for range rng.IntN(3 * chunkLen) {
					v := rng.Uint64()
					if i := c.add(v); i != len(want) {
						t.Fatalf("add returned %d, want %d", i, len(want))
					}
					want = append(want, v)
					if first == nil {
						first = c.at(0)
					}
				}
				for range 100 {
					i := rng.IntN(len(want))
					v := rng.Uint64()
					*c.at(i), want[i] = v, v
				}
				if first != c.at(0) {
					t.Fatal("element 0 moved as the list grew")
				}
				check("after appends")
				c.evict()
				check("after evicting")
				n := 0
				switch round % 3 {
				case 0:
					n = rng.IntN(len(want) + 1)
				case 1:
					n = len(want) &^ (chunkLen - 1) // on a chunk boundary
				}
				c.truncate(n)
				want = want[:n]
				if len(c.chunks) != (n+chunkLen-1)/chunkLen {
					t.Fatalf("truncated to %d: %d chunks kept", n, len(c.chunks))
				}
				check("after truncate")
				if n == 0 {
					first = nil
				}
			}
			spill := c.spill
			c.release()
			if c.len() != 0 || c.spill != nil || (spill != nil && (spill.maps != nil || spill.f != nil)) {
				t.Fatalf("released: %d elements, spill %+v", c.len(), spill)
			}
		})
	}
}

// TestChunkedSpillLeavesMemory: a spilled list of 32 MiB adds neither to
// the Go heap nor to the process's resident file pages as it is written
// (each chunk's pages go once it is full); reading it maps its pages back
// (RssFile rises by about its size) and evict takes them out again; load,
// out of order, maps none; the elements read back as written throughout.
func TestChunkedSpillLeavesMemory(t *testing.T) {
	var c chunked[uint64]
	c.spillTo(t.TempDir(), 0)
	defer c.release()
	const chunks, mb = 64, 1 << 20 // 64 chunks of 512 KiB
	heap := func() int64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	heap0, file0 := heap(), rssFile(t)
	var want uint64
	for i := range uint64(chunks * chunkLen) {
		v := i*2654435761 + 7
		want += v
		c.add(v)
	}
	heap1, file1 := heap(), rssFile(t)
	sum := func() (s uint64) {
		for i := range c.len() {
			s += *c.at(i)
		}
		return s
	}
	if got := sum(); got != want {
		t.Fatalf("elements sum to %d, want %d", got, want)
	}
	file2 := rssFile(t)
	c.evict()
	file3 := rssFile(t)
	if heap1-heap0 > 4*mb || file1-file0 > 4*mb {
		t.Errorf("writing 32 MiB spilled added %d MB of heap and %d MB of RssFile: want neither", (heap1-heap0)/mb, (file1-file0)/mb)
	}
	if file2-file1 < 24*mb || file2-file3 < 24*mb {
		t.Errorf("RssFile %d MB written, %d MB read, %d MB evicted: want the reading's 32 MB added, then taken off", file1/mb, file2/mb, file3/mb)
	}
	if got := sum(); got != want {
		t.Fatalf("after evicting, elements sum to %d, want %d", got, want)
	}
	// load reads the file, not the mapping: out of order, it maps nothing.
	c.evict()
	file4 := rssFile(t)
	var loaded uint64
	for i := range c.len() {
		loaded += c.load((i * 40503) % c.len()) // 40503 is odd: every element once
	}
	if loaded != want {
		t.Fatalf("loaded elements sum to %d, want %d", loaded, want)
	}
	if file5 := rssFile(t); file5-file4 > 4*mb {
		t.Errorf("loading 32 MiB out of order added %d MB of RssFile: want none", (file5-file4)/mb)
	}
}

// TestChunkedSpillOneRegion: a spilled list maps each chunk at its file
// offset in one reserved range, so that the mapped chunks lie one after
// another (evict is then one call over them); a truncated list maps its
// new chunks there too and reads back as written; release unmaps the
// whole range.
func TestChunkedSpillOneRegion(t *testing.T) {
	var c chunked[uint32]
	c.spillTo(t.TempDir(), 2)
	const chunks = 10
	value := func(i int) uint32 { return uint32(i)*2654435761 + 11 }
	for i := range chunks * chunkLen {
		c.add(value(i))
	}
	s := c.spill
	contiguous := func(at string) {
		t.Helper()
		if s.region == nil {
			t.Fatalf("%s: no region reserved", at)
		}
		for i, m := range s.maps {
			switch {
			case i < 2 && m != nil:
				t.Fatalf("%s: resident chunk %d is a mapping", at, i)
			case i >= 2 && (m == nil || unsafe.SliceData(m) != &s.region[s.offs[i]]):
				t.Fatalf("%s: chunk %d is not mapped at its file offset %d in the region", at, i, s.offs[i])
			}
		}
	}
	contiguous("written")
	c.evict()
	c.truncate(5*chunkLen + 123)
	for i := c.len(); i < 8*chunkLen; i++ {
		c.add(value(i))
	}
	contiguous("truncated and grown")
	c.evict()
	for i := range c.len() {
		if got := *c.at(i); got != value(i) {
			t.Fatalf("element %d: %d, want %d", i, got, value(i))
		}
	}
	base := fmt.Sprintf("%x-", uintptr(unsafe.Pointer(unsafe.SliceData(s.region))))
	mapped := func() bool {
		b, err := os.ReadFile("/proc/self/maps")
		if err != nil {
			t.Skip("no /proc/self/maps:", err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, base) {
				return true
			}
		}
		return false
	}
	if !mapped() {
		t.Fatalf("the region at %s is not in /proc/self/maps", base)
	}
	c.release()
	if mapped() {
		t.Errorf("the region at %s is still mapped after release", base)
	}
}
