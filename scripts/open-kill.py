#!/usr/bin/env python3
"""open-kill.py BIN ROUNDS SEED: W writers start at once on a store no process
holds; each but one is SIGKILLed at its own random moment 2-12 ms after its
start (where the Go runtime starts and LMDB opens). Every acknowledged write
must read back, and `check` must pass after every round."""
import json, os, random, subprocess, sys, tempfile, threading, time
bin_, rounds, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
W = 5
db = os.path.join(tempfile.mkdtemp(prefix="openkill-"), "db")
subprocess.run([bin_, "--db", db, "init"], check=True, capture_output=True)
rng = random.Random(seed)
acked, killed, refused = [], 0, None
def run(key, delay, out):
    p = subprocess.Popen([bin_, "--db", db, "--json", "batch"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = time.monotonic()
    p.stdin.write((json.dumps({"op": "put_node", "key": key, "type": "t"}) + "\n").encode()); p.stdin.close()
    if delay is not None:
        time.sleep(max(0, delay - (time.monotonic() - t0)))
        p.kill()
    err = p.stderr.read(); p.wait()
    out[key] = (p.returncode, delay is not None, err)
for r in range(rounds):
    out = {}
    ts = [threading.Thread(target=run, args=(f"k:{r}:{w}", None if w == 0 else 0.002 + rng.random() * 0.010, out)) for w in range(W)]
    for t in ts: t.start()
    for t in ts: t.join()
    for key, (rc, k, err) in out.items():
        killed += k
        if rc == 0: acked.append(key)
        elif not k: print("unkilled writer failed:", key, err.decode().strip()[:200])
    res = subprocess.run([bin_, "--db", db, "check"], capture_output=True)
    if res.returncode != 0:
        refused = f"round {r}: check exit {res.returncode}: {res.stderr.decode().strip()[:160]}"
        break
lost = [k for k in acked if subprocess.run([bin_, "--db", db, "get-node", k], capture_output=True).returncode != 0] if not refused else []
print(f"{os.path.basename(bin_)}: {r+1} rounds, {killed} writers killed, {len(acked)} acknowledged, {len(lost)} lost; {refused or 'store opens and checks after every round'}")
