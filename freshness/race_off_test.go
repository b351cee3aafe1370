//go:build !race

package freshness

const raceEnabled = false
