package engine

import "fmt"

// ResultError is a hook result that breaks the contract; its message names
// the field and why. Nothing of such a result is applied.
type ResultError struct{ Msg string }

func (e *ResultError) Error() string { return "bad result: " + e.Msg }

// badResult is the ResultError of every check of a result, its secret
// changes' (result_secrets.go) included.
func badResult(format string, args ...any) error {
	return &ResultError{Msg: fmt.Sprintf(format, args...)}
}
