package engine_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// slowRetryStore holds the answer to a write of a retry (after the write
// applied) until hold closes, and tells reclaimed of each claim of a job
// that already ran once.
type slowRetryStore struct {
	*memory.Store
	hold      chan struct{}
	reclaimed chan uuid.UUID
}

func (s *slowRetryStore) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	out, err := s.Store.CompleteJobs(ctx, cs)
	for _, c := range cs {
		if c.Outcome == spi.OutcomeRetry {
			<-s.hold
			break
		}
	}
	return out, err
}

func (s *slowRetryStore) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	jobs, err := s.Store.ClaimJobs(ctx, p)
	for _, j := range jobs {
		if j.Attempts > 0 {
			select {
			case s.reclaimed <- j.ID:
			default:
			}
		}
	}
	return jobs, err
}

// A subscriber sees one job's events in order: a retry due at once, whose
// write applied but whose answer (and so its retrying event) is late, is
// claimed again meanwhile, and the next run waits for that event before
// it starts (without the wait its started event came first).
func TestEventsOfOneJobInOrder(t *testing.T) {
	store := &slowRetryStore{Store: memory.New(), hold: make(chan struct{}), reclaimed: make(chan uuid.UUID, 1)}
	var runs atomic.Int32
	task := ratchet.NewVoidTask("flaky", func(context.Context, int) error {
		if runs.Add(1) == 1 {
			return errors.New("transient")
		}
		return nil
	}, ratchet.WithMaxRetries(3), ratchet.WithBackoff(ratchet.BackoffNone, 0))
	eng, err := engine.New(store, engine.Options{Concurrency: 2, PollInterval: 10 * time.Millisecond,
		Client: ratchet.ClientOptions{Logger: quiet}}, task)
	require.NoError(t, err)
	events, unsub := eng.SubscribeWith(engine.SubscribeOptions{Kinds: append([]engine.EventKind{engine.EventStarted}, engine.CompletionKinds...)})
	defer unsub()
	require.NoError(t, eng.Start(context.Background()))
	var release sync.Once
	open := func() { release.Do(func() { close(store.hold) }) }
	defer func() {
		open() // a failed check must not leave the completer blocked in Stop
		_ = eng.Stop(context.Background())
	}()

	id, err := task.Submit(context.Background(), eng.Client(), 1)
	require.NoError(t, err)
	next := func() engine.Event {
		select {
		case ev := <-events:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("no event within 10 s")
			return engine.Event{}
		}
	}
	require.Equal(t, engine.EventStarted, next().Kind)
	assert.Equal(t, id, <-store.reclaimed, "the retry, due at once, is claimed again while its write's answer is held")
	select {
	case ev := <-events:
		t.Fatalf("the second run's %s event came before the first run's outcome", ev.Kind)
	case <-time.After(300 * time.Millisecond): // the next run waits for the held event
	}
	open()
	var kinds []engine.EventKind
	for len(kinds) < 3 {
		ev := next()
		require.Equal(t, id, ev.JobID)
		kinds = append(kinds, ev.Kind)
	}
	assert.Equal(t, []engine.EventKind{engine.EventRetrying, engine.EventStarted, engine.EventSucceeded}, kinds)
}
