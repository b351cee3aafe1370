package replica

// The message format of the replicated log (SPEC.md §13.2): a revision is
// one message, or an atomic batch of parts when its record does not fit
// one message.
//
//	subject: memctl.<STREAM>.log
//	headers: Memctl-Format: 1, or 2 for a record of log format 03 (a key
//	                        table; older memctls refuse it by this header)
//	         Memctl-Rev:    <revision, decimal>
//	         Memctl-Part:   <i>/<n>   (only when n > 1; i from 1)
//	data:    the revision's log record (SPEC.md §2 `log` value, crc
//	         included), or its i-th slice
//
// A revision's parts are consecutive stream messages; the position of a
// revision is the sequence of its last part.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/memctl/memctl/lmdbstore"
)

// Header names and the format versions.
const (
	hdrFormat = "Memctl-Format"
	hdrRev    = "Memctl-Rev"
	hdrPart   = "Memctl-Part"
	format    = "1" // records of log formats 01 and 02
	formatKey = "2" // records of log format 03
)

// keyedLog is the format byte of a log record with a key table (SPEC.md
// §2), the one record format message format 2 carries.
const keyedLog = 3

// messageFormat is the Memctl-Format of a record's messages.
func messageFormat(record []byte) string {
	if len(record) > 0 && record[0] == keyedLog {
		return formatKey
	}
	return format
}

// Subject is the subject a stream's revisions are published on.
func Subject(stream string) string { return "memctl." + stream + ".log" }

// encode splits revision rev's record into messages of at most maxData
// data bytes each.
func encode(subject string, rev lmdbstore.Revision, record []byte, maxData int) []*nats.Msg {
	n := max(1, (len(record)+maxData-1)/maxData)
	msgs := make([]*nats.Msg, 0, n)
	for i := range n {
		part := record[i*maxData : min(len(record), (i+1)*maxData)]
		m := nats.NewMsg(subject)
		m.Header.Set(hdrFormat, messageFormat(record))
		m.Header.Set(hdrRev, strconv.FormatUint(uint64(rev), 10))
		if n > 1 {
			m.Header.Set(hdrPart, fmt.Sprintf("%d/%d", i+1, n))
		}
		m.Data = part
		msgs = append(msgs, m)
	}
	return msgs
}

// MessageError is a stream message that is not a well-formed part of the
// next revision: Seq names it.
type MessageError struct {
	Seq uint64
	Msg string
}

func (e *MessageError) Error() string {
	return fmt.Sprintf("remote position %d refused: %s (nothing applied)", e.Seq, e.Msg)
}

// Is makes a refused message an lmdbstore.ErrDiverged.
func (e *MessageError) Is(target error) bool { return target == lmdbstore.ErrDiverged }

// part is one decoded message.
type part struct {
	seq    uint64
	format string
	rev    lmdbstore.Revision
	i, n   int
	data   []byte
}

// decodePart reads a stream message's headers.
func decodePart(m *jetstream.RawStreamMsg) (part, error) {
	bad := func(format string, a ...any) (part, error) {
		return part{}, &MessageError{Seq: m.Sequence, Msg: fmt.Sprintf(format, a...)}
	}
	f := m.Header.Get(hdrFormat)
	if f != format && f != formatKey {
		return bad("format %q (this memctl reads %q and %q)", f, format, formatKey)
	}
	rev, err := strconv.ParseUint(m.Header.Get(hdrRev), 10, 64)
	if err != nil || rev == 0 {
		return bad("bad %s header %q", hdrRev, m.Header.Get(hdrRev))
	}
	p := part{seq: m.Sequence, format: f, rev: lmdbstore.Revision(rev), i: 1, n: 1, data: m.Data}
	if h := m.Header.Get(hdrPart); h != "" {
		a, b, ok := strings.Cut(h, "/")
		i, err1 := strconv.Atoi(a)
		n, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || n < 2 || i < 1 || i > n {
			return bad("bad %s header %q", hdrPart, h)
		}
		p.i, p.n = i, n
	}
	return p, nil
}

// assembler joins consecutive parts into revisions.
type assembler struct {
	next   lmdbstore.Revision // the revision the next complete record must be
	cur    []byte
	curN   int
	curI   int
	curFmt string // the Memctl-Format of the revision's part 1
}

// add takes the next message's part; it returns a complete revision when
// p was its last part.
func (a *assembler) add(p part) (lmdbstore.Replicated, bool, error) {
	bad := func(format string, x ...any) error {
		return &MessageError{Seq: p.seq, Msg: fmt.Sprintf(format, x...)}
	}
	if p.rev != a.next {
		return lmdbstore.Replicated{}, false, bad("holds revision %d, the next is %d", p.rev, a.next)
	}
	if p.i == 1 {
		if a.curI != 0 {
			return lmdbstore.Replicated{}, false, bad("starts revision %d again at part 1 of %d (part %d of %d missing)", p.rev, p.n, a.curI+1, a.curN)
		}
		a.cur, a.curN = nil, p.n
	} else if p.n != a.curN || p.i != a.curI+1 {
		return lmdbstore.Replicated{}, false, bad("part %d/%d of revision %d, expected part %d/%d", p.i, p.n, p.rev, a.curI+1, max(a.curN, 1))
	}
	if p.i == 1 {
		a.curFmt = p.format
	} else if p.format != a.curFmt {
		return lmdbstore.Replicated{}, false, bad("part %d/%d of revision %d has format %q, part 1 %q", p.i, p.n, p.rev, p.format, a.curFmt)
	}
	a.curI = p.i
	a.cur = append(a.cur, p.data...)
	if p.i < p.n {
		return lmdbstore.Replicated{}, false, nil
	}
	if f := messageFormat(a.cur); f != a.curFmt {
		return lmdbstore.Replicated{}, false, bad("revision %d has message format %q, its record needs %q", p.rev, a.curFmt, f)
	}
	r := lmdbstore.Replicated{Rev: p.rev, Record: a.cur, Pos: p.seq}
	a.cur, a.curI, a.curN = nil, 0, 0
	a.next++
	return r, true, nil
}
