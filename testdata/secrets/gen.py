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

H = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
B64 = A + "+/"
AGE = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
ctx6 = lambda *c: c
for i in range(6):
    P("aws-secret", rs(40, A + "/+"), ["AWS_SECRET_ACCESS_KEY={s}", "aws_secret_access_key = {s}", "export AWS_SECRET_ACCESS_KEY=\"{s}\"", "{{\"SecretAccessKey\": \"{s}\"}}", "aws_secret_key: {s}", "AWS_SECRET_KEY='{s}'"][i])
    P("github-fine-grained", "github_pat_" + rs(82, A + "_"), ["GH_TOKEN={s}", "fine-grained pat {s}", "token: {s}", "use {s} in CI", "{{\"gh\":\"{s}\"}}", "pat {s} expires"][i])
    P("github-oauth", "gho_" + rs(36), ["oauth {s}", "GITHUB_OAUTH={s}", "token {s}", "{{\"t\":\"{s}\"}}", "gh oauth: {s}", "got {s} back"][i])
    P("github-app", r.choice(["ghs_", "ghu_"]) + rs(36), ["app token {s}", "installation token: {s}", "{s}", "GH_APP_TOKEN={s}", "x-access-token:{s}", "bearer {s}"][i])
    P("openai", "sk-proj-" + rs(120, A + "_-"), ["OPENAI_API_KEY={s}", "openai key {s}", "client = OpenAI(api_key=\"{s}\")", "{{\"openai\":\"{s}\"}}", "key: {s}", "the project key {s} was rotated"][i])
    P("openai-legacy", "sk-" + rs(20) + "T3BlbkFJ" + rs(20), ["OPENAI_API_KEY={s}", "old key {s}", "openai.api_key = '{s}'", "{{\"k\":\"{s}\"}}", "sk: {s}", "legacy {s}"][i])
    P("anthropic", "sk-ant-api03-" + rs(93, A + "_-") + "AA", ["ANTHROPIC_API_KEY={s}", "claude key {s}", "Anthropic(api_key=\"{s}\")", "{{\"anthropic\":\"{s}\"}}", "x-api-key: {s}", "key {s} revoked"][i])
    P("azure-storage", rs(86, B64) + "==", ["DefaultEndpointsProtocol=https;AccountName=acct{n};AccountKey={s};EndpointSuffix=core.windows.net".replace("{n}", str(i)), "AccountKey={s}", "conn: AccountName=x;AccountKey={s}", "AZURE_STORAGE_CONNECTION_STRING=\"AccountName=a;AccountKey={s}\"", "storage AccountKey={s};", "AccountKey={s} (prod)"][i])
    P("redis-password", rs(16), ["redis://:{s}@cache.internal:6379/0", "REDIS_URL=redis://:{s}@redis:6379", "rediss://:{s}@host:6380", "url redis://:{s}@10.0.0.5", "{{\"redis\":\"redis://:{s}@r:6379\"}}", "cache at redis://:{s}@cache"][i])
    P("twilio-auth", rs(32, H), ["TWILIO_AUTH_TOKEN={s}", "twilio auth token: {s}", "twilio_token = \"{s}\"", "{{\"twilioAuthToken\":\"{s}\"}}", "TWILIO_AUTH_TOKEN='{s}'", "twilio secret={s}"][i])
    P("twilio-api-key", "SK" + rs(32, H), ["TWILIO_API_KEY={s}", "api key sid {s}", "{s}", "{{\"sid\":\"{s}\"}}", "twilio {s}", "key {s} active"][i])
    P("telegram", str(r.randint(100000000, 9999999999)) + ":AA" + rs(33, A + "_-"), ["TELEGRAM_BOT_TOKEN={s}", "bot token {s}", "https://api.telegram.org/bot{s}/getMe", "{{\"telegram\":\"{s}\"}}", "tg: {s}", "the bot {s} posts alerts"][i])
    P("sendgrid", "SG." + rs(22, A + "_-") + "." + rs(43, A + "_-"), ["SENDGRID_API_KEY={s}", "sendgrid {s}", "{{\"sg\":\"{s}\"}}", "mail key: {s}", "key={s}", "use {s}"][i])
    P("npm", "npm_" + rs(36), ["//registry.npmjs.org/:_authToken={s}", "NPM_TOKEN={s}", "npm token {s}", "{{\"npm\":\"{s}\"}}", "publish with {s}", "token: {s}"][i])
    P("pypi", "pypi-AgEIcHlwaS5vcmc" + rs(70, A + "_-"), ["TWINE_PASSWORD={s}", "password = {s}", "pypi token {s}", "{{\"pypi\":\"{s}\"}}", "upload with {s}", "token: {s}"][i])
    P("digitalocean", "dop_v1_" + rs(64, H), ["DIGITALOCEAN_TOKEN={s}", "do token {s}", "{{\"do\":\"{s}\"}}", "doctl auth init -t {s}", "token: {s}", "pat {s}"][i])
    P("huggingface", "hf_" + rs(34, string.ascii_letters), ["HF_TOKEN={s}", "huggingface-cli login --token {s}", "{{\"hf\":\"{s}\"}}", "token: {s}", "hub token {s}", "use {s}"][i])
    P("shopify", "shpat_" + rs(32, H), ["SHOPIFY_TOKEN={s}", "X-Shopify-Access-Token: {s}", "{{\"shop\":\"{s}\"}}", "admin token {s}", "token: {s}", "use {s}"][i])
    P("linear", "lin_api_" + rs(40), ["LINEAR_API_KEY={s}", "linear {s}", "{{\"linear\":\"{s}\"}}", "Authorization: {s}", "key: {s}", "use {s}"][i])
    P("doppler", "dp.pt." + rs(43), ["DOPPLER_TOKEN={s}", "doppler {s}", "{{\"doppler\":\"{s}\"}}", "token: {s}", "service token {s}", "use {s}"][i])
    P("age", "AGE-SECRET-KEY-1" + rs(58, AGE), ["{s}", "# created: 2026\n{s}", "age key {s}", "{{\"age\":\"{s}\"}}", "identity: {s}", "key file has {s}"][i])
    P("vault", "hvs." + rs(100, A + "_-"), ["VAULT_TOKEN={s}", "vault login {s}", "{{\"vault\":\"{s}\"}}", "token: {s}", "X-Vault-Token: {s}", "use {s}"][i])
    P("pulumi", "pul-" + rs(40, H), ["PULUMI_ACCESS_TOKEN={s}", "pulumi {s}", "{{\"pulumi\":\"{s}\"}}", "token: {s}", "login with {s}", "use {s}"][i])
    P("databricks", "dapi" + rs(32, H), ["DATABRICKS_TOKEN={s}", "databricks {s}", "{{\"dbx\":\"{s}\"}}", "token: {s}", "Bearer {s}", "use {s}"][i])
    P("postman", "PMAK-" + rs(24, H) + "-" + rs(34, H), ["POSTMAN_API_KEY={s}", "postman {s}", "{{\"pm\":\"{s}\"}}", "X-Api-Key: {s}", "key: {s}", "use {s}"][i])
    P("rubygems", "rubygems_" + rs(48, H), ["GEM_HOST_API_KEY={s}", ":rubygems_api_key: {s}", "{{\"gem\":\"{s}\"}}", "token: {s}", "push with {s}", "use {s}"][i])
    P("slack-webhook", "https://hooks.slack.com/services/T" + rs(8, U) + "/B" + rs(8, U) + "/" + rs(24), ["SLACK_WEBHOOK={s}", "post to {s}", "{{\"hook\":\"{s}\"}}", "webhook: {s}", "curl -X POST {s}", "alerts go to {s}"][i])
    P("stripe-restricted", "rk_live_" + rs(24), ["STRIPE_RESTRICTED_KEY={s}", "rk {s}", "{{\"rk\":\"{s}\"}}", "key: {s}", "use {s}", "restricted key {s}"][i])
    P("square", "sq0atp-" + rs(22, A + "_-"), ["SQUARE_ACCESS_TOKEN={s}", "square {s}", "{{\"sq\":\"{s}\"}}", "token: {s}", "Bearer {s}", "use {s}"][i])
    P("dynatrace", "dt0c01." + rs(24, U) + "." + rs(64, U), ["DT_API_TOKEN={s}", "dynatrace {s}", "{{\"dt\":\"{s}\"}}", "Api-Token {s}", "token: {s}", "use {s}"][i])
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

for i in range(10):
    N("placeholder connection string", ["postgres:password@localhost", "postgres://postgres:password@localhost:5432/db", "mysql://root:password@localhost/test", "redis://:password@localhost:6379", "amqp://guest:guest@localhost:5672/", "postgres://user:pass@localhost/db", "mongodb://admin:changeme@localhost", "postgresql://user:secret@localhost/app", "redis://:<password>@host:6379", "DATABASE_URL=postgres://USER:PASSWORD@HOST/DB"][i])
    N("git object or digest", ["tree %s" % hashlib.sha1(rs(9).encode()).hexdigest(), "sha512-%s" % base64.b64encode(hashlib.sha512(rs(9).encode()).digest()).decode(), "md5 %s" % hashlib.md5(rs(9).encode()).hexdigest(), "blake2 %s" % hashlib.blake2b(rs(9).encode()).hexdigest(), "docker image sha256:%s" % hashlib.sha256(rs(9).encode()).hexdigest(), "ipfs Qm%s" % rs(44, "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"), "nonce %s" % rs(16, H), "salt: %s" % rs(22, string.ascii_lowercase), "go.sum h1:%s=" % base64.b64encode(hashlib.sha256(rs(9).encode()).digest()).decode()[:43], "span %s" % rs(16, H)][i])
    N("doc placeholder", ["AKIAIOSFODNN7EXAMPLE", "sk-proj-YOUR_KEY_HERE", "ANTHROPIC_API_KEY=<your key>", "OPENAI_API_KEY=${OPENAI_API_KEY}", "TWILIO_AUTH_TOKEN=your_auth_token", "TELEGRAM_BOT_TOKEN=<token>", "AccountKey=<key>", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "export AWS_SECRET_ACCESS_KEY=...", "token: $TOKEN"][i])
    N("identifier", ["ThisIsAVeryLongIdentifierNameForTesting", "func (s *Store) AccountKeyOf(id string) string", "sk-learn is scikit-learn", "skip_test_when_offline", "SKIP_SLOW_TESTS=1", "parse_telegram_update(msg)", "redis_client.get(key)", "openai.ChatCompletion.create(model=m)", "anthropic_version = '2023-06-01'", "aws_region = us-east-1"][i])
    N("random prose", ["Retry with exponential backoff, capped at 30 s.", "The Go module cache lives in GOMODCACHE.", "Use AccountKey authentication only in tests.", "The redis:// scheme selects the client.", "Keys are sorted, then deduplicated.", "A token bucket limits the rate.", "See AKIA prefixes in the AWS docs.", "Passwords are hashed with argon2id.", "Bot tokens come from BotFather.", "OpenAI keys start with sk-."][i])
with open("corpus.jsonl", "w") as f:
    for x in pos + neg:
        f.write(json.dumps(x) + "\n")
print(len(pos), "secrets of", len({p["kind"] for p in pos}), "kinds;", len(neg), "near misses")
