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
