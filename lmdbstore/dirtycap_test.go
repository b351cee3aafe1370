package lmdbstore

import (
	"os"
	"testing"
)

func TestDirtyPagesMax(t *testing.T) {
	for _, tc := range []struct {
		cflags string
		pages  int
		flag   string
	}{
		{"", 131071, ""},
		{"-O2 -g", 131071, ""},
		{"-O2 -g -DMDB_IDL_LOGN=13", 16383, "-DMDB_IDL_LOGN=13"},
		{"-DMDB_IDL_LOGN=12 -O2 -DMDB_IDL_LOGN=14", 32767, "-DMDB_IDL_LOGN=14"},
		{"-DMDB_IDL_LOGN=x", 131071, ""},
		{"-DMDB_IDL_LOGNX=3", 131071, ""},
	} {
		pages, flag := dirtyPagesMax(tc.cflags)
		if pages != tc.pages || flag != tc.flag {
			t.Errorf("dirtyPagesMax(%q) = %d, %q; want %d, %q", tc.cflags, pages, flag, tc.pages, tc.flag)
		}
	}
	// The test binary was built with the environment's CGO_CFLAGS (the
	// Makefile's under make test): the go command recorded them.
	want, _ := dirtyPagesMax(os.Getenv("CGO_CFLAGS"))
	if got, _ := DirtyPagesMax(); got != want {
		t.Errorf("DirtyPagesMax() = %d, want %d (CGO_CFLAGS %q)", got, want, os.Getenv("CGO_CFLAGS"))
	}
}
