#!/usr/bin/env python3
"""Writes items.jsonl and questions.jsonl of the search evaluation set.

facts.py holds 103 hand-written memory items, each with one question worded
differently from it (the labels). This script adds 420 distractor items an
agent would also have written in the same codebase — session notes, tasks,
file nodes with docs, kv notes — built from templates over the same
components and vocabulary, so the facts do not stand out by their words.
Deterministic (seeded); rerun it after editing facts.py.
"""
import json, random, os
from facts import FACTS

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261126)

components = ["http client", "retry policy", "postgres store", "migrations", "release pipeline", "job queue",
    "auth tokens", "session store", "rate limiter", "gateway middleware", "search endpoint", "redis cache",
    "invoice generator", "webhook handler", "websocket gateway", "email sender", "feature flags", "logging",
    "tracing", "metrics", "backups", "uploads", "payments", "notifications", "scheduler", "exporter",
    "web client", "api docs", "deploy charts", "CI pipeline", "load tests", "audit log", "tenant filter",
    "pagination", "image worker", "config loader", "secrets", "on-call runbook", "orders page", "accounts"]
verbs = ["refactor", "add tests for", "document", "simplify", "benchmark", "review", "clean up", "rename types in",
    "split", "instrument", "fix lint warnings in", "update dependencies of", "profile", "remove dead code from"]
outcomes = ["tests pass", "CI green", "one flaky test left", "needs review", "blocked on staging access",
    "merged", "reverted after review", "waiting for the design", "performance unchanged", "p95 improved slightly"]
files = ["handler", "service", "repository", "client", "worker", "middleware", "config", "types", "errors", "metrics"]
details = ["added a table-driven test", "moved constants to one file", "renamed the package-level variable",
    "replaced a map with a slice", "removed an unused parameter", "added doc comments", "split a long function",
    "fixed a typo in an error message", "added a context parameter", "inlined a helper", "updated the golden file",
    "bumped a minor dependency", "added a metric counter", "logged the request id", "used errors.Is instead of =="]

items = []
for store, typ, key, text, q in FACTS:
    if store == "kv":
        items.append({"kind": "kv", "scope": "orbit", "ns": typ, "key": key, "payload": {"rule": text}})
    elif typ == "observation":
        items.append({"kind": "node", "key": key, "type": typ, "payload": {"observations": [{"text": text}]}})
    else:
        items.append({"kind": "node", "key": key, "type": typ, "payload": {"text": text}})

slug = lambda s: s.replace(" ", "-").lower()
for i in range(150):
    c = rng.choice(components)
    items.append({"kind": "node", "key": "session:%03d" % i, "type": "observation", "payload": {"observations": [
        {"text": "%s the %s: %s; %s." % (rng.choice(verbs).capitalize(), c, rng.choice(details), rng.choice(outcomes))},
        {"text": "Touched internal/%s/%s.go." % (slug(c).replace("-", ""), rng.choice(files))}]}})
for i in range(100):
    c = rng.choice(components)
    items.append({"kind": "node", "key": "task:%03d" % i, "type": "task", "payload": {"text": "TODO: %s the %s (%s)." % (rng.choice(verbs), c, rng.choice(details)), "status": rng.choice(["open", "done", "in progress"])}})
seen = set()
while len(seen) < 110:
    c, f = rng.choice(components), rng.choice(files)
    path = "internal/%s/%s.go" % (slug(c).replace("-", ""), f)
    if path in seen:
        continue
    seen.add(path)
    items.append({"kind": "node", "key": "file:" + path, "type": "file", "payload": {"path": path, "doc": "The %s %s of the %s." % (c, f, rng.choice(["api", "worker", "service"]))}})
for i in range(60):
    c = rng.choice(components)
    items.append({"kind": "kv", "scope": "orbit", "ns": "notes", "key": "note-%03d" % i, "payload": {"note": "%s: %s, %s." % (c, rng.choice(details), rng.choice(outcomes))}})

with open(os.path.join(here, "items.jsonl"), "w") as out:
    for it in items:
        out.write(json.dumps(it, sort_keys=True) + "\n")
with open(os.path.join(here, "questions.jsonl"), "w") as out:
    for store, typ, key, text, q in FACTS:
        rel = "kv:orbit/%s/%s" % (typ, key) if store == "kv" else key
        out.write(json.dumps({"q": q, "relevant": [rel]}, sort_keys=True) + "\n")
print(len(items), "items,", len(FACTS), "questions")
