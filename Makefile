# memctl — see README.md. Every target works on a fresh machine with Go and gcc.
GO        ?= go
BIN       := bin/memctl
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.6.1
FUZZTIME  ?= 30s
BENCHTIME ?= 1s

.PHONY: build lint test test-short demo bench bench-peers fuzz clean

build:
	$(GO) build -o $(BIN) ./cmd/memctl

lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# The reading side must build without cgo (SPEC.md, "Snapshot reader").
test: lint
	CGO_ENABLED=0 $(GO) build ./snapshot/ ./csr/
	MEMCTL_NOSYNC=1 $(GO) test -race -timeout 20m ./...

test-short:
	$(GO) test -short ./...

demo: build
	./scripts/demo.sh $(BIN)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./...

# Peers (SQLite, bbolt, raw LMDB) on 10K and 100K nodes; PEERS_FLAGS=-large adds 1M.
bench-peers:
	cd bench && $(GO) run ./cmd/peers $(PEERS_FLAGS)

fuzz:
	./scripts/fuzz.sh $(FUZZTIME)

clean:
	rm -rf bin
