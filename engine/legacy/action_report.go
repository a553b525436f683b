package legacy

import (
	"encoding/json"
	"fmt"

	"github.com/fixpoint/fixpoint/engine/wire"
	"github.com/fixpoint/fixpoint/model"
)

// ActionReport is what operation id on unit came to, as an agent reports
// it: out, or err for an operation that could not run at all.
func ActionReport(id int, unit string, out *ActionOutcome, err error) *wire.ActionReport {
	rep := &wire.ActionReport{ID: id, Unit: unit}
	if err != nil {
		rep.Failed, rep.Message = true, model.Truncate(err.Error(), model.MaxErrorBytes)
		return rep
	}
	rep.Failed, rep.Message, rep.Results = out.Failed, out.Message, out.Results
	for _, l := range out.Log {
		rep.Log = append(rep.Log, wire.ActionLog{Time: l.Time.UnixNano(), Message: l.Message})
	}
	if out.Writes != nil {
		if rep.Output, err = json.Marshal(out.Writes); err != nil {
			rep.Failed, rep.Message = true, fmt.Sprintf("encode what the operation wrote: %v", err)
		}
	}
	return rep
}
