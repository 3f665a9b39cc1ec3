package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
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
			res, err := s.InsertJobs(ctx, batch)
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
			res, err = s.InsertJobs(ctx, []*spi.Job{dupExisting, jobs[0], dupFresh})
			require.NoError(t, err)
			for _, r := range res {
				assert.True(t, r.Duplicate)
			}
			// ...and a job without a key whose id exists fails the batch.
			if n > 1 {
				_, err = s.InsertJobs(ctx, batch)
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
			_, err := s.InsertJobs(ctx, append(append(jobs, keyed), clash))
			require.Error(t, err)
			all, _, err := s.ListJobs(ctx, spi.ListParams{Limit: 10000})
			require.NoError(t, err)
			assert.Equal(t, []uuid.UUID{taken.ID}, ids(all))
		})
	}
}

func TestInsertRejectsInvalidJobs(t *testing.T) {
	s := openStore(t)
	good := job(spi.PriorityNormal, t0)
	bad := job(spi.Priority(5), t0)
	zero := job(spi.PriorityNormal, t0)
	zero.ID = uuid.Nil
	for name, batch := range map[string][]*spi.Job{
		"nil job":      {good, nil},
		"zero id":      {good, zero},
		"bad priority": {good, bad},
	} {
		_, err := s.InsertJobs(context.Background(), batch)
		require.Error(t, err, name)
	}
	_, err := s.GetJob(context.Background(), good.ID)
	require.ErrorIs(t, err, spi.ErrNotFound, "nothing is written")
	res, err := s.InsertJobs(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, res)
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

func TestConcurrentInsertsOfOneKey(t *testing.T) {
	// Many writers race to insert the same key: one job is written, and
	// everybody gets its id.
	dsn, schema := testDB(t)
	s1 := openSchema(t, dsn, schema)
	s2 := openSchema(t, dsn, schema)
	const writers = 8
	res := make([]spi.InsertResult, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		s := s1
		if w%2 == 1 {
			s = s2
		}
		wg.Go(func() {
			j := job(spi.PriorityNormal, t0)
			j.IdempotencyKey = "race"
			r, err := s.InsertJobs(context.Background(), []*spi.Job{j, job(spi.PriorityLow, t0)})
			errs[w] = err
			if err == nil {
				res[w] = r[0]
			}
		})
	}
	wg.Wait()
	winners := 0
	for w := range writers {
		require.NoError(t, errs[w])
		if !res[w].Duplicate {
			winners++
		}
		assert.Equal(t, res[0].ID, res[w].ID)
	}
	assert.Equal(t, 1, winners)
}

func TestListJobsPagesAndFilters(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var jobs []*spi.Job
	for range 25 {
		jobs = append(jobs, job(spi.PriorityNormal, t0))
	}
	insert(t, s, jobs...)
	c := claim(t, s, "n", 3, t0, 0)
	_, err := s.CompleteJobs(ctx, []spi.Completion{{ClaimRef: ref(c[0]), Outcome: spi.OutcomeFailed, FinishedAt: t0, Attempts: 1, LastError: "x"}})
	require.NoError(t, err)

	var got []uuid.UUID
	after := uuid.Nil
	for {
		page, next, err := s.ListJobs(ctx, spi.ListParams{After: after, Limit: 10})
		require.NoError(t, err)
		got = append(got, ids(page)...)
		if next == uuid.Nil {
			break
		}
		after = next
	}
	assert.Equal(t, ids(jobs), got)
	for st, want := range map[spi.Status]int{spi.StatusFailed: 1, spi.StatusRunning: 2, spi.StatusPending: 22, spi.StatusSucceeded: 0, "BOGUS": 0} {
		page, next, err := s.ListJobs(ctx, spi.ListParams{Status: st})
		require.NoError(t, err)
		assert.Len(t, page, want, st)
		assert.Equal(t, uuid.Nil, next)
	}
}

func TestGetUnknownJob(t *testing.T) {
	s := openStore(t)
	id := newID()
	_, err := s.GetJob(context.Background(), id)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.True(t, strings.Contains(err.Error(), id.String()))
}
