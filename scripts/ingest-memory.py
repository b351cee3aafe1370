#!/usr/bin/env python3
"""ingest-memory.py [--interval S] [--out CSV] BIN TREE: what `memctl
ingest go TREE`'s peak RSS is made of (BENCHMARKS.md "Ingest memory").

Runs `BIN --db D --no-sync ingest go TREE` into a new store (MEMCTL_NOSYNC=1,
GODEBUG=gctrace=1, MEMCTL_INGEST_DEBUG=1 for the phase lines) and samples
the process every --interval seconds (default 0.05):

- /proc/PID/status: VmRSS, RssAnon, RssFile, VmHWM;
- /proc/PID/smaps (every --smaps-every samples, default 10: reading it
  walks the page tables and, every 50 ms, slowed a 1 GB process several
  times over), resident memory by mapping: "go" is the Go heap arenas
  (anonymous mappings at hinted addresses, well below where mmap places
  everything else on linux/amd64), "data.mdb" the store's mapped data file,
  "anon" every other anonymous mapping ([heap] and glibc's malloc arenas:
  LMDB's dirty pages, which it mallocs until commit without WriteMap, and
  the Go runtime's off-heap metadata and stacks), "files" the other files
  (the binary, libc).

Go's own view comes from the gctrace lines (heap at the start of each
collection, live heap after it); stderr lines are stamped with the time
they arrived, so the phases (ExtractGo, write: ...) sit on the same clock.

Prints the peak of each series, the breakdown at the VmRSS peak, the
breakdown at each phase line, and (with --out) every sample as CSV.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

# The Go heap's arenas: the runtime maps them at hinted addresses (from
# 0xc000000000, or a random base since Go 1.26), below the area near the
# top of the address space where mmap places everything else (glibc's
# malloc arenas and large blocks, the runtime's off-heap metadata, the
# data file).
GO_LO, GO_HI = 1 << 32, 0x7E0000000000
GCLINE = re.compile(r"^gc (\d+) @([\d.]+)s .*? ([\d.]+)->([\d.]+)->([\d.]+) MB, ([\d.]+) MB goal")


def status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                out[k] = int(v.split()[0]) / 1024  # MB
    return out


def smaps(pid):
    """Resident MB by class: go, data.mdb, anon, files."""
    out = {"go": 0.0, "data.mdb": 0.0, "anon": 0.0, "files": 0.0}
    cls = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if not line[0].isupper():  # a mapping's header
                parts = line.split()
                start = int(parts[0].split("-")[0], 16)
                name = parts[5] if len(parts) > 5 else ""
                if name.endswith("data.mdb"):
                    cls = "data.mdb"
                elif name == "" or name.startswith("["):
                    cls = "go" if name == "" and GO_LO <= start < GO_HI else "anon"
                else:
                    cls = "files"
            elif line.startswith("Rss:"):
                out[cls] += int(line.split()[1]) / 1024
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--smaps-every", type=int, default=10,
                    help="read smaps every N samples (it walks the page tables and slows the process)")
    ap.add_argument("--out", help="write every sample as CSV here")
    ap.add_argument("bin")
    ap.add_argument("tree")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="ingest-memory.")
    db = os.path.join(work, "db")
    subprocess.run([a.bin, "--db", db, "init"], check=True, stdout=subprocess.DEVNULL)
    env = dict(os.environ, MEMCTL_NOSYNC="1", GODEBUG="gctrace=1", MEMCTL_INGEST_DEBUG="1")
    t0 = time.monotonic()
    p = subprocess.Popen([a.bin, "--db", db, "--no-sync", "ingest", "go", a.tree],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []  # (t, line)

    def read_err():
        for line in p.stderr:
            lines.append((time.monotonic() - t0, line.rstrip("\n")))

    outs = []

    def read_out():  # read as it comes: a full pipe would stall the process
        outs.append(p.stdout.read())

    th = threading.Thread(target=read_err)
    th.start()
    tho = threading.Thread(target=read_out)
    tho.start()
    samples = []  # (t, status, smaps): smaps repeats the last one read
    sm = None
    while p.poll() is None:
        t = time.monotonic() - t0
        try:
            st = status(p.pid)
            if "VmRSS" not in st:  # exited, not yet reaped
                break
            if sm is None or len(samples) % a.smaps_every == 0:
                fresh = smaps(p.pid)
                if sum(fresh.values()) == 0:  # exiting: its mappings are gone
                    break
                # smaps read while the mappings change can list some twice
                # (seen: 1.4 GB of arenas in a 0.9 GB process): keep the last
                # consistent reading.
                if sm is None or sum(fresh.values()) <= st["VmRSS"] * 1.1 + 8:
                    sm = fresh
            samples.append((t, st, sm))
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            break
        time.sleep(a.interval)
    p.wait()
    th.join()
    tho.join()
    out = "".join(outs)
    if p.returncode != 0:
        sys.stderr.write("".join(l + "\n" for _, l in lines[-5:]))
        sys.exit(f"ingest failed: exit {p.returncode}")
    summary = next((l for l in out.splitlines() if l.startswith("ingest go ")), "")
    print(f"{a.bin} {a.tree}: {summary}")
    print(f"samples {len(samples)}, wall {samples[-1][0]:.1f} s" if samples else "no samples")
    gcs = []
    for t, l in lines:
        m = GCLINE.search(l)
        if m:
            gcs.append((t, float(m.group(3)), float(m.group(5))))

    def gc_before(t):
        """The last collection at or before t: (heap at start, live after)."""
        last = (0.0, 0.0)
        for gt, start, live in gcs:
            if gt > t:
                break
            last = (start, live)
        return last

    def row(label, t, st, sm):
        hs, live = gc_before(t)
        print(f"{label:<34} t={t:6.1f}s VmRSS {st.get('VmRSS', 0):6.0f}  RssAnon {st.get('RssAnon', 0):6.0f}  "
              f"RssFile {st.get('RssFile', 0):5.0f} | go {sm['go']:6.0f}  anon {sm['anon']:5.0f}  "
              f"data.mdb {sm['data.mdb']:5.0f}  files {sm['files']:4.0f} | last gc: heap {hs:5.0f} live {live:5.0f} MB")

    print("peaks (MB): " + ", ".join(
        f"{k} {max(s[1].get(k, 0) for s in samples):.0f}" for k in ("VmRSS", "RssAnon", "RssFile", "VmHWM")) + ", " +
        ", ".join(f"{k} {max(s[2][k] for s in samples):.0f}" for k in ("go", "anon", "data.mdb")) +
        (f", gc heap {max(g[1] for g in gcs):.0f}, gc live {max(g[2] for g in gcs):.0f}" if gcs else ""))
    peak = max(samples, key=lambda s: s[1].get("VmRSS", 0))
    row("at the VmRSS peak", *peak)
    for t, l in lines:
        if GCLINE.search(l) or not l or l.startswith(("scvg", "# ")):
            continue
        near = min(samples, key=lambda s: abs(s[0] - t))
        row(l[:34], t, near[1], near[2])
    if a.out:
        with open(a.out, "w") as f:
            f.write("t,VmRSS,RssAnon,RssFile,VmHWM,go,anon,data.mdb,files,gc_heap,gc_live\n")
            for t, st, sm in samples:
                hs, live = gc_before(t)
                f.write(f"{t:.3f},{st.get('VmRSS', 0):.1f},{st.get('RssAnon', 0):.1f},{st.get('RssFile', 0):.1f},"
                        f"{st.get('VmHWM', 0):.1f},{sm['go']:.1f},{sm['anon']:.1f},{sm['data.mdb']:.1f},"
                        f"{sm['files']:.1f},{hs:.0f},{live:.0f}\n")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
