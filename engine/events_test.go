package engine_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// eventLog reads a subscription and keeps what it read.
type eventLog struct {
	t      *testing.T
	events <-chan engine.Event
	seen   []engine.Event
}

// until reads events until one of kind (and of job id, unless uuid.Nil)
// arrives, and returns it.
func (l *eventLog) until(kind engine.EventKind, id uuid.UUID) engine.Event {
	l.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-l.events:
			require.True(l.t, ok, "the subscription ended before a %s event", kind)
			l.seen = append(l.seen, ev)
			if ev.Kind == kind && (id == uuid.Nil || ev.JobID == id) {
				return ev
			}
		case <-timeout:
			l.t.Fatalf("no %s event of job %s within 10s; read %+v", kind, id, l.seen)
		}
	}
}

// once returns the event of kind of job id, already read or the next
// one: for an event that may come before the one the test waited for.
func (l *eventLog) once(kind engine.EventKind, id uuid.UUID) engine.Event {
	l.t.Helper()
	for _, ev := range l.seen {
		if ev.Kind == kind && ev.JobID == id {
			return ev
		}
	}
	return l.until(kind, id)
}

// kinds are the kinds read of job id (of every job for uuid.Nil), in order.
func (l *eventLog) kinds(id uuid.UUID) []engine.EventKind {
	var out []engine.EventKind
	for _, ev := range l.seen {
		if id == uuid.Nil || ev.JobID == id {
			out = append(out, ev.Kind)
		}
	}
	return out
}

// A subscriber of every kind hears a job's whole life on the node: its
// submission, each run's start and outcome, a recovery at start, a
// release at a timed-out drain, a signal that resolves its wait, and the
// batch and schedule events of the node's maintenance services.
func TestEventsOfAJobsLife(t *testing.T) {
	ctx := context.Background()
	s := memory.New()
	clock := clockwork.NewFakeClockAt(t0)
	ok := ratchet.NewVoidTask("ok", func(context.Context, int) error { return nil })
	wait := ratchet.NewVoidTask("wait", func(ctx context.Context, _ int) error {
		jc, _ := ratchet.JobFromContext(ctx)
		_, err := jc.Signal(ctx)
		return err
	})
	slowStarted := make(chan struct{}, 1)
	slow := ratchet.NewVoidTask("slow", func(ctx context.Context, _ int) error {
		slowStarted <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	// A previous run of node n1 claimed a job and died.
	c, err := ratchet.NewClient(s, ratchet.ClientOptions{Clock: clock})
	require.NoError(t, err)
	orphan, err := ok.Submit(ctx, c, 0)
	require.NoError(t, err)
	require.NoError(t, s.Heartbeat(ctx, "n1", t0))
	_, err = s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 1, Now: t0})
	require.NoError(t, err)

	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Clock: clock, Logger: quiet}, NodeID: "n1",
		BatchFinishInterval: time.Second, Schedules: []ratchet.Recurring{ok.Recurring("tick", "*/10 * * * * ?", 7)}},
		ok, wait, slow)
	require.NoError(t, err)
	events, unsub := eng.SubscribeWith(engine.SubscribeOptions{Block: true})
	defer unsub()
	l := &eventLog{t: t, events: events}
	require.NoError(t, eng.Start(ctx))
	client := eng.Client()

	rec := l.until(engine.EventRecovered, orphan)
	assert.Equal(t, "n1", rec.Node, "the node it had run on")
	assert.Equal(t, string(ratchet.StatusPending), rec.Outcome, "back to PENDING")
	l.until(engine.EventSucceeded, orphan)
	assert.Equal(t, []engine.EventKind{engine.EventRecovered, engine.EventStarted, engine.EventSucceeded}, l.kinds(orphan))

	id, err := ok.Submit(ctx, client, 1)
	require.NoError(t, err)
	l.until(engine.EventSucceeded, id)
	assert.Equal(t, []engine.EventKind{engine.EventSubmitted, engine.EventStarted, engine.EventSucceeded}, l.kinds(id))

	waiting, err := wait.Submit(ctx, client, 2, ratchet.AwaitSignal("approved", time.Hour))
	require.NoError(t, err)
	l.until(engine.EventSubmitted, waiting)
	require.NoError(t, client.Signal(ctx, waiting, "approved", nil))
	// The delivery makes the job PENDING and the store wakes the node, which
	// may run it before the client publishes signal-resolved.
	sig := l.once(engine.EventSignalResolved, waiting)
	assert.Equal(t, "approved", sig.Name)
	assert.Equal(t, string(ratchet.SignalDelivered), sig.Outcome)
	l.once(engine.EventSucceeded, waiting)
	kinds := l.kinds(waiting)
	assert.ElementsMatch(t, []engine.EventKind{engine.EventSubmitted, engine.EventSignalResolved, engine.EventStarted, engine.EventSucceeded}, kinds)
	assert.Equal(t, engine.EventSubmitted, kinds[0])
	assert.Less(t, slices.Index(kinds, engine.EventStarted), slices.Index(kinds, engine.EventSucceeded))

	batch, err := client.SubmitBatch(ctx, ratchet.BatchSpec{Name: "pair"}, items(2, ok))
	require.NoError(t, err)
	for range 2 {
		l.until(engine.EventSucceeded, uuid.Nil)
	}
	clock.Advance(time.Second) // the finisher's next pass
	fin := l.until(engine.EventBatchFinished, batch)
	assert.Equal(t, "pair", fin.Name)
	assert.Equal(t, string(ratchet.BatchSucceeded), fin.Outcome)

	clock.Advance(t0.Add(10 * time.Second).Sub(clock.Now()))
	fired := l.until(engine.EventScheduleFired, uuid.Nil)
	assert.Equal(t, "tick", fired.Name)
	assert.Equal(t, "ok", fired.Task)
	// The job may run before the scheduler's pass publishes its event.
	l.once(engine.EventSucceeded, fired.JobID)

	long, err := slow.Submit(ctx, client, 5)
	require.NoError(t, err)
	<-slowStarted
	stop, cancel := context.WithCancel(ctx)
	cancel() // no time to drain: the running job is released
	_ = eng.Stop(stop)
	rel := l.until(engine.EventReleased, long)
	assert.Equal(t, 1, rel.Run)
	j, err := s.GetJob(ctx, long)
	require.NoError(t, err)
	assert.Equal(t, spi.StatusPending, j.Status)
}

// droppedCounter counts the events an engine dropped, by kind.
type droppedCounter struct {
	spi.NoOpMetrics
	mu sync.Mutex
	n  map[string]int
}

func (d *droppedCounter) EventsDropped(_ context.Context, node, kind string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.n[node+" "+kind]++
}

func (d *droppedCounter) get() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]int{}
	for k, v := range d.n {
		out[k] = v
	}
	return out
}

// A subscriber that falls behind loses events, and each loss reaches the
// metrics; one that blocks loses none: the engine waits for it.
func TestEventsDroppedAreCountedAndABlockingSubscriberLosesNone(t *testing.T) {
	ctx := context.Background()
	metrics := &droppedCounter{n: map[string]int{}}
	s := memory.New()
	ok := ratchet.NewVoidTask("ok", func(context.Context, int) error { return nil })
	eng, err := engine.New(s, engine.Options{Client: ratchet.ClientOptions{Logger: quiet, Metrics: metrics}, NodeID: "n1"}, ok)
	require.NoError(t, err)
	behind, unsubBehind := eng.Subscribe(1)
	defer unsubBehind()
	blocking, unsubBlocking := eng.SubscribeWith(engine.SubscribeOptions{Buffer: 1, Block: true, Kinds: []engine.EventKind{engine.EventSucceeded}})
	defer unsubBlocking()
	require.NoError(t, eng.Start(ctx))
	t.Cleanup(func() { _ = eng.Stop(ctx) })
	ids, err := ok.SubmitMany(ctx, eng.Client(), []int{1, 2, 3})
	require.NoError(t, err)

	var got []uuid.UUID
	for range ids {
		select {
		case ev := <-blocking:
			assert.Equal(t, engine.EventSucceeded, ev.Kind)
			got = append(got, ev.JobID)
		case <-time.After(10 * time.Second):
			t.Fatalf("the blocking subscriber got %d of %d events", len(got), len(ids))
		}
	}
	assert.ElementsMatch(t, ids, got, "a blocking subscriber loses nothing")
	assert.Equal(t, map[string]int{"n1 succeeded": 2}, metrics.get(), "the subscriber of one event's room dropped two, each counted")
	assert.Len(t, behind, 1)
}
