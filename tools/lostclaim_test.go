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

// lostClaims applies claims and then, for the first few that took jobs,
// reports an error as if the connection dropped after the commit (what a
// database restart under a burn-down did): the jobs are RUNNING under the
// node, which never heard of them.
type lostClaims struct {
	spi.Store
	lose atomic.Int32
}

func (s *lostClaims) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	jobs, err := s.Store.ClaimJobs(ctx, p)
	if err == nil && len(jobs) > 0 && s.lose.Add(-1) >= 0 {
		return nil, errors.New("connection lost after COMMIT (injected)")
	}
	return jobs, err
}

func (s *lostClaims) Capabilities() spi.Capabilities { return spi.CapabilitiesOf(s.Store) }

// When the answer to a claim is lost after its commit, the node adopts the
// claim's jobs with its next claim (spi.ClaimAdopter) and runs them: every
// job succeeds once, while the node lives (without adoption they stayed
// RUNNING under a live node for good).
func TestLostClaimAnswersAreAdopted(t *testing.T) {
	for name, open := range storeOpeners {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inner := open(t)
			t.Cleanup(func() { _ = inner.Close() })
			require.NotNil(t, spi.CapabilitiesOf(inner).Adopter, "every store adopts lost claims")
			store := &lostClaims{Store: inner}
			store.lose.Store(3)
			task := ratchet.NewTask("claimed", func(_ context.Context, n int) (int, error) { return n, nil })
			eng, err := engine.New(store, engine.Options{Client: ratchet.ClientOptions{Logger: quiet}, Concurrency: 8,
				Breakers: engine.BreakerOptions{Disabled: true}}, task)
			require.NoError(t, err)
			events, unsub := eng.Subscribe(10_000)
			defer unsub()
			const n = 200
			args := make([]int, n)
			for i := range args {
				args[i] = i
			}
			ids, err := task.SubmitMany(t.Context(), eng.Client(), args)
			require.NoError(t, err)
			require.NoError(t, eng.Start(t.Context()))
			defer func() { _ = eng.Stop(context.Background()) }()
			succeeded := map[string]int{}
			timeout := time.After(60 * time.Second)
			for len(succeeded) < n {
				select {
				case ev := <-events:
					require.Equal(t, engine.EventSucceeded, ev.Kind, "job %s", ev.JobID)
					succeeded[ev.JobID.String()]++
				case <-timeout:
					t.Fatalf("%d of %d jobs succeeded: the others stay RUNNING under the live node", len(succeeded), n)
				}
			}
			assert.LessOrEqual(t, store.lose.Load(), int32(0), "the answers of three claims were lost")
			for _, id := range ids {
				assert.Equal(t, 1, succeeded[id.String()], "job %s", id)
			}
		})
	}
}
