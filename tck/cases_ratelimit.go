package tck

import (
	"fmt"
	"sync"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// withRate makes a job rate-limited: at most n starts of key per period.
func withRate(key string, n int, period time.Duration) jobOpt {
	return withResource(spi.RateResource(key, period), n)
}

// The cases of rate limits (spi.RateLimitStore): a claim admits a job of
// a rate limit only while fewer than its limit of starts happened in the
// period before, by the database's clock, counting its own; the others
// stay PENDING and spend nothing; the window slides.
func rateLimitCases() []testCase {
	return []testCase{
		{"HoldsBackPastTheLimit", func(t tb, f *fixture) {
			rs := capability[spi.RateLimitStore](f, "spi.RateLimitStore")
			var limited []*spi.Job
			for range 5 {
				limited = append(limited, f.insertOne(withRate("api", 3, time.Hour)))
			}
			plain := f.insertOne()
			got := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: at(time.Second)})
			var rated int
			for _, j := range got {
				if j.Resource != "" {
					rated++
				}
			}
			assert.Equal(t, 3, rated, "three starts of the limit, and no more")
			assert.Contains(t, ids(got), plain.ID, "a job of no limit is claimed beside them")
			for _, j := range limited {
				if g := f.get(j.ID); g.Status == spi.StatusPending {
					assert.Zero(t, g.Attempts, "a held-back job spends no attempt")
					assert.Zero(t, g.ClaimSeq, "nor a claim")
				}
			}
			for _, j := range got {
				require.Equal(t, []bool{true}, f.complete(succeeded(j, at(2*time.Second), nil, "")))
			}
			var held spi.ClaimHeld
			assert.Empty(t, f.claimWith(spi.ClaimParams{NodeID: "node-b", Limit: 10, Now: at(3 * time.Second), Held: &held}),
				"another node within the period: the window is full, though none of its jobs runs")
			assert.Equal(t, 2, held.Jobs, "the claim reports the two jobs it held back (ClaimParams.Held)")
			assert.True(t, held.Room > 0 && held.Room <= time.Hour, "and when the window has room: in %s", held.Room)
			ws, err := rs.RateStarts(f.ctx, []string{spi.RateResource("api", time.Hour), spi.RateResource("idle", time.Minute)})
			require.NoError(t, err)
			require.Len(t, ws, 2)
			assert.Equal(t, int64(3), ws[0].Starts, "the window holds the three starts")
			assert.Equal(t, "api", ws[0].Key)
			assert.Equal(t, time.Hour, ws[0].Period)
			assert.Zero(t, ws[1].Starts, "a limit that started nothing")
		}},
		{"WindowSlides", func(t tb, f *fixture) {
			// Two starts per 300 ms of the database's clock: the third job
			// starts once the first start has left the window, not before.
			capability[spi.RateLimitStore](f, "spi.RateLimitStore")
			const period = 300 * time.Millisecond
			for range 3 {
				f.insertOne(withRate("burst", 2, period))
			}
			began := time.Now()
			now := func() time.Time { return at(time.Second + time.Since(began)) }
			first := f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: now()})
			require.Len(t, first, 2)
			for _, j := range first {
				require.Equal(t, []bool{true}, f.complete(succeeded(j, now(), nil, "")))
			}
			var third []*spi.Job
			for time.Since(began) < 10*time.Second && len(third) == 0 {
				third = f.claimWith(spi.ClaimParams{NodeID: "node-a", Limit: 10, Now: now()})
				if len(third) == 0 {
					<-time.After(20 * time.Millisecond) // the database's clock moves on its own
				}
			}
			require.Len(t, third, 1, "the window slid")
			assert.GreaterOrEqual(t, time.Since(began), period, "not before the first start left the window")
		}},
		{"ClaimersAtOnce", func(t tb, f *fixture) {
			// Claimers on every handle at once share one limit.
			capability[spi.RateLimitStore](f, "spi.RateLimitStore")
			for range 20 {
				f.insertOne(withRate("shared", 5, time.Hour))
			}
			handles := f.handles()
			var mu sync.Mutex
			total := 0
			var wg sync.WaitGroup
			start := make(chan struct{})
			for g := range 8 {
				s := handles[g%len(handles)]
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got, err := s.ClaimJobs(f.ctx, spi.ClaimParams{NodeID: fmt.Sprint("node-", g), Limit: 4, Now: at(time.Second)})
					if !assert.NoError(t, err) {
						return
					}
					mu.Lock()
					total += len(got)
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			assert.Equal(t, 5, total, "five starts in all")
		}},
	}
}
