package schemas

import (
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/encoding/json"
)

// ValidateResult checks a hook's result (JSON) against #Result. The error,
// an *Error, names each offending field and says why.
//
// Results arrive on every hook run, so a Go check of the same rules
// (resultfast.go) answers first; CUE is evaluated only for a result the Go
// check rejects, to word the error as the schema does. Tests hold the two
// to the same verdicts.
func ValidateResult(data []byte) error {
	goErr := checkResultGo(data)
	if goErr == nil {
		return nil
	}
	if err := validateJSON(data, "#Result"); err != nil {
		return err
	}
	// CUE accepts what the Go check refuses only for JSON that CUE reads
	// more leniently, such as a key given twice with the same value;
	// the stricter verdict stands.
	return goErr
}

// ValidateUniverse checks a universe (JSON) against #Universe. The error,
// an *Error, names each offending field and says why.
func ValidateUniverse(data []byte) error {
	return validateJSON(data, "#Universe")
}

// validateJSON evaluates JSON against a definition with CUE. Problems are
// reported by field path only: line and column in a hook's output mean
// little to the charm author reading the unit's error.
func validateJSON(data []byte, defName string) error {
	ctx := cuecontext.New()
	expr, err := json.Extract(defName[1:]+".json", data)
	if err != nil {
		return &Error{Problems: []Problem{{Msg: "not valid JSON: " + err.Error()}}}
	}
	user := ctx.BuildExpr(expr)
	if err := user.Err(); err != nil {
		return stripPositions(loadError(err))
	}
	def, err := definition(ctx, defName)
	if err != nil {
		return err
	}
	_, err = validate(user, def, indexExpr(expr))
	return stripPositions(err)
}

func stripPositions(err error) error {
	if e, ok := err.(*Error); ok {
		for i := range e.Problems {
			e.Problems[i].File, e.Problems[i].Line, e.Problems[i].Col = "", 0, 0
		}
		e.Sort()
	}
	return err
}
