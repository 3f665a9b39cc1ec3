package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

type progress struct {
	Step int `json:"step"`
}

// TestJobStateResumesAcrossRuns checks that a body keeps state across
// retries through its JobContext, with version compare-and-set, and that
// the state goes through the payload codecs.
func TestJobStateResumesAcrossRuns(t *testing.T) {
	ctx := context.Background()
	seen := make(chan string, 4)
	task := ratchet.NewVoidTask("resumable", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		var p progress
		version, found, err := jc.State(ctx, "progress", &p)
		if err != nil {
			return err
		}
		if !found {
			if err := jc.InitState(ctx, "progress", progress{Step: 1}); err != nil {
				return err
			}
			seen <- "started"
			return errors.New("fail after step 1")
		}
		if err := jc.UpdateState(ctx, "progress", progress{Step: 2}, version+5); !errors.Is(err, ratchet.ErrStateConflict) {
			seen <- fmt.Sprint("no conflict: ", err)
		}
		if err := jc.InitState(ctx, "progress", progress{}); !errors.Is(err, ratchet.ErrStateConflict) {
			seen <- "init twice did not conflict"
		}
		if err := jc.UpdateState(ctx, "progress", progress{Step: p.Step + 1}, version); err != nil {
			return err
		}
		seen <- fmt.Sprint("resumed at step ", p.Step)
		return nil
	}, ratchet.WithBackoff(ratchet.BackoffNone, 0))
	codec := &envelope{tag: "S:", key: 3}
	r := start(t, engine.Options{Codecs: []ratchet.PayloadCodec{codec}}, task)
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	require.Equal(t, engine.EventRetrying, r.next(id).Kind)
	r.advanceTo(r.clock.Now()) // the retry is written: wake the poller, whose wait is on the fake clock
	require.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	assert.Equal(t, "started", <-seen)
	assert.Equal(t, "resumed at step 1", <-seen)
	assert.Empty(t, seen)
	vs, ok, err := r.store.GetState(ctx, id, "progress")
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, int64(1), vs.Version)
	assert.Equal(t, "S:", string(vs.JSON[:2]), "state is stored through the codecs")
}

// TestJobStateWriteOfSupersededRun checks that a run whose job was
// recovered away from it gets ErrSuperseded from a state write, and that
// nothing is written.
func TestJobStateWriteOfSupersededRun(t *testing.T) {
	ctx := context.Background()
	var store *memory.Store
	got := make(chan error, 1)
	task := ratchet.NewVoidTask("stale", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		// Another node recovers the job meanwhile (this node looked dead).
		_, err := store.RecoverOrphans(ctx, spi.RecoverParams{Now: t0.Add(time.Hour), Nodes: []string{"n1"}, MaxCrashRedeliveries: 3})
		if err != nil {
			return err
		}
		got <- jc.InitState(ctx, "ns", progress{Step: 1})
		return nil
	})
	r := start(t, engine.Options{}, task)
	store = r.store
	id, err := task.Submit(ctx, r.client, 1)
	require.NoError(t, err)
	err = <-got
	require.ErrorIs(t, err, ratchet.ErrSuperseded)
	assert.Contains(t, err.Error(), id.String())
	_, ok, err := r.store.GetState(ctx, id, "ns")
	require.NoError(t, err)
	assert.False(t, ok, "the superseded write wrote nothing")
}

// TestJobStateUnsupported checks the error of a body whose store keeps no
// job state.
func TestJobStateUnsupported(t *testing.T) {
	got := make(chan error, 1)
	task := ratchet.NewVoidTask("t", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		_, _, err := jc.State(ctx, "ns", new(progress))
		got <- err
		return nil
	})
	eng, err := engine.New(noLeases{memory.New()}, engine.Options{Logger: quiet}, task)
	require.NoError(t, err)
	require.NoError(t, eng.Start(context.Background()))
	defer eng.Stop(context.Background())
	_, err = task.Submit(context.Background(), eng.Client(), 1)
	require.NoError(t, err)
	require.ErrorIs(t, <-got, ratchet.ErrUnsupported)
}
