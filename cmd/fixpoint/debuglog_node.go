package main

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/fixpoint/fixpoint/engine/agent"
	"github.com/fixpoint/fixpoint/model"
	"github.com/fixpoint/fixpoint/raftstore"
)

// shipNodeLog sends the node's own warnings and errors to the
// debug log until ctx ends, with the agents' shipper: bounded buffer, one
// batch at a time, drops counted. Lines logged while no leader is known
// wait in the buffer and go once one is. A logger that is not an
// intercept logger ships nothing.
func shipNodeLog(ctx context.Context, store *raftstore.Store, log hclog.Logger) {
	il, ok := log.(hclog.InterceptLogger)
	if !ok {
		return
	}
	ship := agent.NewShipper(func(ctx context.Context, lines []model.LogLine) error {
		_, err := store.Apply(ctx, &model.Command{Op: model.OpLogs, Time: time.Now().UnixNano(), Logs: &model.LogBatch{Lines: lines}})
		if errors.Is(err, raftstore.ErrRefused) {
			// Sending it again changes nothing: the lines are lost.
			return nil
		}
		return err
	}, agent.ShipperOptions{})
	sink := ship.Sink("", store.NodeID(), hclog.Warn)
	il.RegisterSink(sink)
	go func() {
		defer il.DeregisterSink(sink)
		ship.Run(ctx)
	}()
}
