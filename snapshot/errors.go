package snapshot

import (
	"errors"
	"fmt"
)

// Errors, by phase. Every error about a damaged file matches ErrCorrupt with
// errors.Is and is a *FormatError naming the section and offset.
var (
	// ErrCorrupt: the file is damaged or was not written by a conforming
	// writer (bad CRC, out-of-range index, unsorted ids, truncation...).
	ErrCorrupt = errors.New("corrupt snapshot")
	// ErrNotSnapshot: the file does not start with the snapshot magic (also ErrCorrupt).
	ErrNotSnapshot = errors.New("not a memctl snapshot")
	// ErrNewerVersion: the file's major version is newer than this reader.
	ErrNewerVersion = errors.New("snapshot written by a newer major format version")
	// ErrUnsupported: the file needs something this reader cannot provide
	// (an older major version, a required section kind it does not know, a
	// big-endian host).
	ErrUnsupported = errors.New("unsupported snapshot")
	// ErrInvalidState: the exporter's input broke the State contract
	// (unsorted nodes or edges, an edge to an undelivered node...).
	ErrInvalidState = errors.New("invalid snapshot input state")
	// ErrOutOfRange: an accessor was called with a node index, relation id
	// or trigram that the file does not have. It is the caller's mistake,
	// not damage.
	ErrOutOfRange = errors.New("index out of range")
)

// FormatError says where a file is damaged: the section (its name, or
// "header"/"directory"), the byte offset in the file (-1 when unknown) and
// what is wrong. errors.Is(err, ErrCorrupt) holds.
type FormatError struct {
	Section string
	Offset  int64
	Msg     string
	err     error // a more specific sentinel (ErrNotSnapshot), or nil
}

func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("corrupt snapshot: section %s at offset %d: %s", e.Section, e.Offset, e.Msg)
	}
	return fmt.Sprintf("corrupt snapshot: section %s: %s", e.Section, e.Msg)
}

func (e *FormatError) Is(target error) bool {
	return target == ErrCorrupt || (e.err != nil && target == e.err)
}

func formatErr(section string, off int64, format string, args ...any) error {
	return &FormatError{Section: section, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// VersionError: the file's version is outside [FormatOldest, FormatNewest]
// by major. errors.Is matches ErrNewerVersion or ErrUnsupported.
type VersionError struct {
	Version FormatVersion
}

func (e *VersionError) Error() string {
	if e.Version.Major() > FormatNewest.Major() {
		return fmt.Sprintf("snapshot format %s is newer than this reader (reads %d.x); upgrade memctl", e.Version, FormatNewest.Major())
	}
	return fmt.Sprintf("snapshot format %s is older than this reader supports (%s); export the store again with this memctl", e.Version, FormatOldest)
}

func (e *VersionError) Is(target error) bool {
	if e.Version.Major() > FormatNewest.Major() {
		return target == ErrNewerVersion
	}
	return target == ErrUnsupported
}
