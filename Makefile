# memctl — see README.md. Every target works on a fresh machine with Go and gcc.
GO        ?= go
BIN       := bin/memctl
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.6.1
FUZZTIME  ?= 30s
BENCHTIME ?= 1s
DAMAGE_TRIALS ?= 5000

# LMDB keeps a write transaction's dirty pages in memory up to
# 2^(MDB_IDL_LOGN+1) pages before it spills some to the file: 512 MiB by
# default, 64 MiB with 13. A first ingest's one transaction otherwise holds
# up to 512 MiB of pages only waiting to be written (SPEC §2, "Bulk loads";
# `memctl version` prints the limit a binary was built with).
CGO_CFLAGS ?= -O2 -g
override CGO_CFLAGS += -DMDB_IDL_LOGN=13
export CGO_CFLAGS

.PHONY: build lint test test-short demo eval bench bench-peers fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/memctl

lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd bench && $(GO) vet ./...
	./scripts/check-fullsize.sh '$(FULLSIZE)' '$(FULLSIZE_PKGS)'

# The reading side (snapshot, csr, engines) must build without cgo (SPEC.md, "Snapshot reader").
# Three passes: everything under the race detector; then, without it, the
# tests the race detector scales down or skips (FULLSIZE: the corruption,
# crash and page-damage suites, allocation and large-value tests, the MCP
# kill -9 test, the random differentials of the Go cache, exports, the
# secret corpus and the snapshot damage suites, the standard-library
# ingest), at full size; then the bench/ module's own tests. A test that
# checks raceEnabled or MEMCTL_INGEST_STD belongs in FULLSIZE_TESTS, its
# package in FULLSIZE_PKGS: lint checks both (scripts/check-fullsize.sh).
# GORACE=atexit_sleep_ms=0: a race-built process (the memctl binaries and
# test helpers the tests start) otherwise sleeps a second before it exits.
FULLSIZE_PKGS = ./lmdbstore/ ./fuzz/ ./ingest/ ./mcpserver/ ./freshness/ ./storesnap/ ./secretscan/ ./snapshot/
FULLSIZE_TESTS = TestLargeCompressedValues|TestCheckAdjMatchesWholeLists|TestCommitPassesEvict|TestScanOutAllocatesPerScanNotPerEntry|TestLoad|\
	TestBadInputDiskFull|TestBadInputHugePayloadRoundTrips|TestCorruptSnapshotFiles|TestCorruptStoreValues|TestCrashExport|TestPageDamage|FuzzPageDamage|\
	TestGoCacheDifferential|TestExtractStd|TestExtractSyntaxStreamsSameGraphLarge|TestNameSetMatchesMap|\
	TestKillMidBatch|TestRefreshGoCacheRandomEdits|\
	TestIncrementalExportIsFullExport|TestExportValidUntil|TestExportReadsOnceSameBytes|\
	TestCorpusInEveryContext|TestLazyMatchesScanner|TestKeywordPrefilterIsExact|\
	TestEverySingleByteFlipIsCaught|TestVerifyTrigramPostings
space := $(subst ,, )
FULLSIZE = $(subst $(space),,$(FULLSIZE_TESTS))
test: lint
	CGO_ENABLED=0 $(GO) build ./snapshot/ ./csr/ ./engines/
	GORACE=atexit_sleep_ms=0 MEMCTL_NOSYNC=1 $(GO) test -race -timeout 20m ./...
	MEMCTL_NOSYNC=1 MEMCTL_INGEST_STD=1 $(GO) test -count=1 -timeout 20m -run '^($(FULLSIZE))$$' $(FULLSIZE_PKGS)
	cd bench && MEMCTL_NOSYNC=1 $(GO) test -timeout 20m ./...

test-short:
	$(GO) test -short ./...

demo: build
	./scripts/demo.sh $(BIN)

# Answer quality on real history (BENCHMARKS.md "Answer quality"); a few minutes.
eval: build
	./scripts/eval.sh $(BIN)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# Peers (SQLite, bbolt, raw LMDB) on 10K and 100K nodes; PEERS_FLAGS=-large adds 1M.
bench-peers:
	cd bench && $(GO) run ./cmd/peers $(PEERS_FLAGS)

# Every fuzz target for FUZZTIME, then the page-damage suite at full size.
fuzz:
	./scripts/fuzz.sh $(FUZZTIME)
	MEMCTL_NOSYNC=1 MEMCTL_DAMAGE_TRIALS=$(DAMAGE_TRIALS) $(GO) test -count=1 -v -timeout 60m -run '^TestPageDamage$$' ./fuzz/

clean:
	rm -rf bin
