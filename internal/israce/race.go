//go:build race

// Package israce reports whether the binary was built with the race
// detector (-race): tests scale their slowest suites by it (make test runs
// them at full size in a pass without it).
package israce

// Enabled: built with -race.
const Enabled = true
