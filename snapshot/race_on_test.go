//go:build race

package snapshot_test

// raceEnabled scales the long sequential damage suites down under the race
// detector (`make test`'s first pass); its non-race pass runs them at full
// size.
const raceEnabled = true
