package engine

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// The node's finishing write wakes the client's watches of that job, and
// no other; a stopped watch is forgotten.
func TestWaitersWakeOnTheNodesFinishingWrite(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	task := ratchet.NewVoidTask("w", func(context.Context, int) error { <-release; return nil })
	e, err := New(memory.New(), Options{NodeID: "n1", Client: ratchet.ClientOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}, task)
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	defer func() { _ = e.Stop(ctx) }()
	var n ratchet.FinishNotifier = clientNotifier{e} // the engine's client's notifier

	id, err := task.Submit(ctx, e.Client(), 1)
	require.NoError(t, err)
	woken, stop := n.WatchFinished(id)
	other, stopOther := n.WatchFinished(uuid.New())
	defer stopOther()
	assert.Equal(t, int32(2), e.waiters.n.Load())
	close(release)
	select {
	case <-woken:
	case <-time.After(10 * time.Second):
		t.Fatal("the job's finishing write did not wake its watch")
	}
	select {
	case <-other:
		t.Fatal("another job's watch woke")
	default:
	}
	stop()
	stop()
	assert.Equal(t, int32(1), e.waiters.n.Load(), "the stopped watch is forgotten, once")
}

// Watches other processes announced: a node that finishes such a job
// reports it (to publish the end) once, and forgets it; a watch past its
// time is not reported, and is dropped at the next announcement. A
// finished notice wakes the local watches of its jobs.
func TestWaitersKeepRemoteWatches(t *testing.T) {
	var w waiters
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b, c := uuid.New(), uuid.New(), uuid.New()
	w.watchRemote([]uuid.UUID{a, b}, t0, t0.Add(time.Minute))
	w.watchRemote([]uuid.UUID{a}, t0, t0.Add(time.Minute)) // announced again
	assert.Equal(t, int32(2), w.n.Load())
	assert.True(t, w.finished(a, t0.Add(time.Second)), "a watched job's end is published")
	assert.False(t, w.finished(a, t0.Add(time.Second)), "once")
	assert.False(t, w.finished(c, t0), "an unwatched job's end is not")
	assert.False(t, w.finished(b, t0.Add(2*time.Minute)), "nor one whose watch lapsed")
	w.watchRemote([]uuid.UUID{c}, t0, t0.Add(time.Minute))
	w.watchRemote(nil, t0.Add(2*time.Minute), t0.Add(3*time.Minute))
	assert.Equal(t, int32(0), w.n.Load(), "lapsed watches are dropped")

	ch, stop := w.watch(a)
	defer stop()
	w.wake([]uuid.UUID{c})
	select {
	case <-ch:
		t.Fatal("another job's notice woke the watch")
	default:
	}
	w.wake([]uuid.UUID{c, a})
	<-ch
}

// A remote watch of a job another node finished lapses: the first write
// after its time drops it, so that the write path is back to one atomic
// read.
func TestRemoteWatchesLapse(t *testing.T) {
	var w waiters
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w.watchRemote([]uuid.UUID{uuid.New()}, t0, t0.Add(time.Minute))
	w.watchRemote([]uuid.UUID{uuid.New()}, t0.Add(time.Second), t0.Add(2*time.Minute))
	assert.False(t, w.finished(uuid.New(), t0.Add(30*time.Second)))
	assert.Equal(t, int32(2), w.n.Load(), "none lapsed yet")
	assert.False(t, w.finished(uuid.New(), t0.Add(90*time.Second)))
	assert.Equal(t, int32(1), w.n.Load(), "the first lapsed")
	assert.False(t, w.finished(uuid.New(), t0.Add(3*time.Minute)))
	assert.Equal(t, int32(0), w.n.Load(), "both lapsed")
}
