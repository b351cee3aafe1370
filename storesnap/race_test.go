package storesnap_test

import "github.com/memctl/memctl/internal/israce"

// raceEnabled: the tests run under the race detector, which scales the
// slowest suites down or skips them (make test's non-race pass runs them
// at full size: the Makefile's FULLSIZE_TESTS).
const raceEnabled = israce.Enabled
