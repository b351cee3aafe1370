//go:build !race

package storesnap_test

const raceEnabled = false
