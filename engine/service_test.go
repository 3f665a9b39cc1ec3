package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	"github.com/ratchet-go/ratchet/internal/nodecore"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// recordingService reports each Run's start and end on its channels; its
// first fail runs return an error at once.
type recordingService struct {
	fail       int
	runs, ends chan string
}

func (s *recordingService) Name() string { return "recorder" }

func (s *recordingService) Run(ctx context.Context, h engine.ServiceHost) error {
	s.runs <- h.NodeID
	if s.fail > 0 {
		s.fail--
		return errors.New("planted failure")
	}
	<-ctx.Done()
	s.ends <- h.NodeID
	return nil
}

func newRecorder(fail int) *recordingService {
	return &recordingService{fail: fail, runs: make(chan string, 10), ends: make(chan string, 10)}
}

// advanceUntil moves the fake clock by step until ch yields, and returns
// what it yielded.
func advanceUntil(t *testing.T, clock *clockwork.FakeClock, step time.Duration, ch <-chan string) string {
	t.Helper()
	for range 200 {
		select {
		case v := <-ch:
			return v
		case <-time.After(5 * time.Millisecond):
			clock.Advance(step)
		}
	}
	t.Fatal("nothing happened while the clock moved on")
	return ""
}

func newServiceEngine(t *testing.T, s spi.Store, clock *clockwork.FakeClock, node string, svc engine.Service) *engine.Engine {
	t.Helper()
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: node, GatherTimeout: -1, Services: []engine.Service{svc}})
	require.NoError(t, err)
	return eng
}

// TestServiceRestartsAfterFailure checks that the supervisor runs a
// service from Start to Stop, runs it again on the clock's backoff after it
// fails, and ends it on Stop before the engine is stopped.
func TestServiceRestartsAfterFailure(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(t0)
	svc := newRecorder(1)
	eng := newServiceEngine(t, memory.New(), clock, "n1", svc)
	require.NoError(t, eng.Start(ctx))
	assert.Equal(t, "n1", <-svc.runs, "first run, which fails")
	assert.Equal(t, "n1", advanceUntil(t, clock, time.Second, svc.runs), "run again after the backoff")
	require.NoError(t, eng.Stop(ctx))
	select {
	case <-svc.ends:
	default:
		t.Fatal("Stop returned before the service ended")
	}
}

// TestSingletonRunsOnOneNode checks that a singleton service runs on the
// node that holds its lease only, and moves to another node when that one
// stops (and releases the lease).
func TestSingletonRunsOnOneNode(t *testing.T) {
	ctx := context.Background()
	clock := clockwork.NewFakeClockAt(t0)
	store := memory.New()
	svc := newRecorder(0)
	single := engine.Singleton("maintenance", 30*time.Second, svc)
	e1 := newServiceEngine(t, store, clock, "n1", single)
	e2 := newServiceEngine(t, store, clock, "n2", single)
	require.NoError(t, e1.Start(ctx))
	assert.Equal(t, "n1", <-svc.runs)
	require.NoError(t, e2.Start(ctx))
	held, err := store.TryAcquireLease(ctx, "maintenance", "outsider", time.Minute, clock.Now())
	require.NoError(t, err)
	assert.False(t, held, "n1 holds the lease")

	require.NoError(t, e1.Stop(ctx))
	assert.Equal(t, "n1", <-svc.ends)
	assert.Equal(t, "n2", advanceUntil(t, clock, 10*time.Second, svc.runs), "n2 takes over at its next renewal")
	require.NoError(t, e2.Stop(ctx))
	assert.Equal(t, "n2", <-svc.ends)
	assert.Empty(t, svc.runs, "no node ran it twice")
}

// TestSingletonNeedsLeases checks that an engine refuses a singleton
// service over a store that grants no leases, and a nil service.
func TestSingletonNeedsLeases(t *testing.T) {
	_, err := engine.New(noLeases{memory.New()}, engine.Options{
		Client:   ratchet.ClientOptions{Logger: quiet},
		Services: []engine.Service{engine.Singleton("l", time.Minute, newRecorder(0))},
	})
	require.ErrorIs(t, err, engine.ErrLeasesUnsupported)
	assert.Contains(t, err.Error(), `"recorder"`)
	_, err = engine.New(memory.New(), engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, Services: []engine.Service{nil}})
	require.ErrorIs(t, err, ratchet.ErrInvalidArgument)
}

// noLeases hides every capability of its store.
type noLeases struct{ spi.Store }

func (noLeases) Capabilities() spi.Capabilities { return spi.Capabilities{} }

// TestAdaptivePolling checks the default poll strategy's waits.
func TestAdaptivePolling(t *testing.T) {
	s := nodecore.AdaptivePolling(spi.PollConfig{MinInterval: 10 * time.Millisecond, MaxInterval: 70 * time.Millisecond})
	next := func(asked, claimed int, err error) time.Duration {
		return s.Next(spi.PollResult{Asked: asked, Claimed: claimed, Err: err})
	}
	assert.Equal(t, 10*time.Millisecond, next(5, 0, nil), "first empty claim: the shortest wait")
	assert.Equal(t, 20*time.Millisecond, next(5, 0, nil), "doubles")
	assert.Equal(t, 40*time.Millisecond, next(5, 0, nil))
	assert.Equal(t, 70*time.Millisecond, next(5, 0, nil), "capped")
	assert.Equal(t, time.Duration(0), next(5, 5, nil), "a full claim claims again at once")
	assert.Equal(t, 10*time.Millisecond, next(5, 0, nil), "and resets the wait")
	assert.Equal(t, 70*time.Millisecond, next(5, 0, errors.New("down")), "a failure backs off")
	assert.Equal(t, 70*time.Millisecond, next(5, 0, nil))
	assert.Equal(t, 10*time.Millisecond, next(5, 2, nil), "a partial claim waits the shortest")
	assert.Equal(t, 10*time.Millisecond, next(5, 2, nil), "each time")

	// Notified of new work, a partial claim waits as an empty one.
	s = nodecore.AdaptivePolling(spi.PollConfig{MinInterval: 10 * time.Millisecond, MaxInterval: 70 * time.Millisecond, Notified: true})
	assert.Equal(t, 10*time.Millisecond, next(5, 2, nil), "notified: a first partial claim waits the shortest")
	assert.Equal(t, 20*time.Millisecond, next(5, 2, nil), "notified: doubles")
	assert.Equal(t, 40*time.Millisecond, next(5, 0, nil))
	assert.Equal(t, 70*time.Millisecond, next(5, 3, nil), "notified: capped")
	assert.Equal(t, time.Duration(0), next(5, 5, nil), "a full claim claims again at once")
	assert.Equal(t, 10*time.Millisecond, next(5, 1, nil), "and resets the wait")

	// A rate limit that held jobs back has room sooner than the wait: the
	// claim comes then, no sooner than the shortest wait.
	room := func(d time.Duration) time.Duration { return s.Next(spi.PollResult{Asked: 5, Room: d}) }
	assert.Equal(t, 20*time.Millisecond, next(5, 0, nil))
	assert.Equal(t, 25*time.Millisecond, room(25*time.Millisecond), "room in 25 ms, before the 40 ms wait")
	assert.Equal(t, 10*time.Millisecond, room(time.Millisecond), "no sooner than the shortest wait")
	assert.Equal(t, 70*time.Millisecond, room(time.Hour), "a later room: the wait")
}

// recordingPolls is a poll strategy that records what it is told and
// always waits the shortest interval.
type recordingPolls struct {
	min     time.Duration
	results chan spi.PollResult
}

func (p *recordingPolls) Next(r spi.PollResult) time.Duration {
	select {
	case p.results <- r:
	default:
	}
	return p.min
}

// TestPollStrategyIsPluggable checks that the poller asks the configured
// strategy for its waits, telling it what each claim did.
func TestPollStrategyIsPluggable(t *testing.T) {
	polls := &recordingPolls{results: make(chan spi.PollResult, 1000)}
	var cfg spi.PollConfig
	task := ratchet.NewVoidTask("work", func(context.Context, args) error { return nil })
	r := start(t, engine.Options{MinPollInterval: 5 * time.Millisecond, PollInterval: 50 * time.Millisecond, GatherTimeout: -1,
		PollStrategy: func(c spi.PollConfig) spi.PollDelayStrategy { cfg, polls.min = c, c.MinInterval; return polls }}, task)
	assert.Equal(t, spi.PollConfig{MinInterval: 5 * time.Millisecond, MaxInterval: 50 * time.Millisecond, Notified: true}, cfg,
		"the memory store's wakeups reach the poller")
	id, err := task.Submit(context.Background(), r.client, args{})
	require.NoError(t, err)
	assert.Equal(t, engine.EventSucceeded, r.next(id).Kind)
	for res := range polls.results {
		if res.Claimed == 1 {
			assert.Positive(t, res.Asked)
			break
		}
	}

	// With a cluster coordinator, new work wakes the node wherever it is
	// submitted: the strategy is told so.
	_, err = engine.New(memory.New(), engine.Options{
		Client:       ratchet.ClientOptions{Logger: quiet},
		NodeID:       "n2",
		Coordinator:  engine.NewLocalCoordinator(),
		PollStrategy: func(c spi.PollConfig) spi.PollDelayStrategy { cfg = c; return polls },
	}, task)
	require.NoError(t, err)
	assert.True(t, cfg.Notified, "a node with a coordinator is notified of new work")
	// So is a node whose store carries wakeups between processes.
	_, err = engine.New(wakeupStore{memory.New()}, engine.Options{
		Client:       ratchet.ClientOptions{Logger: quiet},
		NodeID:       "n3",
		PollStrategy: func(c spi.PollConfig) spi.PollDelayStrategy { cfg = c; return polls },
	}, task)
	require.NoError(t, err)
	assert.True(t, cfg.Notified, "a node whose store delivers wakeups is notified of new work")
}

// wakeupStore is a memory store that carries wakeups between processes
// (and never delivers one).
type wakeupStore struct{ *memory.Store }

func (wakeupStore) ListenWakeups(ctx context.Context, _ func(spi.WakeupHint)) error {
	<-ctx.Done()
	return ctx.Err()
}
