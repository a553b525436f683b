package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fixpoint/fixpoint/charmapi"
	"github.com/fixpoint/fixpoint/engine/hookrun"
	"github.com/fixpoint/fixpoint/model"
)

// ReconcileAction runs action name of a reconcile charm as spec says
// (hooks/reconcile, the unit's directory and universe), with
// $FIXPOINT_ACTION and $FIXPOINT_ACTION_PARAMS set, and reads the action
// output charmapi.MainWithActions prints. A process that fails, or prints
// no action output, is a failed action. The agent and `fixpoint charm
// test` run actions through it.
func ReconcileAction(ctx context.Context, spec hookrun.Spec, name string, params map[string]any) (*ActionOutcome, error) {
	enc, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	spec.Env = append(spec.Env[:len(spec.Env):len(spec.Env)], "FIXPOINT_ACTION="+name, "FIXPOINT_ACTION_PARAMS="+string(enc))
	out, err := hookrun.Run(ctx, spec)
	if err != nil {
		return &ActionOutcome{Failed: true, Message: model.Truncate(err.Error(), model.MaxErrorBytes)}, nil
	}
	var ao charmapi.ActionOutput
	dec := json.NewDecoder(bytes.NewReader(out.Stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ao); err != nil {
		return &ActionOutcome{Failed: true, Message: fmt.Sprintf("action %s printed no action output (charmapi.MainWithActions prints one): %v", name, err)}, nil
	}
	res := &ActionOutcome{Failed: ao.Failed, Message: ao.Message, Results: ao.Results, Writes: ao.Result}
	if res.Results == nil {
		res.Results = map[string]any{}
	}
	res.Results["return-code"] = 0.0
	for _, l := range ao.Log {
		res.Log = append(res.Log, ActionLogLine{Time: time.Unix(0, l.Time), Message: l.Message})
	}
	return res, nil
}
