// Package app imports a module that is not available, so the go command
// cannot load this module and ingest falls back to syntax-only extraction.
package app

import "example.invalid/missing"

// Run calls into the missing module and into helper.
func Run() string { return missing.Name() + helper() }

func helper() string { return "!" }
