package nodecore

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// fakeCompleter records the batches written to it and fails the first
// failures calls.
type fakeCompleter struct {
	mu       sync.Mutex
	batches  [][]spi.Completion
	failures int
	calls    chan struct{}
}

func (f *fakeCompleter) CompleteJobs(_ context.Context, cs []spi.Completion) ([]bool, error) {
	defer func() { f.calls <- struct{}{} }()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failures > 0 {
		f.failures--
		return nil, errors.New("store down")
	}
	f.batches = append(f.batches, cs)
	out := make([]bool, len(cs))
	for i, c := range cs {
		out[i] = c.ClaimSeq > 0 // a claim sequence of 0 stands for a superseded claim
	}
	return out, nil
}

func pending(seq int64) Pending {
	id := uuid.New()
	return Pending{C: spi.Completion{ClaimRef: spi.ClaimRef{JobID: id, ClaimSeq: seq}, Outcome: spi.OutcomeSucceeded},
		Job: &spi.Job{ID: id, TaskName: "t", ClaimSeq: seq}}
}

// TestCompleterAlone runs the completer on its narrow dependencies, no
// engine: what is queued before the workers start is written in batches of
// at most the batch size, each completion reported once with whether it
// applied; a failing store is retried after the clock's backoff; at stop a
// write that fails counts the completions lost, but not those of claims
// Stop released.
func TestCompleterAlone(t *testing.T) {
	store := &fakeCompleter{calls: make(chan struct{}, 100)}
	clock := clockwork.NewFakeClock()
	var mu sync.Mutex
	applied := map[uuid.UUID]bool{}
	released := map[spi.ClaimRef]bool{}
	reported := make(chan struct{}, 100)
	c := NewCompleter(CompleterDeps{Store: store, Clock: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Batch: 3, Workers: 1,
		Written: func(_ context.Context, p Pending, ok bool) {
			mu.Lock()
			defer mu.Unlock()
			_, dup := applied[p.Job.ID]
			assert.False(t, dup, "each completion is reported once")
			applied[p.Job.ID] = ok
			reported <- struct{}{}
		},
		Released: func(r spi.ClaimRef) bool { mu.Lock(); defer mu.Unlock(); return released[r] }})

	var queued []Pending
	for i := range 7 {
		p := pending(int64(i % 4)) // seq 0: superseded
		queued = append(queued, p)
		c.Add(p)
	}
	store.failures = 1
	c.Start()
	<-store.calls // the failed write
	require.NoError(t, clock.BlockUntilContext(context.Background(), 1), "the retry waits on the clock")
	clock.Advance(10 * time.Millisecond)
	for range 7 {
		<-reported
	}
	mu.Lock()
	assert.Len(t, applied, 7)
	for _, p := range queued {
		assert.Equal(t, p.C.ClaimSeq > 0, applied[p.Job.ID], "applied as the store answered")
	}
	mu.Unlock()
	store.mu.Lock()
	for _, b := range store.batches {
		assert.LessOrEqual(t, len(b), 3)
	}
	store.failures = 1000 // the store is down from here on
	store.mu.Unlock()

	for len(store.calls) > 0 { // the 3 writes of the 7, in batches of 3
		<-store.calls
	}
	lost, back := pending(9), pending(10)
	mu.Lock()
	released[back.C.ClaimRef] = true
	mu.Unlock()
	c.Add(lost)
	c.Add(back)
	<-store.calls // the worker took them and failed: its retry waits on the clock
	err := c.Stop()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 completions not written", "the released claim loses nothing")
}

// The completer's queue hands out NextBatch's batches of what was added,
// in order, however adds and takes interleave.
func TestCompleterTakesBatchesInOrder(t *testing.T) {
	c := NewCompleter(CompleterDeps{Batch: 3})
	var model []Pending // the whole queue, as NextBatch sees it
	add := func(n int) {
		for range n {
			p := pending(1)
			model = append(model, p)
			c.Add(p)
		}
	}
	take := func() {
		t.Helper()
		var want []Pending
		want, model = NextBatch(model, 3)
		got, _ := c.Take()
		require.Len(t, got, len(want))
		for i := range want {
			assert.Equal(t, want[i].Job.ID, got[i].Job.ID, "completion %d of the batch", i)
		}
	}
	add(7)
	take() // 3
	take() // 3
	add(2)
	take() // the last of the 7 and the 2 added since
	take() // none
	add(2)
	take() // 2: a partial batch goes whole
	add(4)
	take() // 3
	add(1)
	take() // 2
	take() // none
}

// A write waiting out its retry backoff goes at once when the store
// answers again (answered: a claim succeeded after one failed), without
// the clock moving.
func TestCompleterRetriesAtOnceWhenTheStoreAnswers(t *testing.T) {
	store := &fakeCompleter{calls: make(chan struct{}, 100), failures: 6}
	clock := clockwork.NewFakeClock()
	reported := make(chan struct{}, 10)
	c := NewCompleter(CompleterDeps{Store: store, Clock: clock, Log: slog.New(slog.DiscardHandler), Batch: 10, Workers: 1,
		Written:  func(context.Context, Pending, bool) { reported <- struct{}{} },
		Released: func(spi.ClaimRef) bool { return false }})
	c.Add(pending(1))
	c.Start()
	ctx := context.Background()
	backoff := 10 * time.Millisecond
	for range 5 { // the store stays down: the backoff doubles, to 160 ms
		<-store.calls
		require.NoError(t, clock.BlockUntilContext(ctx, 1))
		clock.Advance(backoff)
		backoff *= 2
	}
	<-store.calls // the sixth failure: the retry waits 320 ms on the clock
	require.NoError(t, clock.BlockUntilContext(ctx, 1))
	c.Answered()
	<-store.calls // tried again with no clock move
	<-reported
	store.mu.Lock()
	assert.Len(t, store.batches, 1)
	store.mu.Unlock()
	require.NoError(t, c.Stop())
}
