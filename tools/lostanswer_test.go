package tools_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/engine"
	ratchet "github.com/ratchet-go/ratchet/sdk"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// lostAnswers applies completion batches and then, for the first few,
// reports an error as if the connection dropped after the commit: the
// writes are in the database, the caller never heard so.
type lostAnswers struct {
	spi.Store
	lose atomic.Int32
}

func (s *lostAnswers) CompleteJobs(ctx context.Context, cs []spi.Completion) ([]bool, error) {
	res, err := s.Store.CompleteJobs(ctx, cs)
	if err == nil && s.lose.Add(-1) >= 0 {
		return nil, errors.New("connection lost after COMMIT (injected)")
	}
	return res, err
}

func (s *lostAnswers) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(s.Store) }

// When the answer to a completion batch is lost after its commit, the
// engine sends the batch again; the store recognises what already applied,
// so every success is reported exactly once and none as superseded.
func TestLostCompletionAnswersReportEachSuccessOnce(t *testing.T) {
	for name, open := range storeOpeners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inner := open(t)
			t.Cleanup(func() { _ = inner.Close() })
			store := &lostAnswers{Store: inner}
			store.lose.Store(3)
			task := ratchet.NewTask("answer", func(_ context.Context, n int) (int, error) { return n, nil })
			eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, Concurrency: 8}, task)
			require.NoError(t, err)
			events, unsub := eng.Subscribe(10_000)
			defer unsub()
			require.NoError(t, eng.Start(t.Context()))
			defer func() { _ = eng.Stop(context.Background()) }()
			const n = 200
			args := make([]int, n)
			for i := range args {
				args[i] = i
			}
			ids, err := task.SubmitMany(t.Context(), eng.Client(), args)
			require.NoError(t, err)
			succeeded := map[string]int{}
			timeout := time.After(60 * time.Second)
			for len(succeeded) < n {
				select {
				case ev := <-events:
					require.NotEqual(t, engine.EventSuperseded, ev.Kind, "job %s reported superseded after a lost answer", ev.JobID)
					require.Equal(t, engine.EventSucceeded, ev.Kind)
					succeeded[ev.JobID.String()]++
				case <-timeout:
					t.Fatalf("%d of %d successes reported", len(succeeded), n)
				}
			}
			assert.LessOrEqual(t, store.lose.Load(), int32(0), "the answers of three batches were lost")
			for _, id := range ids {
				assert.Equal(t, 1, succeeded[id.String()], "job %s", id)
				j, err := inner.GetJob(t.Context(), id)
				require.NoError(t, err)
				assert.Equal(t, spi.StatusSucceeded, j.Status)
			}
			select {
			case ev := <-events:
				t.Fatalf("an extra event after every job succeeded: %+v", ev)
			default:
			}
		})
	}
}
