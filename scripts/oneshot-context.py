#!/usr/bin/env python3
"""Times one-shot `memctl context` after a one-file edit (issue 25: a
one-file edit is reflected in the next answer with <= 100 ms of extra
latency; BENCHMARKS.md, "One-shot context after an edit").
usage: oneshot-context.py [--files 1000] [--rounds 25] [--dir D] [--mcp] MEMCTL [MEMCTL...]
  Writes a git repository of --files Python files (p00/m0000.py ...: each
  imports the next module and calls its function; the tree of the
  freshness benchmarks), then one store per binary (`init`, `ingest code`).
  Each round, for each binary in turn: p10/m0200.py is rewritten (content
  unique to the round and the binary), `context p10/m0200.py` is timed (the
  refresh, the engine snapshot rebuild and the answer), then timed again
  with nothing changed. Each binary's store follows the same tree, so every
  edited answer takes the same one-file path. Prints per binary: the
  edited call's wall p50 [q1, q3] and CPU p50 (user + system of the process
  and its children), the unchanged call's wall p50, and extra = edited p50
  - unchanged p50. Two warm-up rounds are not counted (the first refresh
  by a new binary writes its refresh cache file).
  --mcp: the same through one `memctl mcp` server per binary (its refresh
  cache in memory, its engine snapshot rebuilt after the edit): the
  `context` tool timed after each edit and again unchanged; CPU is the
  server's (user + system from /proc, 10 ms ticks)."""
import json
import argparse, os, resource, statistics, subprocess, tempfile, time

ap = argparse.ArgumentParser()
ap.add_argument("--files", type=int, default=1000)
ap.add_argument("--rounds", type=int, default=25)
ap.add_argument("--dir")
ap.add_argument("--mcp", action="store_true")
ap.add_argument("memctl", nargs="+")
a = ap.parse_args()
root = a.dir or tempfile.mkdtemp(prefix="memctl-oneshot-")
tree = os.path.join(root, "tree")
n = a.files
for i in range(n):
    p = os.path.join(tree, "p%02d/m%04d.py" % (i // 20, i))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    j = (i + 1) % n
    with open(p, "w") as f:
        f.write("from p%02d.m%04d import f%d\n\n\ndef f%d(x):\n    return f%d(x) + %d\n\n\nclass C%d:\n"
                "    def m(self):\n        return f%d(1)\n" % (j // 20, j, j, i, j, i, i, i))
git = ["git", "-c", "user.email=bench@memctl", "-c", "user.name=bench"]
subprocess.run(git + ["init", "-q"], cwd=tree, check=True)
subprocess.run(git + ["add", "-A"], cwd=tree, check=True)
subprocess.run(git + ["commit", "-qm", "tree"], cwd=tree, check=True)
dbs = []
for k, exe in enumerate(a.memctl):
    db = os.path.join(root, "db%d" % k)
    subprocess.run([exe, "init", "--db", db], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([exe, "ingest", "code", "--db", db, "."], cwd=tree, check=True, stdout=subprocess.DEVNULL)
    dbs.append(db)
target = "p%02d/m%04d.py" % (min(200, n - 1) // 20, min(200, n - 1))


class Server:
    """One `memctl mcp` over stdio, answering tools/call."""
    def __init__(self, exe, db):
        self.p = subprocess.Popen([exe, "--db", db, "mcp"], cwd=tree, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.id = 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "oneshot", "version": "0"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}\n')
        self.p.stdin.flush()

    def call(self, method, params):
        self.id += 1
        msg = {"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("server closed")
            r = json.loads(line)
            if r.get("id") == self.id:
                if "error" in r or r.get("result", {}).get("isError"):
                    raise SystemExit("error: " + line.decode()[:300])
                return r

    def cpu_ms(self):
        f = open("/proc/%d/stat" % self.p.pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) * 1000.0 / os.sysconf("SC_CLK_TCK")


servers = [Server(exe, dbs[k]) for k, exe in enumerate(a.memctl)] if a.mcp else None


def timed(exe, db):
    if servers is not None:
        srv = servers[a.memctl.index(exe)]
        c0 = srv.cpu_ms()
        t0 = time.perf_counter()
        srv.call("tools/call", {"name": "context", "arguments": {"targets": [target]}})
        return (time.perf_counter() - t0) * 1000, srv.cpu_ms() - c0
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([exe, "context", "--db", db, target], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = (time.perf_counter() - t0) * 1000
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) * 1000


res = [([], [], []) for _ in a.memctl]
for rnd in range(a.rounds + 2):
    for k, exe in enumerate(a.memctl):
        with open(os.path.join(tree, target), "w") as f:
            f.write("def g%d_%d():\n    return %d\n" % (rnd, k, rnd))
        w, c = timed(exe, dbs[k])
        u, _ = timed(exe, dbs[k])
        if rnd >= 2:
            res[k][0].append(w)
            res[k][1].append(c)
            res[k][2].append(u)
for k, exe in enumerate(a.memctl):
    e, c, u = res[k]
    q = statistics.quantiles(e, n=4)
    print("%s: edited wall p50 %.0f ms [q1 %.0f, q3 %.0f], cpu p50 %.0f ms; unchanged wall p50 %.0f ms; extra %.0f ms"
          % (exe, statistics.median(e), q[0], q[2], statistics.median(c), statistics.median(u),
             statistics.median(e) - statistics.median(u)))
if servers is not None:
    for srv in servers:
        srv.p.stdin.close()
        srv.p.wait()
print("load average", " ".join(open("/proc/loadavg").read().split()[:3]))
