//go:build race

package storesnap_test

// raceEnabled scales the long sequential differentials down under the race
// detector (`make test`'s first pass); its non-race pass runs them at full
// size.
const raceEnabled = true
