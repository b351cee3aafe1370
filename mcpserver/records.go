package mcpserver

// The records memctl's own tools return are package records' (the CLI's
// --json records, SPEC.md §6.3, field for field), so a tool's answer and
// `memctl --json`'s answer on the same store compare equal. Weight and
// Score name its number types in this package's other results.

import "github.com/memctl/memctl/records"

type (
	// Weight is an edge or relation weight (records.Weight).
	Weight = records.Weight
	// Score is an engine score (records.Score).
	Score = records.Score
)
