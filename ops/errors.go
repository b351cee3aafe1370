package ops

import (
	"errors"
	"fmt"
)

// ErrInvalid marks a request an operation refuses: a bad field, an unknown
// op, a weight out of range. Every such error errors.Is ErrInvalid.
var ErrInvalid = errors.New("invalid argument")

// InvalidError is a refused request. Its message is the problem alone (no
// "invalid argument" prefix): each surface says it in its own words.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string        { return e.Msg }
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// invalidf is a refused request.
func invalidf(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// NoMatchError is a query that matched no node of the graph (the engine
// operations' "not found").
type NoMatchError struct{ Queries []string }

func (e *NoMatchError) Error() string {
	msg := "no node matches"
	for _, q := range e.Queries {
		msg += fmt.Sprintf(" %q", q)
	}
	return msg
}
