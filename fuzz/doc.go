// Package fuzz holds memctl's robustness suites; it has no code of its own
// outside tests.
//
//   - Fuzz targets (go test -fuzz) for every decoder that reads bytes from
//     disk or from users: adjacency chunks, the value and key encodings of
//     every LMDB keyspace, snapshot files (Open, Verify, every accessor), and
//     `memctl batch` input. Each target asserts: no panic, no hang, no
//     allocation the input cannot justify, and either a typed error or a
//     result that re-encodes to the input bytes.
//   - FuzzDifferential runs operation sequences decoded from the fuzz input
//     against the store and a plain in-memory model and compares every read,
//     at every revision.
//   - The page-damage suite (TestPageDamage, FuzzPageDamage) damages LMDB's
//     own page structures below the values and requires every command to
//     answer as on the undamaged store or exit 3 (SPEC.md §6.5).
//   - The corruption, crash, concurrency, bad-input and load suites drive the
//     real memctl binary (built once per test binary) and re-executions of
//     the test binary itself (helper processes, see TestMain).
//
// Seed corpora are in testdata/fuzz/<Target>/ (Go's layout) and are run by
// plain `go test`. Environment knobs: MEMCTL_CRASH_ITERS (crash suite
// iterations, default 30), MEMCTL_CONC_SECONDS (concurrency suite duration),
// MEMCTL_LOAD=1 (the 1M-node / 10M-edge load test), MEMCTL_DAMAGE_TRIALS
// (page-damage trials; 120 under -race, 400 without, 5000 in `make fuzz`),
// MEMCTL_DAMAGE_VERBOSE=1 (log silent answers), MEMCTL_DAMAGE_KEEP=N (keep
// trial N's damaged store in /tmp/memctl-damage-N).
package fuzz
