//go:build race

package mcpserver_test

// raceEnabled: TestMain builds the memctl binary with -race too, so the
// end-to-end tests check the server process for races.
const raceEnabled = true
