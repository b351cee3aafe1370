#!/usr/bin/env python3
"""Times MCP tool calls against a fresh `memctl mcp` over stdio (BENCHMARKS.md,
Context packs). Expects a store of the Go standard library (net/http).
usage: mcptime.py [--files LIST] [--dump DIR] MEMCTL DB N
  prints per-call wall ms: first_related (first analysis call of the fresh
  server), first_context, then N context calls (net/http/server.go), N
  context calls over distinct files (those of net/http, or the first N
  lines of LIST: repository paths, one a line), max(N, 200) get_out calls
  (file:net/http/server.go). Each phase line gives p50/p95/p99 wall ms and
  the server's CPU ms per call (user + system from /proc, 10 ms ticks: use
  N >= 30). --dump DIR writes each distinct-file context answer's
  structured content to DIR (to compare two binaries' answers)."""
import argparse, json, os, re, subprocess, time
ap = argparse.ArgumentParser()
ap.add_argument("--files")
ap.add_argument("--dump")
ap.add_argument("memctl"); ap.add_argument("db"); ap.add_argument("n", type=int)
a = ap.parse_args()
p = subprocess.Popen([a.memctl, "--db", a.db, "mcp", "--tools", "all", "--no-refresh"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
tick = os.sysconf("SC_CLK_TCK")
def cpu_ms():
    f = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) * 1000.0 / tick  # utime, stime
nid = [0]
def call(method, params, notify=False):
    msg = {"jsonrpc": "2.0", "method": method, "params": params}
    if not notify:
        nid[0] += 1; msg["id"] = nid[0]
    p.stdin.write((json.dumps(msg) + "\n").encode()); p.stdin.flush()
    if notify: return None
    while True:
        line = p.stdout.readline()
        if not line: raise SystemExit("server closed")
        r = json.loads(line)
        if r.get("id") == nid[0]:
            if "error" in r or r.get("result", {}).get("isError"):
                raise SystemExit("error: " + line.decode()[:300])
            return r
def tool(name, args):
    t = time.perf_counter(); r = call("tools/call", {"name": name, "arguments": args}); return (time.perf_counter() - t) * 1000, r
call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}})
call("notifications/initialized", {}, notify=True)
first, _ = tool("related", {"queries": ["file:net/http/server.go"]})
print("first_related_ms %.1f" % first)
firstctx, _ = tool("context", {"targets": ["net/http/server.go"]})
print("first_context_ms %.1f" % firstctx)
def phase(name, calls):
    c0 = cpu_ms()
    xs = sorted(f()[0] for f in calls)
    cpu = (cpu_ms() - c0) / len(xs)
    q = lambda f: xs[min(len(xs) - 1, int(len(xs) * f))]
    print("%s n=%d p50=%.2f p95=%.2f p99=%.2f min=%.2f max=%.2f cpu_ms_per_call=%.2f" % (name, len(xs), q(0.5), q(0.95), q(0.99), xs[0], xs[-1], cpu))
phase("context_same_ms", [lambda: tool("context", {"targets": ["net/http/server.go"]})] * a.n)
if a.files:
    files = [l.strip() for l in open(a.files) if l.strip()][:a.n]
else:
    _, r = tool("get_out", {"key": "dir:net/http", "rel": "contains"})
    files = sorted(set(re.findall(r'file:(net/http/[a-z0-9_]+\.go)', json.dumps(r))))[:a.n]
def ctx(f):
    def run():
        ms, r = tool("context", {"targets": [f]})
        if a.dump:
            os.makedirs(a.dump, exist_ok=True)
            with open(os.path.join(a.dump, f.replace("/", "_") + ".json"), "w") as out:
                sc = dict(r["result"]["structuredContent"])
                sc.pop("markdown", None)
                out.write(re.sub(r'"(ts|file)": "[^"]*"', "", json.dumps(sc, sort_keys=True)))
        return ms, r
    return run
phase("context_distinct_ms", [ctx(f) for f in files])
phase("get_out_ms", [lambda: tool("get_out", {"key": "file:net/http/server.go"})] * max(a.n, 200))
p.stdin.close(); p.wait()
