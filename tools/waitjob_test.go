package tools_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/dbtest"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// hearingStore is a PostgreSQL store that also hands every wakeup its
// engine's listener heard to heard, after the engine handled it.
type hearingStore struct {
	*postgres.Store
	heard chan spi.WakeupHint
}

func (s hearingStore) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	return s.Store.ListenWakeups(ctx, func(h spi.WakeupHint) {
		fn(h)
		select {
		case s.heard <- h:
		default:
		}
	})
}

func openHearing(t *testing.T, dsn, schema string) hearingStore {
	t.Helper()
	s, err := postgres.Open(context.Background(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
	require.NoError(t, err)
	return hearingStore{Store: s, heard: make(chan spi.WakeupHint, 100)}
}

// WaitJob in one process returns when a node of another process finishes
// the job, woken by the notices on the store's own wakeup channel (no
// coordinator): the waiter's engine announces its watch, the finishing
// node publishes the end. The waiter's client runs on a fake clock that
// never moves, so its polling never reads the job again: only the notice
// can wake it.
func TestWaitJobWokenByAnotherProcess(t *testing.T) {
	dsn, schema := dbtest.Postgres(t)
	waiterStore, workerStore := openHearing(t, dsn, schema), openHearing(t, dsn, schema)
	release := make(chan struct{})
	double := ratchet.NewTask("wait.double", func(_ context.Context, n int) (int, error) {
		<-release
		return 2 * n, nil
	})
	start := func(s hearingStore, opts engine.Options, tasks ...ratchet.Definition) *engine.Engine {
		opts.Client.Logger = quiet
		eng, err := engine.New(s, opts, tasks...)
		require.NoError(t, err)
		require.NoError(t, eng.Start(t.Context()))
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = eng.Stop(ctx)
			_ = s.Close()
		})
		return eng
	}
	waiter := start(waiterStore, engine.Options{NodeID: "waiter", Client: ratchet.ClientOptions{Clock: clockwork.NewFakeClock()}})
	worker := start(workerStore, engine.Options{NodeID: "worker"}, double)

	// Both listeners connect asynchronously: publish until each heard one.
	ctx := t.Context()
	deadline := time.After(20 * time.Second)
	for waiterHeard, workerHeard := false, false; !waiterHeard || !workerHeard; {
		worker.NotifyNewWork(ratchet.PriorityLowest)
		waiterStore.Coordinator().NotifyNewWork(ctx, spi.PriorityLowest, "probe")
		select {
		case <-waiterStore.heard:
			waiterHeard = true
		case <-workerStore.heard:
			workerHeard = true
		case <-time.After(200 * time.Millisecond):
		case <-deadline:
			t.Fatal("the listeners did not connect")
		}
	}

	id, err := double.Submit(ctx, waiter.Client(), 21)
	require.NoError(t, err)
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := double.Wait(ctx, waiter.Client(), id)
		done <- result{n, err}
	}()
	for h := range workerStore.heard { // the worker's node now knows of the watch
		if len(h.Watching) > 0 {
			require.Equal(t, id, h.Watching[0])
			break
		}
	}
	close(release)
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, 42, r.n)
	case <-time.After(30 * time.Second):
		t.Fatal("WaitJob was not woken by the other process's end of the job")
	}
}
