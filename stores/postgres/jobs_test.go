package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// batchSizes exercise both insert paths: one statement, and COPY.
var batchSizes = []int{1, 7, CopyThreshold, CopyThreshold + 13}

func TestInsertRoundTrip(t *testing.T) {
	s := openStore(t)
	j := job(spi.PriorityHigh, t0.Add(90*time.Minute+123456*time.Microsecond))
	j.TaskName = "round-trip/täsk"
	j.Payload = []byte("{ \"b\": 1,  \"a\": \"Zoë 🚀\",\n\"c\": [true, null] }")
	j.CreatedAt = t0.Add(-time.Hour + 654321*time.Microsecond)
	j.IdempotencyKey = "key-ü"
	j.Tags = []string{"blue", "gpu", "région-eu"}
	j.Params = map[string]string{"tenant": "acme", "ключ": "значение", "empty": ""}
	j.MaxRetries = 7
	j.BackoffParam = 1500 * time.Millisecond
	// Fields that only transitions set are written as given, too.
	j.Attempts, j.CrashCount, j.ClaimSeq = 2, 1, 5
	j.LastError = "earlier"
	insert(t, s, j)
	got := get(t, s, j.ID)
	want := j.Clone()
	want.Status = spi.StatusPending
	assert.Equal(t, want, got)
	for _, tm := range []time.Time{got.ScheduledAt, got.CreatedAt} {
		assert.Equal(t, time.UTC, tm.Location())
	}
}

func TestInsertPayloadsByteForByte(t *testing.T) {
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	payloads := map[string][]byte{
		"nil":        nil,
		"empty":      {},
		"binary":     binary, // not UTF-8: an encryption envelope
		"json":       []byte(`{"z":1,   "a":[1e10, 0.10]}`),
		"nul inside": []byte("a\x00b"),
	}
	s := openStore(t)
	for _, n := range batchSizes {
		for name, p := range payloads {
			t.Run(fmt.Sprintf("%s/%d", name, n), func(t *testing.T) {
				var jobs []*spi.Job
				for range n {
					j := job(spi.PriorityNormal, t0)
					j.Payload = p
					j.Result = p // results are written as given too
					jobs = append(jobs, j)
				}
				insert(t, s, jobs...)
				got := get(t, s, jobs[n-1].ID)
				assert.Equal(t, p, got.Payload)
				assert.Equal(t, p == nil, got.Payload == nil, "nil and empty are kept apart")
				assert.Equal(t, p == nil, got.Result == nil, "nil and empty results are kept apart")
			})
		}
	}
}

func TestInsertIdempotencyOnBothPaths(t *testing.T) {
	for _, n := range batchSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			existing := job(spi.PriorityNormal, t0)
			existing.IdempotencyKey = "existing"
			insert(t, s, existing)

			var jobs []*spi.Job
			for i := range n {
				jobs = append(jobs, job(spi.Priority(i%spi.NumPriorities), t0))
			}
			jobs[0].IdempotencyKey = "fresh"
			jobs[0].Tags = []string{"keyed"}
			dupExisting := job(spi.PriorityCritical, t0)
			dupExisting.IdempotencyKey = "existing"
			dupExisting.Tags = []string{"must-not-appear"}
			dupFresh := job(spi.PriorityLow, t0)
			dupFresh.IdempotencyKey = "fresh"
			dupFresh.Tags = []string{"must-not-appear"}
			batch := append([]*spi.Job{dupExisting}, jobs...)
			batch = append(batch, dupFresh)
			res, err := s.InsertJobs(ctx, batch, spi.InsertOptions{})
			require.NoError(t, err)
			require.Len(t, res, len(batch))
			assert.Equal(t, spi.InsertResult{ID: existing.ID, Duplicate: true}, res[0])
			for i, j := range jobs {
				assert.Equal(t, spi.InsertResult{ID: j.ID}, res[i+1])
			}
			assert.Equal(t, spi.InsertResult{ID: jobs[0].ID, Duplicate: true}, res[len(res)-1])

			all, _, err := s.ListJobs(ctx, spi.ListParams{Limit: 10000})
			require.NoError(t, err)
			assert.Len(t, all, n+1)
			for _, j := range all {
				assert.NotContains(t, j.Tags, "must-not-appear")
			}
			assert.Equal(t, []string{"keyed"}, get(t, s, jobs[0].ID).Tags)
			_, err = s.GetJob(ctx, dupFresh.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound)

			// The whole batch again: every keyed job is a duplicate...
			res, err = s.InsertJobs(ctx, []*spi.Job{dupExisting, jobs[0], dupFresh}, spi.InsertOptions{})
			require.NoError(t, err)
			for _, r := range res {
				assert.True(t, r.Duplicate)
			}
			// ...and a job without a key whose id exists fails the batch.
			if n > 1 {
				_, err = s.InsertJobs(ctx, batch, spi.InsertOptions{})
				require.Error(t, err)
			}
		})
	}
}

func TestInsertIsAtomic(t *testing.T) {
	// A batch with an id that already exists fails as a whole, on both
	// paths, and writes nothing.
	for _, n := range batchSizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ctx := context.Background()
			s := openStore(t)
			taken := job(spi.PriorityNormal, t0)
			insert(t, s, taken)
			var jobs []*spi.Job
			for range n {
				j := job(spi.PriorityNormal, t0)
				j.Tags = []string{"x"}
				jobs = append(jobs, j)
			}
			keyed := job(spi.PriorityNormal, t0)
			keyed.IdempotencyKey = "k"
			clash := taken.Clone()
			_, err := s.InsertJobs(ctx, append(append(jobs, keyed), clash), spi.InsertOptions{})
			require.Error(t, err)
			all, _, err := s.ListJobs(ctx, spi.ListParams{Limit: 10000})
			require.NoError(t, err)
			assert.Equal(t, []uuid.UUID{taken.ID}, ids(all))
		})
	}
}

func TestTagsDeduplicatedAndSorted(t *testing.T) {
	for _, n := range []int{1, CopyThreshold} {
		s := openStore(t)
		var jobs []*spi.Job
		for range n {
			j := job(spi.PriorityNormal, t0)
			j.Tags = []string{"z", "a", "z", "m", "a"}
			jobs = append(jobs, j)
		}
		insert(t, s, jobs...)
		assert.Equal(t, []string{"a", "m", "z"}, get(t, s, jobs[0].ID).Tags)
		// Jobs without tags have none (nil).
		j := job(spi.PriorityNormal, t0)
		insert(t, s, j)
		assert.Nil(t, get(t, s, j.ID).Tags)
	}
}

// The trace context comes back byte for byte on both insert paths, in
// batches that mix traced and untraced jobs, with and without resources
// (COPY leaves the optional columns out when no job of the batch has them).
func TestInsertTraceContextOnBothPaths(t *testing.T) {
	trace := []byte{0x01, 0x00, 0xff, 'x', 0x80}
	s := openStore(t)
	for _, n := range batchSizes {
		for _, resources := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d/resources=%v", n, resources), func(t *testing.T) {
				var jobs []*spi.Job
				for i := range n {
					j := job(spi.PriorityNormal, t0)
					if i%2 == 1 || n == 1 {
						j.TraceContext = trace
					}
					if resources && i == 0 {
						j.Resource, j.ResourceLimit = "db", 3
					}
					jobs = append(jobs, j)
				}
				insert(t, s, jobs...)
				for _, j := range jobs {
					got := get(t, s, j.ID)
					assert.Equal(t, j.TraceContext, got.TraceContext)
					assert.Equal(t, j.Resource, got.Resource)
					assert.Equal(t, j.ResourceLimit, got.ResourceLimit)
				}
			})
		}
	}
}

// A COPY leaves out the columns whose value is the schema's default for
// the whole batch: a batch of jobs at the defaults reads back as written,
// and so does one in which a single job sets every one of those columns
// (each column is then written for the whole batch).
func TestCopyLeavesDefaultsOut(t *testing.T) {
	s := openStore(t)
	atDefaults := func() *spi.Job {
		j := job(spi.PriorityNormal, t0)
		j.CreatedAt, j.Backoff, j.MaxRetries = time.Time{}, spi.BackoffNone, 3
		return j
	}
	for _, name := range []string{"all at the defaults", "one job sets every column"} {
		jobs := make([]*spi.Job, CopyThreshold)
		for i := range jobs {
			jobs[i] = atDefaults()
		}
		if name == "one job sets every column" {
			j := jobs[len(jobs)/2]
			j.Priority, j.CreatedAt, j.MaxRetries = spi.PriorityHigh, t0.Add(-time.Minute), 7
			j.Backoff, j.BackoffParam = spi.BackoffFixed, 1500*time.Millisecond
			j.Attempts, j.ClaimSeq, j.CrashCount = 2, 5, 1
			j.OwnerNode, j.ClaimedAt, j.FinishedAt = "node-x", t0.Add(time.Second), t0.Add(2*time.Second)
			j.LastError, j.Result, j.ResultType = "earlier", []byte(`"r"`), "string"
			j.Params = map[string]string{"tenant": "acme"}
			j.Resource, j.ResourceLimit = "gpu", 2
			j.TraceContext = []byte("00-trace")
		}
		insert(t, s, jobs...)
		for _, j := range jobs {
			want := j.Clone()
			want.Status = spi.StatusPending
			assert.Equal(t, want, get(t, s, j.ID), "%s: job %s", name, j.ID)
		}
	}
}
