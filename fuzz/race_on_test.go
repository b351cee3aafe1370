//go:build race

package fuzz

// raceEnabled scales the slowest suites down under the race detector
// (`make test`), which costs them 3-5x; the full sizes run without it.
const raceEnabled = true
