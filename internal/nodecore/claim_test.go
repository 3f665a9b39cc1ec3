package nodecore

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/memory"
)

// loseAnswers applies a claim, then answers with an error while lose is
// set: the claim's answer is lost.
type loseAnswers struct {
	*memory.Store
	lose bool
}

func (s *loseAnswers) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	jobs, err := s.Store.ClaimJobs(ctx, p)
	if err == nil && s.lose {
		return nil, errors.New("connection reset: the answer is lost")
	}
	return jobs, err
}

// The jobs of a claim whose answer was lost are adopted by the next claim,
// within its limit (it takes only the slots they leave), or given up by
// Lost at a stop.
func TestLostClaimsAreAdoptedWithinTheLimit(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clockwork.NewFakeClockAt(now)
	store := &loseAnswers{Store: memory.New()}
	var jobs []*spi.Job
	for range 5 {
		jobs = append(jobs, &spi.Job{ID: uuid.New(), TaskName: "t", Payload: []byte("{}"), Status: spi.StatusPending,
			ScheduledAt: now, CreatedAt: now, Backoff: spi.BackoffFixed})
	}
	_, err := store.InsertJobs(ctx, jobs, spi.InsertOptions{})
	require.NoError(t, err)
	var ran []*spi.Job
	c := NewClaimer(ClaimerDeps{Store: store, Clock: clock, Log: slog.New(slog.DiscardHandler), Adopter: store.Store,
		Params: spi.ClaimParams{NodeID: "n1", Tasks: []string{"t"}}, Dispatch: func(j *spi.Job) { ran = append(ran, j) }})

	store.lose = true
	o := c.ClaimOnce(ctx, 2)
	require.Error(t, o.Res.Err)
	assert.Empty(t, ran, "a lost answer dispatches nothing")

	store.lose = false
	clock.Advance(time.Second)
	o = c.ClaimOnce(ctx, 3)
	require.NoError(t, o.Res.Err)
	assert.Len(t, ran, 3, "the two adopted jobs and one claimed: the claim's limit of 3")

	store.lose = true
	clock.Advance(time.Second)
	require.Error(t, c.ClaimOnce(ctx, 2).Res.Err)
	lost := c.Lost(ctx)
	assert.Len(t, lost, 2, "at a stop, the lost claim's jobs are handed over")
	assert.Empty(t, c.Lost(ctx), "once")
}
