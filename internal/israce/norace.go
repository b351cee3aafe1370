//go:build !race

package israce

// Enabled: built with -race.
const Enabled = false
