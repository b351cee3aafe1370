# Generates corpus.jsonl: labelled true secrets and near misses for the
# secretscan tests. Run once (deterministic seed); the output is committed.
import json, random, string, base64, uuid, hashlib
r = random.Random(20261123)
A = string.ascii_letters + string.digits
U = string.ascii_uppercase + string.digits
def rs(n, alpha=A): return ''.join(r.choice(alpha) for _ in range(n))
pos = []
def P(kind, secret, ctx): pos.append({"label": "secret", "kind": kind, "secret": secret, "text": ctx.format(s=secret)})
for i in range(6):
    P("aws", "AKIA" + rs(16, string.ascii_uppercase + "234567"), ["export AWS_ACCESS_KEY_ID={s}", "aws_access_key_id = {s}", "the key {s} leaked in CI", "{{\"AccessKeyId\": \"{s}\"}}", "creds: {s}", "AWS key {s} rotated"][i])
    P("github", "ghp_" + rs(36), ["git remote set-url origin https://x:{s}@github.com/o/r", "GITHUB_TOKEN={s}", "token {s} expires soon", "Authorization: token {s}", "gh auth login --with-token <<< {s}", "use {s} for the API"][i])
    P("gitlab", "glpat-" + rs(20, A + "-_"), ["GITLAB_TOKEN={s}", "private token: {s}", "curl -H 'PRIVATE-TOKEN: {s}' https://gitlab.example/api", "ci token {s}", "{{\"token\":\"{s}\"}}", "gitlab pat {s}"][i])
    P("slack", "xoxb-" + rs(12, string.digits) + "-" + rs(13, string.digits) + "-" + rs(24, A), ["SLACK_BOT_TOKEN={s}", "slack token {s}", "bot: {s}", "{{\"slack\":\"{s}\"}}", "the bot uses {s}", "xoxb for alerts: {s}"][i])
    P("stripe", "sk_live_" + rs(24), ["STRIPE_SECRET_KEY={s}", "stripe key {s}", "Stripe.api_key = '{s}'", "{{\"stripe\":\"{s}\"}}", "charge with {s}", "live key {s}"][i])
    P("gcp", "AIza" + rs(35, A + "-_"), ["GOOGLE_API_KEY={s}", "maps key {s}", "key={s}&q=x", "{{\"apiKey\":\"{s}\"}}", "firebase apiKey: \"{s}\"", "gcp key {s}"][i])
    pk = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(rs(64, A + "+/") for _ in range(5)) + "\n-----END RSA PRIVATE KEY-----"
    P("private-key", pk, ["{s}", "deploy key:\n{s}", "id_rsa was\n{s}\n(do not share)", "{s}\n", "key file:\n{s}", "ssh key\n{s}"][i])
    hdr = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()).decode().rstrip("=")
    body = base64.urlsafe_b64encode(json.dumps({"sub": rs(8), "name": rs(10), "iat": 1700000000 + i}).encode()).decode().rstrip("=")
    P("jwt", hdr + "." + body + "." + rs(43, A + "-_"), ["Authorization: Bearer {s}", "jwt={s}", "session token {s}", "{{\"id_token\":\"{s}\"}}", "cookie: auth={s}", "the jwt {s} is valid for 1h"][i])
    P("azure", rs(3, A) + str(r.randint(0, 9)) + "Q~" + rs(34, A + "_~.-"), ["AZURE_CLIENT_SECRET=\"{s}\"", "client_secret: '{s}'", "azure secret = {s}", "{{\"clientSecret\":\"{s}\"}}", "secret value ({s})", "az ad sp credential: {s}"][i])
    P("connection-string", rs(14, A), ["postgres://app:{s}@db.internal:5432/prod", "DATABASE_URL=mysql://root:{s}@127.0.0.1/app", "mongodb+srv://admin:{s}@cluster0.mongodb.net/test", "redis://default:{s}@cache:6379", "amqp://guest:{s}@mq:5672/", "sqlserver://sa:{s}@localhost:1433"][i])
    P("env-assignment", rs(32, A), ["DB_PASSWORD={s}", "API_SECRET=\"{s}\"", "export SERVICE_TOKEN={s}", "client_secret={s}", "ENCRYPTION_KEY='{s}'", "auth_token: {s}"][i])
neg = []
def N(why, text): neg.append({"label": "near-miss", "why": why, "text": text})
for i in range(10):
    h = hashlib.sha1(rs(20).encode()).hexdigest()
    N("commit sha", ["fixed in commit %s", "git revert %s", "see %s for the change", "merge of %s", "cherry-pick %s", "HEAD is %s", "sha=%s", "commit: %s", "bisected to %s", "parent %s"][i] % h)
    N("uuid", ["request id %s", "node %s", "trace_id=%s", "{\"id\":\"%s\"}", "uuid %s", "run %s finished", "tenant: %s", "object %s deleted", "job-%s", "correlation %s"][i] % uuid.UUID(int=r.getrandbits(128)))
    N("content hash", ["sha256:%s", "checksum %s", "digest=%s", "hash: %s", "etag \"%s\"", "blob %s", "file hash %s", "integrity sha256-%s", "{\"hash\":\"%s\"}", "sum %s"][i] % hashlib.sha256(rs(30).encode()).hexdigest())
    N("base64 test data", ["fixture: %s", "data = \"%s\"", "echo %s | base64 -d", "payload %s", "{\"b64\":\"%s\"}", "input %s", "encoded %s", "expected %s", "testdata %s", "body: %s"][i] % base64.b64encode(("hello world %d, the quick brown fox" % i).encode()).decode())
    N("docs example key", ["AWS example: AKIAIOSFODNN7EXAMPLE", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "set GITHUB_TOKEN=<your-token>", "password: <your-password>", "postgres://user:${PGPASSWORD}@host/db", "api_key = YOUR_API_KEY_HERE", "token: xxxxxxxx", "mysql://user:****@localhost/db", "STRIPE_KEY=sk_test_...", "export API_KEY=changeme"][i])
    N("code identifier", ["func NewTokenizer(r io.Reader) *Tokenizer", "const keyPrefix = \"sym:\"", "if err := validateSecretName(name); err != nil {", "passwordHash := bcrypt.GenerateFromPassword(pw, cost)", "type APIKeyStore interface{ Get(id string) }", "tokenCount += len(tokens)", "secretscan.New() returns a Scanner", "authMiddleware(next http.Handler)", "credentialsFile := filepath.Join(home, \".aws\")", "keyOf(id NodeID) (string, error)"][i])
    N("path or url", ["file:lmdbstore/store.go", "https://github.com/etcd-io/bbolt/blob/main/tx.go", "sym:github.com/memctl/memctl/lmdbstore.Open", "/usr/lib/python3/dist-packages/requests/auth.py", "https://user@example.com/repo.git", "git@github.com:spf13/cobra.git", "s3://bucket/key/path/file.json", "redis://cache:6379/0", "postgres://app@db:5432/prod", "http://localhost:8080/health"][i])
    N("version or time", ["v1.9.4", "go1.26.8 linux/amd64", "2026-11-23T02:32:44.123456789Z", "sha: 4e65d8fd8c1f", "release-2026.11.0", "build 20261123.1", "node v20.20.2", "1.2.3-rc.1+build.5", "Mon Nov 23 02:32:44 UTC 2026", "rev 12345"][i])
    N("hex and numbers", ["color #ff00aa and #00ff00", "0xdeadbeef", "node id 172705c690852e37", "crc 4c2b7837", "ipv6 fe80::1ff:fe23:4567:890a", "mac 00:1a:2b:3c:4d:5e", "port 5432, pid 4242", "bytes 01 04 01100100 00000201", "phone +1-555-0100", "isbn 978-3-16-148410-0"][i])
    N("prose", ["The secret to good caching is invalidation.", "Rotate the key every 90 days (policy).", "Tokens are counted with a BPE tokenizer.", "Never commit passwords; use the vault.", "The API key lives in the secret manager, not here.", "Auth happens in the middleware.", "The credential helper is configured per host.", "A private key block starts with BEGIN.", "JWTs carry claims, signed by the issuer.", "Connection strings come from the environment."][i])
with open("corpus.jsonl", "w") as f:
    for x in pos + neg:
        f.write(json.dumps(x) + "\n")
print(len(pos), "secrets of", len({p["kind"] for p in pos}), "kinds;", len(neg), "near misses")
