package freshness

// The stat file (SPEC.md §9.9): what the tree looked like when the store's
// code graph was last brought up to date, so that "nothing changed" costs
// one stat per file and directory.
//
//	magic "MEMCTLFS" (8) ‖ version u8 (1)
//	‖ str dir (absolute) ‖ str config ‖ str code (the stored tree hashes)
//	‖ str gitdir ‖ str commondir ‖ str commit ‖ dirty u8
//	‖ uvarint n ‖ n × entry ‖ crc u32 LE (CRC-32C of everything before)
//	entry = str path ‖ kind u8 (0 file, 1 directory) ‖ uvarint size
//	        ‖ varint mtime (unix ns) ‖ str hash ("sha256:…" or empty)

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/memctl/memctl/plaincodec"
)

const (
	stateMagic = "MEMCTLFS"
	// stateVersion 1: the layout above.
	stateVersion = 1
	// StateFile is the stat file's name in the store directory.
	StateFile = "fresh.state"
)

// ErrStateFormat: the stat file is damaged or of another version. Refresh
// treats it as absent (and rewrites it); it is a cache, never the truth.
var ErrStateFormat = errors.New("freshness: stat file unreadable")

type entryKind uint8

const (
	kindFile entryKind = 0
	kindDir  entryKind = 1
)

type entry struct {
	Path  string
	Kind  entryKind
	Size  int64
	MTime int64
	Hash  string
}

type state struct {
	Dir       string
	Config    string
	Code      string
	GitDir    string
	CommonDir string
	Commit    string
	Dirty     bool
	Entries   []entry
	// written is the stat file's own mtime: entries modified at or after it
	// may have changed without changing their stat ("racy", as git says).
	written int64
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *state) encode() []byte {
	b := make([]byte, 0, 64+len(s.Entries)*64)
	b = append(b, stateMagic...)
	b = append(b, stateVersion)
	for _, x := range []string{s.Dir, s.Config, s.Code, s.GitDir, s.CommonDir, s.Commit} {
		b = plaincodec.AppendString(b, x)
	}
	b = append(b, boolByte(s.Dirty))
	b = binary.AppendUvarint(b, uint64(len(s.Entries)))
	for _, e := range s.Entries {
		b = plaincodec.AppendString(b, e.Path)
		b = append(b, byte(e.Kind))
		b = binary.AppendUvarint(b, uint64(e.Size))
		b = binary.AppendVarint(b, e.MTime)
		b = plaincodec.AppendString(b, e.Hash)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func decodeState(b []byte) (*state, error) {
	if len(b) < len(stateMagic)+1+4 || string(b[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrStateFormat)
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrStateFormat)
	}
	if v := body[len(stateMagic)]; v != stateVersion {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrStateFormat, v, stateVersion)
	}
	d := plaincodec.NewDecoder(body[len(stateMagic)+1:])
	s := &state{}
	for _, p := range []*string{&s.Dir, &s.Config, &s.Code, &s.GitDir, &s.CommonDir, &s.Commit} {
		*p = d.String()
	}
	s.Dirty = d.Byte() == 1
	n := d.Uvarint()
	if n > uint64(d.Len()) { // every entry takes several bytes: never allocate what the input merely claims
		return nil, fmt.Errorf("%w: %d entries in %d bytes", ErrStateFormat, n, d.Len())
	}
	s.Entries = make([]entry, 0, n)
	for i := uint64(0); i < n && d.Err() == nil; i++ {
		e := entry{Path: d.String(), Kind: entryKind(d.Byte())}
		e.Size = int64(d.Uvarint())
		e.MTime = d.Varint()
		e.Hash = d.String()
		s.Entries = append(s.Entries, e)
	}
	if err := d.Finish(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStateFormat, err)
	}
	return s, nil
}

// readState reads the stat file; a missing one is (nil, nil).
func readState(file string) (*state, error) {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	s, err := decodeState(b)
	if err != nil {
		return nil, err
	}
	s.written = fi.ModTime().UnixNano()
	return s, nil
}

// writeState replaces the stat file atomically.
func writeState(file string, s *state) error { return writeCacheFile(file, s.encode()) }

// writeCacheFile replaces file, a cache beside the store (the stat file,
// the refresh cache file), atomically: a temporary file beside it, then a
// rename. It is not synced: a torn file fails its checksum and is
// rebuilt.
func writeCacheFile(file string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), filepath.Base(file)+".tmp*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
