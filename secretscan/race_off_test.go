//go:build !race

package secretscan

const raceEnabled = false
