package tools_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/internal/dbtest"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mysql"
	"github.com/ratchet-go/ratchet/stores/postgres"
)

// BenchmarkFairClaim measures a claim of 10 jobs, and the turns it
// passes, with 20,000 jobs of fairness keys pending, spread over 10 keys
// and over 10,000 keys, on PostgreSQL and MariaDB: the line holds one job
// per key, so the claim's cost should not follow the keys. Each claimed
// job is completed outside the measure; ns/claim is the metric. Run it
// with -benchtime=1000x (2,000 claims empty the backlog).
func BenchmarkFairClaim(b *testing.B) {
	open := map[string]func(b *testing.B) spi.Store{
		"postgres": func(b *testing.B) spi.Store {
			dsn, schema := dbtest.Postgres(b)
			s, err := postgres.Open(b.Context(), dsn, postgres.Options{Schema: schema, ApplyMigrations: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
		"mysql": func(b *testing.B) spi.Store {
			dsn, db := dbtest.MySQL(b)
			s, err := mysql.Open(b.Context(), dsn, mysql.Options{Database: db, ApplyMigrations: true})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
	const total, limit = 20_000, 10
	for _, store := range []string{"postgres", "mysql"} {
		for _, keys := range []int{10, 10_000} {
			b.Run(fmt.Sprintf("%s/keys=%d", store, keys), func(b *testing.B) {
				s := open[store](b)
				ctx := b.Context()
				t0 := time.Now().UTC().Truncate(time.Microsecond)
				jobs := make([]*spi.Job, 0, 1000)
				flush := func() {
					if _, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{}); err != nil {
						b.Fatal(err)
					}
					jobs = jobs[:0]
				}
				for i := range total {
					jobs = append(jobs, &spi.Job{ID: uuid.Must(uuid.NewV7()), TaskName: "fair.bench", Payload: []byte("{}"), Status: spi.StatusPending,
						Priority: spi.PriorityNormal, ScheduledAt: t0, CreatedAt: t0, MaxRetries: 3, Backoff: spi.BackoffFixed, BackoffParam: time.Second,
						Sequence: &spi.Sequence{Key: fmt.Sprint(spi.FairKeyPrefix, "tenant-", i%keys), Fair: true}})
					if len(jobs) == cap(jobs) {
						flush()
					}
				}
				flush()
				var claimed time.Duration
				b.ResetTimer()
				for n := range b.N {
					now := t0.Add(time.Duration(n+1) * time.Millisecond)
					c0 := time.Now()
					got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "bench", Limit: limit, Now: now, Tasks: []string{"fair.bench"}})
					claimed += time.Since(c0)
					if err != nil || len(got) == 0 {
						b.Fatal("claim", n, err, len(got))
					}
					cs := make([]spi.Completion, len(got))
					for i, j := range got {
						cs[i] = spi.Completion{ClaimRef: spi.ClaimRef{JobID: j.ID, ClaimSeq: j.ClaimSeq}, Outcome: spi.OutcomeSucceeded, FinishedAt: now, HasDependents: j.Dependents > 0}
					}
					if _, err := s.CompleteJobs(ctx, cs); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(claimed.Nanoseconds())/float64(b.N), "ns/claim")
			})
		}
	}
}
