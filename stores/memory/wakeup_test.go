package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// listen registers a listener on s and returns the channel of its hints
// once it is registered.
func listen(t *testing.T, s *memory.Store) <-chan spi.WakeupHint {
	ctx, cancel := context.WithCancel(context.Background())
	hints := make(chan spi.WakeupHint, 16)
	done := make(chan error, 1)
	go func() { done <- s.ListenWakeups(ctx, func(h spi.WakeupHint) { hints <- h }) }()
	t.Cleanup(func() {
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	})
	// A probe insert tells when the listener is in.
	for {
		_, err := s.InsertJobs(context.Background(), []*spi.Job{job(spi.PriorityLowest)}, spi.InsertOptions{Source: "probe"})
		require.NoError(t, err)
		select {
		case <-hints:
			return hints
		case <-time.After(time.Millisecond):
		}
	}
}

func job(p spi.Priority) *spi.Job {
	return &spi.Job{ID: uuid.New(), TaskName: "t", Priority: p, MaxRetries: 1, CreatedAt: time.Unix(0, 0)}
}

func TestOneWakeupPerCallWithItsHighestPriorityAndSource(t *testing.T) {
	s := memory.New()
	hints := listen(t, s)
	ctx := context.Background()
	_, err := s.InsertJobs(ctx, []*spi.Job{job(spi.PriorityLow), job(spi.PriorityHigh), job(spi.PriorityNormal)}, spi.InsertOptions{Source: "n1"})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh, Source: "n1"}, <-hints)

	now := time.Unix(100, 0)
	claimed, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n1", Limit: 1, Now: now})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	assert.Empty(t, hints, "a claim makes nothing PENDING")
	_, err = s.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: claimed[0].ID, ClaimSeq: claimed[0].ClaimSeq}}, now)
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityHigh}, <-hints, "a release names no source")
	_, err = s.InsertJobs(ctx, []*spi.Job{job(spi.PriorityLow)}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, spi.WakeupHint{Priority: spi.PriorityLow}, <-hints, "no source left over from an earlier call")
}

// Two engines on one memory store hear of each other's jobs through the
// store's wakeups; here a listener stands for the second engine.
func ExampleStore_ListenWakeups() {
	s := memory.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan spi.WakeupHint, 1)
	listening := make(chan struct{})
	go func() {
		close(listening)
		_ = s.ListenWakeups(ctx, func(h spi.WakeupHint) {
			select {
			case heard <- h:
			default:
			}
		})
	}()
	<-listening
	for {
		j := &spi.Job{ID: uuid.New(), TaskName: "report", Priority: spi.PriorityHigh, CreatedAt: time.Now()}
		if _, err := s.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{Source: "node-a"}); err != nil {
			panic(err)
		}
		select {
		case h := <-heard:
			fmt.Println(h.Source, h.Priority)
			return
		case <-time.After(10 * time.Millisecond): // not listening yet: insert again
		}
	}
	// Output: node-a HIGH
}
