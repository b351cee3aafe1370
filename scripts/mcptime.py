#!/usr/bin/env python3
"""Times MCP tool calls against a fresh `memctl mcp` over stdio (BENCHMARKS.md,
Context packs). Expects a store of the Go standard library (net/http).
usage: mcptime.py MEMCTL DB N  -> prints per-call wall ms:
  first_related (first analysis call of the fresh server), then N context
  calls (net/http/server.go), N context calls over distinct files of
  net/http, N get_out calls."""
import json, subprocess, sys, time, statistics
memctl, db, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = subprocess.Popen([memctl, "--db", db, "mcp", "--tools", "all", "--no-refresh"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
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
def stats(name, xs):
    xs = sorted(xs)
    print("%s n=%d p50=%.2f p99=%.2f min=%.2f max=%.2f" % (name, len(xs), xs[len(xs)//2], xs[min(len(xs)-1, int(len(xs)*0.99))], xs[0], xs[-1]))
stats("context_same_ms", [tool("context", {"targets": ["net/http/server.go"]})[0] for _ in range(n)])
_, r = tool("get_out", {"key": "dir:net/http", "rel": "contains"})
txt = json.dumps(r)
import re
files = sorted(set(re.findall(r'file:(net/http/[a-z0-9_]+\.go)', txt)))[:n]
stats("context_distinct_ms", [tool("context", {"targets": [f]})[0] for f in files])
stats("get_out_ms", [tool("get_out", {"key": "file:net/http/server.go"})[0] for _ in range(max(n, 200))])
p.stdin.close(); p.wait()
