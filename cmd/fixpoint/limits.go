package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/spf13/pflag"

	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
	"github.com/fixpoint/fixpoint/schemas"
)

// limitFlags holds the --max-* flags `server`, `up` and `vet` share, one
// per model.LimitFields.
type limitFlags struct {
	set   *pflag.FlagSet
	value model.Limits
}

// flags registers the limit flags on f, defaulting to model.DefaultLimits.
func (l *limitFlags) flags(f *pflag.FlagSet) {
	l.set, l.value = f, model.DefaultLimits
	for _, lf := range model.LimitFields {
		f.IntVar(lf.Of(&l.value), lf.Flag, *lf.Of(&l.value), lf.Help)
	}
}

// given names the limit flags set on the command line.
func (l *limitFlags) given() []string {
	var out []string
	for _, lf := range model.LimitFields {
		if l.set != nil && l.set.Changed(lf.Flag) {
			out = append(out, lf.Flag)
		}
	}
	return out
}

// check refuses limits out of range before anything starts.
func (l *limitFlags) check() error {
	if err := l.value.Validate(); err != nil {
		return exitf(exitFailed, "%v", err)
	}
	return nil
}

// over returns the limits in force with the flags given replaced.
func (l *limitFlags) over(inForce model.Limits) model.Limits {
	for _, lf := range model.LimitFields {
		if l.set != nil && l.set.Changed(lf.Flag) {
			*lf.Of(&inForce) = *lf.Of(&l.value)
		}
	}
	return inForce
}

// recordLimits makes the node's limits the cluster's: on a state that
// records none, the bootstrap node records all of its own (flags and
// defaults), so that the state says which limits its entries were judged
// by; afterwards a node records only the limits given on its command
// line, over those in force. The limits are replicated state, so a node's
// flags change what every replica refuses from the next entry on, never
// what an entry already in the log was judged by.
func recordLimits(ctx context.Context, store *raftstore.Store, l *limitFlags, bootstrap bool, log hclog.Logger) error {
	var have *model.Limits
	var inForce model.Limits
	_ = store.View(func(st *model.State) error {
		have, inForce = st.Limits, st.LimitsInForce()
		return nil
	})
	want := l.over(inForce)
	if have == nil && bootstrap {
		want = l.value
	}
	if want.Environments != inForce.Environments && store.ClusterLevel().Level < model.LevelRecorded {
		// The leader's gate refuses the field below its level. A new
		// cluster raises its level as soon as it leads: wait for it.
		// Elsewhere (servers not all upgraded yet) the rest is recorded
		// and --max-environments waits for a restart after the upgrade.
		if have == nil && bootstrap {
			return fmt.Errorf("--max-environments waits for the new cluster's feature level %d", model.LevelRecorded)
		}
		log.Warn("--max-environments is not recorded: the cluster's feature level is below 2 (run fixpoint cluster upgrade once every server runs this build, then restart this one with the flag)")
		want.Environments = inForce.Environments
	}
	switch {
	case have == nil && bootstrap:
	case have == nil && len(l.given()) == 0, have != nil && want == *have:
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := store.Apply(ctx, &model.Command{Op: model.OpLimits, Limits: &want}); err != nil {
		return fmt.Errorf("record limits %s: %w", want, err)
	}
	log.Info("limits in force", "limits", want.String())
	return nil
}

// refusal is the exit for a control plane's answer err to what: the
// model's problems in it at their file:line:col in env, one a line, as
// vet reports its own; any other error after what.
func refusal(what string, env *schemas.Env, err error) error {
	var ps model.Problems
	if !errors.As(err, &ps) {
		return exitf(exitFailed, "%s: %v", what, err)
	}
	se := &schemas.Error{}
	for _, p := range ps {
		se.Problems = append(se.Problems, env.Problem(p))
	}
	se.Sort()
	return exitf(exitFailed, "%v", se)
}
