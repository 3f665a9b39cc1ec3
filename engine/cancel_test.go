package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// noWakeups is a memory store that carries no wakeups, as SQLite's: the
// engine learns of a cancel at its next heartbeat's claim check.
type noWakeups struct{ spi.Store }

func (s noWakeups) CheckClaims(ctx context.Context, refs []spi.ClaimRef) ([]bool, error) {
	return s.Store.(spi.ClaimChecker).CheckClaims(ctx, refs)
}

// heardStore is a memory store that tells, on heard, of each wakeup its
// listeners (the engine's) are given.
type heardStore struct {
	*memory.Store
	heard chan struct{}
}

func (s heardStore) ListenWakeups(ctx context.Context, fn func(spi.WakeupHint)) error {
	return s.Store.ListenWakeups(ctx, func(h spi.WakeupHint) {
		select {
		case s.heard <- struct{}{}:
		default:
		}
		fn(h)
	})
}

// awaitListener inserts jobs of a task nobody runs through c until the
// engine's wakeup listener on s hears one: from then on it hears every
// wakeup.
func awaitListener(t *testing.T, s heardStore, c *ratchet.Client) {
	t.Helper()
	probe := ratchet.NewVoidTask("probe.unrun", func(context.Context, args) error { return nil })
	deadline := time.After(10 * time.Second)
	for {
		_, err := probe.Submit(context.Background(), c, args{})
		require.NoError(t, err)
		select {
		case <-s.heard:
			return
		case <-time.After(10 * time.Millisecond): // not listening yet: insert again
		case <-deadline:
			t.Fatal("the engine's wakeup listener heard nothing within 10 s")
		}
	}
}

// TestCancelRunningJob cancels a RUNNING job whose body waits for its
// context: the job is CANCELLED at once, the body's context ends (at once
// through the engine's own client or the store's wakeups, at the next
// heartbeat without them, the fake clock standing still otherwise), the
// body's late completion is superseded, and its slot runs the next job.
func TestCancelRunningJob(t *testing.T) {
	for _, tc := range []struct {
		name      string
		wakeups   bool
		ownClient bool
	}{
		{"engine's client", true, true},
		{"another client, store wakeups", true, false},
		{"another client, heartbeat", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clockwork.NewFakeClockAt(t0)
			heard := heardStore{memory.New(), make(chan struct{}, 1)}
			var store spi.Store = heard
			if !tc.wakeups {
				store = noWakeups{heard.Store}
			}
			started, ended := make(chan struct{}, 2), make(chan struct{}, 2)
			task := ratchet.NewVoidTask("block", func(ctx context.Context, a args) error {
				started <- struct{}{}
				<-ctx.Done()
				ended <- struct{}{}
				return ctx.Err()
			})
			eng, err := engine.New(store, engine.Options{NodeID: "n1", Concurrency: 1,
				Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}}, task)
			require.NoError(t, err)
			events, unsub := eng.Subscribe(100)
			defer unsub()
			require.NoError(t, eng.Start(context.Background()))
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = eng.Stop(ctx)
			}()
			client := eng.Client()
			if !tc.ownClient {
				client, err = ratchet.NewClient(store, ratchet.ClientOptions{Clock: clock, Logger: quiet})
				require.NoError(t, err)
			}
			if tc.wakeups && !tc.ownClient {
				awaitListener(t, heard, client)
			}
			ctx := context.Background()
			id, err := task.Submit(ctx, client, args{})
			require.NoError(t, err)
			eng.NotifyNewWork(ratchet.PriorityNormal)
			waitFor(t, started, "the body to start")
			claimed, err := client.GetJob(ctx, id)
			require.NoError(t, err)

			require.NoError(t, client.CancelJob(ctx, id))
			j, err := client.GetJob(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, spi.StatusCancelled, j.Status, "CANCELLED at once")
			assert.Equal(t, claimed.ClaimSeq+1, j.ClaimSeq, "its claim ended")
			if !tc.wakeups {
				select {
				case <-ended:
					t.Fatal("the body ended before the heartbeat, without a wakeup")
				default:
				}
				clock.Advance(engine.DefaultHeartbeatInterval)
			}
			waitFor(t, ended, "the body's context to end")
			for ev := range events {
				if ev.JobID == id {
					assert.Equal(t, engine.EventSuperseded, ev.Kind, "the body's late completion is superseded")
					break
				}
			}
			j, err = client.GetJob(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, spi.StatusCancelled, j.Status, "the late completion changed nothing")
			assert.Zero(t, j.Attempts, "nor the attempts")

			// The slot (concurrency 1) is free again: the next job runs.
			next, err := task.Submit(ctx, client, args{})
			require.NoError(t, err)
			eng.NotifyNewWork(ratchet.PriorityNormal)
			waitFor(t, started, "the next job's body to start")
			require.NoError(t, client.CancelJob(ctx, next))
			if !tc.wakeups {
				clock.Advance(engine.DefaultHeartbeatInterval)
			}
			waitFor(t, ended, "the next body's context to end")
		})
	}
}

// waitFor waits up to 10 s for a value on ch.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
