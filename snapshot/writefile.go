package snapshot

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// WriteFile exports st to path. It writes under a temporary name in the
// same directory, fsyncs it, renames it over path and fsyncs the directory,
// so a crash leaves either the old file or the complete new one. Section
// arrays are filled in place through a shared writable mapping of the
// temporary file, so the writer's heap does not hold the edge arrays.
//
// The temporary file is flock'ed while it is written. A writer that was
// killed leaves its temporary file behind, unlocked (the kernel drops the
// lock with the process); the next WriteFile to the same path removes such
// leftovers once they are a minute old.
func WriteFile(path string, st State, opts WriterOptions) (WriteStats, error) {
	sg, stats, err := WriteFileStaged(path, st, opts)
	if err != nil {
		return WriteStats{}, err
	}
	return stats, sg.Commit()
}

// Staged is a file WriteFileStaged wrote, complete under its temporary
// name (Temp, which can be opened and mapped) and still locked, not yet
// synced or in place: Commit puts it in place as WriteFile does, Abort
// removes it. One of the two must be called.
type Staged struct {
	tmp  *os.File
	path string
}

// WriteFileStaged is WriteFile up to the sync: st written to a locked
// temporary file beside path.
func WriteFileStaged(path string, st State, opts WriterOptions) (*Staged, WriteStats, error) {
	dir := filepath.Dir(path)
	pattern := "." + filepath.Base(path) + ".tmp-*"
	removeStaleTemps(filepath.Join(dir, pattern), time.Now().Add(-staleTempAge))
	tmp, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, WriteStats{}, err
	}
	if err := unix.Flock(int(tmp.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return nil, WriteStats{}, fmt.Errorf("snapshot: lock %s: %w", tmp.Name(), err)
	}
	out := &fileOutput{f: tmp}
	stats, err := build(st, opts, out)
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		out.abort()
		_ = os.Remove(tmp.Name())
		return nil, WriteStats{}, err
	}
	return &Staged{tmp: tmp, path: path}, stats, nil
}

// Temp is the temporary file's name.
func (s *Staged) Temp() string { return s.tmp.Name() }

// Commit fsyncs the temporary file, renames it over the path and fsyncs
// the directory. On failure the temporary file is removed.
func (s *Staged) Commit() error {
	name := s.tmp.Name()
	err := s.tmp.Sync()
	if cerr := s.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, s.path)
	}
	if err != nil {
		_ = os.Remove(name)
		return err
	}
	return syncDir(filepath.Dir(s.path))
}

// Abort removes the temporary file.
func (s *Staged) Abort() {
	_ = s.tmp.Close()
	_ = os.Remove(s.tmp.Name())
}

// staleTempAge is how old an unlocked temporary file must be before it is
// taken for a killed writer's leftover (the age guards the instant between
// another writer's create and its flock).
const staleTempAge = time.Minute

// removeStaleTemps removes the files matching glob that were last modified
// before cutoff and that no live writer holds locked. It is best effort:
// errors only mean a leftover stays.
func removeStaleTemps(glob string, cutoff time.Time) {
	names, _ := filepath.Glob(glob)
	for _, name := range names {
		fi, err := os.Lstat(name)
		if err != nil || !fi.Mode().IsRegular() || fi.ModTime().After(cutoff) {
			continue
		}
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			_ = os.Remove(name)
		}
		_ = f.Close()
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// fileOutput writes the region through a MAP_SHARED writable mapping and
// appends with a buffered writer after it.
type fileOutput struct {
	f      *os.File
	mapped []byte
	w      *bufio.Writer
}

func (o *fileOutput) region(size uint64) ([]byte, error) {
	if err := o.f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	m, err := unix.Mmap(int(o.f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("snapshot: mmap output: %w", err)
	}
	o.mapped = m
	if _, err := o.f.Seek(int64(size), 0); err != nil {
		return nil, err
	}
	o.w = bufio.NewWriterSize(o.f, 1<<20)
	return m, nil
}

func (o *fileOutput) releaseRegion() error {
	if o.mapped == nil {
		return nil
	}
	m := o.mapped
	o.mapped = nil
	// fsync of the file later writes these dirty pages; msync first so an
	// error surfaces here rather than being lost at munmap.
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		_ = unix.Munmap(m)
		return err
	}
	return unix.Munmap(m)
}

func (o *fileOutput) append(p []byte) error {
	_, err := o.w.Write(p)
	return err
}

func (o *fileOutput) flush() error {
	if o.w == nil {
		return nil
	}
	return o.w.Flush()
}

func (o *fileOutput) writeAt(p []byte, off uint64) error {
	if err := o.flush(); err != nil {
		return err
	}
	_, err := o.f.WriteAt(p, int64(off))
	return err
}

func (o *fileOutput) truncate(size uint64) error {
	if err := o.flush(); err != nil {
		return err
	}
	if err := o.f.Truncate(int64(size)); err != nil {
		return err
	}
	_, err := o.f.Seek(int64(size), 0)
	return err
}

func (o *fileOutput) view() (*File, error) {
	if err := o.flush(); err != nil {
		return nil, err
	}
	return Open(o.f.Name())
}

func (o *fileOutput) abort() {
	if o.mapped != nil {
		_ = unix.Munmap(o.mapped)
		o.mapped = nil
	}
	_ = o.f.Close()
}
