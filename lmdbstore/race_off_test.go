//go:build !race

package lmdbstore

const raceEnabled = false
