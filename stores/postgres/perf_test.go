package postgres

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestThroughput measures the hot path on the test server: COPY inserts and
// a claim/complete burn-down. It runs only with RATCHET_PG_PERF=1 (it takes
// tens of seconds and loads the machine); it logs the rates it measured.
func TestThroughput(t *testing.T) {
	if os.Getenv("RATCHET_PG_PERF") != "1" {
		t.Skip("set RATCHET_PG_PERF=1 to measure throughput")
	}
	const total = 200_000
	const batch = 1000
	ctx := context.Background()
	s := openStore(t)

	jobs := make([]*spi.Job, total)
	for i := range jobs {
		jobs[i] = job(spi.Priority(i%spi.NumPriorities), t0.Add(-time.Duration(i%3600)*time.Second))
	}
	start := time.Now()
	for i := 0; i < total; i += batch {
		_, err := s.InsertJobs(ctx, jobs[i:i+batch], spi.InsertOptions{})
		require.NoError(t, err)
	}
	el := time.Since(start)
	t.Logf("insert: %d jobs in %s: %.0f jobs/s (batches of %d, COPY)", total, el.Round(time.Millisecond), total/el.Seconds(), batch)
	exec(t, s, `ANALYZE `+qualify(s.schema, "scheduler_job"))

	workers := 4
	if v := os.Getenv("RATCHET_PG_PERF_WORKERS"); v != "" {
		workers = int(v[0] - '0')
	}
	claimN := 200
	if v := os.Getenv("RATCHET_PG_PERF_CLAIM"); v != "" {
		claimN, _ = strconv.Atoi(v)
	}
	var done atomic.Int64
	var claimNS, completeNS atomic.Int64
	var wg sync.WaitGroup
	start = time.Now()
	for w := range workers {
		node := "node-" + string(rune('a'+w))
		wg.Go(func() {
			for {
				c0 := time.Now()
				got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: node, Limit: claimN, Now: t0, BoostInterval: 15 * time.Minute})
				claimNS.Add(int64(time.Since(c0)))
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				cs := make([]spi.Completion, len(got))
				for i, j := range got {
					cs[i] = spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
				}
				c1 := time.Now()
				ok, err := s.CompleteJobs(ctx, cs)
				completeNS.Add(int64(time.Since(c1)))
				if err != nil {
					t.Error(err)
					return
				}
				for _, a := range ok {
					if !a {
						t.Error("completion superseded")
						return
					}
				}
				done.Add(int64(len(got)))
			}
		})
	}
	wg.Wait()
	el = time.Since(start)
	t.Logf("burn-down: %d jobs claimed and completed in %s: %.0f jobs/s (%d workers, claims of %d)", done.Load(), el.Round(time.Millisecond), float64(done.Load())/el.Seconds(), workers, claimN)
	t.Logf("time in claims %s, in completions %s (summed over workers)", time.Duration(claimNS.Load()).Round(time.Millisecond), time.Duration(completeNS.Load()).Round(time.Millisecond))
	require.Equal(t, int64(total), done.Load())
}

// BenchmarkInsertCopy measures InsertJobs of batches of 1,000 jobs without
// keys (the COPY path); ns/op is per job.
func BenchmarkInsertCopy(b *testing.B) {
	s := openStore(b)
	const batch = 1000
	jobs := make([]*spi.Job, batch)
	b.ResetTimer()
	for i := 0; i < b.N; i += batch {
		for k := range jobs {
			jobs[k] = job(spi.PriorityNormal, t0)
		}
		if _, err := s.InsertJobs(context.Background(), jobs[:min(batch, b.N-i)], spi.InsertOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInsertOne measures InsertJobs of single jobs (one statement
// each, the web-request case).
func BenchmarkInsertOne(b *testing.B) {
	s := openStore(b)
	for b.Loop() {
		if _, err := s.InsertJobs(context.Background(), []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimComplete measures one claim of 100 and one completion batch
// per 100 jobs from a backlog; ns/op is per job.
func BenchmarkClaimComplete(b *testing.B) {
	claimComplete(b, func(j *spi.Job) spi.Completion {
		return spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeSucceeded, FinishedAt: t0}
	})
}

// BenchmarkClaimFail is BenchmarkClaimComplete with every run failing for
// good: "recorded" with its attempt record (the core's transactional path
// and one INSERT a job), "unrecorded" without (the batched statement),
// for the cost of the records on a failure-heavy load.
func BenchmarkClaimFail(b *testing.B) {
	for _, rec := range []bool{true, false} {
		name := map[bool]string{true: "recorded", false: "unrecorded"}[rec]
		b.Run(name, func(b *testing.B) {
			claimComplete(b, func(j *spi.Job) spi.Completion {
				c := spi.Completion{ClaimRef: ref(j), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "upstream 503"}
				if rec {
					c.Attempt, c.Node, c.StartedAt = spi.AttemptFailed, j.OwnerNode, j.ClaimedAt
				}
				return c
			})
		})
	}
}

// claimComplete claims from a backlog of b.N jobs 100 at a time and
// completes each batch with the completions outcome makes.
func claimComplete(b *testing.B, outcome func(*spi.Job) spi.Completion) {
	ctx := context.Background()
	s := openStore(b)
	const n = 100
	for i := 0; i < b.N; i += 1000 {
		jobs := make([]*spi.Job, min(1000, b.N-i))
		for k := range jobs {
			jobs[k] = job(spi.Priority(k%spi.NumPriorities), t0.Add(-time.Duration(k)*time.Second))
		}
		if _, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for done := 0; done < b.N; {
		got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "bench", Limit: n, Now: t0, BoostInterval: 15 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 {
			b.Fatalf("backlog empty after %d of %d", done, b.N)
		}
		cs := make([]spi.Completion, len(got))
		for i, j := range got {
			cs[i] = outcome(j)
		}
		if _, err := s.CompleteJobs(ctx, cs); err != nil {
			b.Fatal(err)
		}
		done += len(got)
	}
}

// BenchmarkClaimOne measures the claim of one job and its completion from
// a small backlog: the shape of a lightly loaded node's claims, where the
// statement's fixed cost, not the rows, sets the latency.
func BenchmarkClaimOne(b *testing.B) {
	ctx := context.Background()
	s := openStore(b)
	jobs := make([]*spi.Job, 1000)
	for k := range jobs {
		jobs[k] = job(spi.PriorityNormal, t0.Add(-time.Duration(k)*time.Second))
	}
	if _, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "bench", Limit: 1, Now: t0, BoostInterval: 15 * time.Minute, Tasks: []string{"send-email"}})
		if err != nil || len(got) != 1 {
			b.Fatal(err, len(got))
		}
		if _, err := s.ReleaseJobs(ctx, []spi.ClaimRef{ref(got[0])}, t0); err != nil {
			b.Fatal(err)
		}
	}
}
