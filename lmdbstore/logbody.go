package lmdbstore

// Reading a log record's body (SPEC.md §2, "Log record"): the ops of
// format 01, or the decompressed body of formats 02 and 03.
//
// A compressed body of at most readWholeAbove bytes is decompressed in one
// call, as every record of an ordinary transaction is. A larger one (a
// bulk load's: the first revision of std×40 has 28.9M operations, a
// 1.6 GiB keyed body in a 226 MB record) is read as a stream, a window at
// a time, so no reader holds the whole body or its operations: an
// operation that does not fit in what is left of the window is read again
// from a longer one. The record's bytes are the same either way; only the
// reader's memory differs.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// readWholeAbove is the compressed body size above which readers stream
// (unless a test sets Store.logWhole).
const readWholeAbove = 64 << 20

// readWindow is how much of a streamed body is read at a time (unless a
// test sets Store.logWindow).
const readWindow = 4 << 20

func (s *Store) readWholeAbove() uint64 { return uint64(cmp.Or(s.logWhole, readWholeAbove)) }
func (s *Store) readWindow() int        { return cmp.Or(s.logWindow, readWindow) }

// logBody is a record's body being read: whole in the opDecoder's buffer,
// or streamed from zr, the buffer holding a window of it.
type logBody struct {
	opDecoder
	zr     *zstd.Decoder // nil: the buffer is the whole body
	left   uint64        // bytes of the body not read from zr yet
	window int
}

// openBody returns the reader of a body: b itself (format 01), or the
// zstd frame b whose decompressed length the record states as n.
func (s *Store) openBody(format byte, frame []byte, n uint64) (*logBody, error) {
	if format == fmtPlain {
		return &logBody{opDecoder: opDecoder{decoder: decoder{b: frame}}}, nil
	}
	if n <= s.readWholeAbove() {
		plain, err := s.unzstd(frame, n)
		if err != nil {
			return nil, fmt.Errorf("bad compressed ops: %v", err)
		}
		return &logBody{opDecoder: opDecoder{decoder: decoder{b: plain}}}, nil
	}
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, fmt.Errorf("bad compressed ops: %v", err)
	}
	if !h.HasFCS || h.FrameContentSize != n {
		return nil, fmt.Errorf("bad compressed ops: frame holds %d bytes, value says %d", h.FrameContentSize, n)
	}
	zr, err := zstd.NewReader(bytes.NewReader(frame), zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	return &logBody{zr: zr, left: n, window: s.readWindow()}, nil
}

// close releases the stream's decoder.
func (b *logBody) close() {
	if b.zr != nil {
		b.zr.Close()
		b.zr = nil
	}
}

// size is a lower bound of the body's length in bytes: what it states, or
// what is in memory.
func (b *logBody) size() uint64 {
	return uint64(len(b.b)-b.off) + b.left
}

// read runs f, which reads one item through the opDecoder, and when it
// fails while more of the body is to come, reads it again from the same
// place in a longer window: an item is read whole or not at all. f must
// depend only on the decoder's state.
func (b *logBody) read(f func()) error {
	if b.zr != nil && b.left > 0 && len(b.b)-b.off < b.window/4 {
		if err := b.refill(b.window); err != nil {
			return err
		}
	}
	off, next := b.off, b.next
	for {
		f()
		if b.err == nil || b.zr == nil || b.left == 0 {
			return b.err
		}
		b.off, b.next, b.err = off, next, nil
		if err := b.refill(max(b.window, 2*(len(b.b)-b.off))); err != nil {
			return err
		}
		off = 0 // the item starts the new buffer
	}
}

// refill replaces the buffer with what is unread of it followed by up to
// want more bytes of the stream. The old buffer is left as it was: what
// was decoded from it stays valid.
func (b *logBody) refill(want int) error {
	rest := b.b[b.off:]
	add := int(min(uint64(want), b.left))
	nb := make([]byte, len(rest)+add)
	copy(nb, rest)
	if _, err := io.ReadFull(b.zr, nb[len(rest):]); err != nil {
		return fmt.Errorf("bad compressed ops: %v", err)
	}
	b.b, b.off, b.left = nb, 0, b.left-uint64(add)
	if b.left == 0 {
		var one [1]byte
		if n, err := b.zr.Read(one[:]); n != 0 || !errors.Is(err, io.EOF) {
			return errors.New("bad compressed ops: frame longer than the value says")
		}
	}
	return nil
}

// keyTable reads a format-03 body's key table, leaving the decoder at
// its first operation. A whole body's entries share one string.
func (b *logBody) keyTable() error {
	if b.zr == nil {
		tab, ops, err := splitKeyTable(b.b[b.off:])
		if err != nil {
			return err
		}
		b.tab, b.b, b.off = tab, ops, 0
		return nil
	}
	var n uint64
	if err := b.read(func() { n = b.uvarint() }); err != nil {
		return fmt.Errorf("key table: %v", err)
	}
	if n > b.size() { // every entry takes at least its length byte
		return errors.New("key table longer than the record")
	}
	b.tab = make([]string, 0, min(n, 1<<20))
	for range n {
		var e string
		if err := b.read(func() { e = b.str() }); err != nil {
			return fmt.Errorf("key table: %v", err)
		}
		b.tab = append(b.tab, e)
	}
	return nil
}

// end checks that the body holds nothing after its operations.
func (b *logBody) end() error {
	if b.zr != nil && b.left > 0 {
		return fmt.Errorf("trailing bytes: %d not read", b.left)
	}
	b.opDecoder.end()
	return b.err
}

// all reads the rest of the body into memory (replication compares a
// record's ops byte for byte).
func (b *logBody) all() ([]byte, error) {
	if b.zr != nil && b.left > 0 {
		if err := b.refill(int(b.left)); err != nil {
			return nil, err
		}
	}
	return b.b[b.off:], nil
}
