#!/usr/bin/env python3
"""Independent reader of a memctl snapshot (SPEC.md section 7), stdlib only.

Prints every node (index, key, type, missing flag, payload) and its out- and
in-edges. It exists to prove that SPEC.md alone is enough to read the file:
snapshot/python_test.go compares its output with the Go reader's.

Usage: read_snapshot.py FILE
"""
import mmap
import struct
import sys


def main(path):
    with open(path, "rb") as fh:
        b = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    if b[:8] != b"MEMCTLSN":
        sys.exit("not a memctl snapshot")
    major, minor, flags = struct.unpack_from("<HHI", b, 8)
    if major != 3:
        sys.exit("unsupported major version %d" % major)
    n, m, s = struct.unpack_from("<QQQ", b, 32)
    nrel, nsec, dir_off = struct.unpack_from("<IIQ", b, 56)
    secs = {}
    for i in range(nsec):
        kind, sflags, crc, off, ln = struct.unpack_from("<HHIQQ", b, dir_off + 24 * i)
        secs[kind] = (off, ln)

    def arr(kind, fmt):
        off, ln = secs[kind]
        size = struct.calcsize("<" + fmt)
        return struct.unpack_from("<%d%s" % (ln // size, fmt), b, off)

    str_off = arr(1, "Q")
    str_base = secs[2][0]

    def string(i):
        return b[str_base + str_off[i]:str_base + str_off[i + 1]].decode()

    rels = {}
    off = secs[3][0]
    for i in range(nrel):
        rid, name, weight, rflags = struct.unpack_from("<IIfI", b, off + 16 * i)
        rels[rid] = string(name)
    pay_off, pay_base = arr(6, "Q"), secs[21][0]
    fwd_off, fwd_tgt, fwd_rel, fwd_w = arr(7, "Q"), arr(8, "I"), arr(9, "I"), arr(10, "f")
    rev_off, rev_src, rev_rel, rev_w = arr(12, "Q"), arr(13, "I"), arr(14, "I"), arr(15, "f")
    node_base = secs[5][0]
    print("format %d.%d flags %d nodes %d edges %d" % (major, minor, flags, n, m))
    for i in range(n):
        typ, scope, run, task, nflags = struct.unpack_from("<IIIII", b, node_base + 72 * i)
        entry = b[pay_base + pay_off[i]:pay_base + pay_off[i + 1]]
        if len(entry) == 0:
            payload = "-"
        elif entry[0] == 0:
            payload = entry[1:].decode()
        else:
            payload = "(zstd %d bytes)" % (len(entry) - 1)
        print("node %d %s type=%s missing=%d payload=%s" % (i, string(i), string(typ), nflags & 1, payload))
        for p in range(fwd_off[i], fwd_off[i + 1]):
            print("  out %s %s %g" % (rels[fwd_rel[p]], string(fwd_tgt[p]), fwd_w[p]))
        for p in range(rev_off[i], rev_off[i + 1]):
            print("  in %s %s %g" % (rels[rev_rel[p]], string(rev_src[p]), rev_w[p]))


if __name__ == "__main__":
    main(sys.argv[1])
