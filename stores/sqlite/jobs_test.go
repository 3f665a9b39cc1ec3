package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInsertAndGetRoundTrip(t *testing.T) {
	s := openStore(t)
	paris := time.FixedZone("CET", 3600)
	full := &spi.Job{
		ID:             newID(),
		TaskName:       "resize-image",
		Payload:        []byte(`{"w":640,"h":480}`),
		Status:         spi.StatusPending,
		Priority:       spi.PriorityHigh,
		ScheduledAt:    t0.Add(999 * time.Nanosecond).In(paris), // sub-microsecond part dropped
		CreatedAt:      t0.Add(-time.Minute).In(paris),
		MaxRetries:     7,
		Backoff:        spi.BackoffFixed,
		BackoffParam:   2500 * time.Millisecond,
		IdempotencyKey: "order-42",
		Tags:           []string{"gpu", "eu-west", "batch"},
		Params:         map[string]string{"tenant": "acme", "quote": `a"b`, "empty": ""},
	}
	minimal := &spi.Job{ID: newID(), TaskName: "noop", Status: spi.StatusPending, Priority: spi.PriorityLowest, ScheduledAt: t0}
	emptyPayload := &spi.Job{ID: newID(), TaskName: "noop", Payload: []byte{}, Params: map[string]string{}, ScheduledAt: t0}
	insert(t, s, full, minimal, emptyPayload)

	got := get(t, s, full.ID)
	want := full.Clone()
	want.ScheduledAt = t0
	want.CreatedAt = t0.Add(-time.Minute)
	assert.Equal(t, want, got)
	assert.Equal(t, time.UTC, got.ScheduledAt.Location())

	got = get(t, s, minimal.ID)
	assert.Equal(t, minimal, got)
	assert.Nil(t, got.Payload)
	assert.Nil(t, got.Tags)
	assert.Nil(t, got.Params)
	assert.True(t, got.CreatedAt.IsZero())
	assert.True(t, got.ClaimedAt.IsZero())
	assert.True(t, got.FinishedAt.IsZero())

	got = get(t, s, emptyPayload.ID)
	assert.NotNil(t, got.Payload)
	assert.Empty(t, got.Payload)
	assert.NotNil(t, got.Params)
	assert.Empty(t, got.Params)

	// Zero times are NULL, times are unix microseconds.
	var claimed, finished sql.NullInt64
	var scheduled int64
	require.NoError(t, s.db.QueryRow(`SELECT scheduled_time, claimed_time, finished_time FROM scheduler_job WHERE job_id = ?`,
		full.ID.String()).Scan(&scheduled, &claimed, &finished))
	assert.Equal(t, t0.UnixMicro(), scheduled)
	assert.False(t, claimed.Valid)
	assert.False(t, finished.Valid)
}

func TestInsertForcesPending(t *testing.T) {
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	j.Status = spi.StatusFailed
	insert(t, s, j)
	assert.Equal(t, spi.StatusPending, get(t, s, j.ID).Status)
}

func TestGetJobNotFound(t *testing.T) {
	s := openStore(t)
	id := newID()
	_, err := s.GetJob(context.Background(), id)
	require.ErrorIs(t, err, spi.ErrNotFound)
	assert.Contains(t, err.Error(), id.String())
}

func TestInsertIdempotency(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	first := job(spi.PriorityNormal, t0)
	first.IdempotencyKey = "k1"
	insert(t, s, first)

	again := job(spi.PriorityHigh, t0)
	again.IdempotencyKey = "k1"
	again.Tags = []string{"x"}
	fresh := job(spi.PriorityNormal, t0)
	fresh.IdempotencyKey = "k2"
	sameBatch := job(spi.PriorityNormal, t0)
	sameBatch.IdempotencyKey = "k2"
	noKey := job(spi.PriorityNormal, t0)
	res, err := s.InsertJobs(ctx, []*spi.Job{again, fresh, sameBatch, noKey})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{
		{ID: first.ID, Duplicate: true},
		{ID: fresh.ID},
		{ID: fresh.ID, Duplicate: true},
		{ID: noKey.ID},
	}, res)

	for _, id := range []uuid.UUID{again.ID, sameBatch.ID} {
		_, err := s.GetJob(ctx, id)
		assert.ErrorIs(t, err, spi.ErrNotFound, "a duplicate was written")
	}
	var tags int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*) FROM scheduler_job_tag`).Scan(&tags))
	assert.Zero(t, tags, "a duplicate's tags were written")
	jobs, _, err := s.ListJobs(ctx, spi.ListParams{})
	require.NoError(t, err)
	assert.Len(t, jobs, 3)
}

func TestInsertRejectsInvalidBatchWhole(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	existing := job(spi.PriorityNormal, t0)
	insert(t, s, existing)
	badPriority := job(spi.PriorityNormal, t0)
	badPriority.Priority = 5
	zeroID := job(spi.PriorityNormal, t0)
	zeroID.ID = uuid.Nil
	dupID := job(spi.PriorityNormal, t0)
	dupID.ID = existing.ID
	for name, bad := range map[string]*spi.Job{"nil": nil, "priority": badPriority, "zero id": zeroID, "existing id": dupID} {
		t.Run(name, func(t *testing.T) {
			ok := job(spi.PriorityNormal, t0)
			_, err := s.InsertJobs(ctx, []*spi.Job{ok, bad})
			require.Error(t, err)
			_, err = s.GetJob(ctx, ok.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "part of a failed batch was written")
		})
	}
	res, err := s.InsertJobs(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, res)
}

func TestInsertLargeBatch(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	jobs := make([]*spi.Job, 1234)
	for i := range jobs {
		jobs[i] = job(spi.Priority(i%spi.NumPriorities), t0)
		jobs[i].Tags = []string{"a", "b"}
		if i%3 == 0 {
			jobs[i].IdempotencyKey = "key-" + jobs[i].ID.String()
		}
	}
	insert(t, s, jobs...)
	var n, tags int
	require.NoError(t, s.db.QueryRow(`SELECT COUNT(*), (SELECT COUNT(*) FROM scheduler_job_tag) FROM scheduler_job`).Scan(&n, &tags))
	assert.Equal(t, len(jobs), n)
	assert.Equal(t, 2*len(jobs), tags)

	res, err := s.InsertJobs(ctx, jobs)
	require.Error(t, err, "re-inserting ids without keys must fail")
	assert.Nil(t, res)
}

func TestTagsKeepOrderAndDropDuplicates(t *testing.T) {
	s := openStore(t)
	j := job(spi.PriorityNormal, t0)
	j.Tags = []string{"zeta", "alpha", "zeta", "mid"}
	insert(t, s, j)
	assert.Equal(t, []string{"zeta", "alpha", "mid"}, get(t, s, j.ID).Tags)
}

func TestListJobsPaging(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	var all []*spi.Job
	for i := range 7 {
		j := job(spi.PriorityNormal, t0)
		if i%2 == 1 {
			j.ScheduledAt = t0.Add(time.Hour)
		}
		all = append(all, j)
	}
	// Insert out of order: the listing follows the ids.
	insert(t, s, all[3], all[0], all[6], all[1], all[5], all[2], all[4])
	claim(t, s, "n", 10, t0, 0) // the even ones become RUNNING

	var seen []uuid.UUID
	after := uuid.Nil
	for page := 0; ; page++ {
		require.Less(t, page, 10)
		jobs, next, err := s.ListJobs(ctx, spi.ListParams{After: after, Limit: 3})
		require.NoError(t, err)
		assert.LessOrEqual(t, len(jobs), 3)
		seen = append(seen, ids(jobs)...)
		if next == uuid.Nil {
			break
		}
		assert.Equal(t, jobs[len(jobs)-1].ID, next)
		after = next
	}
	assert.Equal(t, ids(all), seen)

	// A page that ends exactly at the last job says so.
	jobs, next, err := s.ListJobs(ctx, spi.ListParams{After: all[3].ID, Limit: 3})
	require.NoError(t, err)
	assert.Equal(t, ids(all[4:]), ids(jobs))
	assert.Equal(t, uuid.Nil, next)

	jobs, next, err = s.ListJobs(ctx, spi.ListParams{Status: spi.StatusPending, Limit: 2})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{all[1].ID, all[3].ID}, ids(jobs))
	assert.Equal(t, all[3].ID, next)
	jobs, next, err = s.ListJobs(ctx, spi.ListParams{Status: spi.StatusPending, Limit: 2, After: next})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{all[5].ID}, ids(jobs))
	assert.Equal(t, uuid.Nil, next)

	jobs, _, err = s.ListJobs(ctx, spi.ListParams{Status: spi.StatusRunning})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{all[0].ID, all[2].ID, all[4].ID, all[6].ID}, ids(jobs))
	for _, j := range jobs {
		assert.Equal(t, "n", j.OwnerNode)
	}

	jobs, next, err = s.ListJobs(ctx, spi.ListParams{Status: spi.StatusFailed})
	require.NoError(t, err)
	assert.Empty(t, jobs)
	assert.Equal(t, uuid.Nil, next)
}

func TestListJobsDefaultLimit(t *testing.T) {
	s := openStore(t)
	jobs := make([]*spi.Job, 150)
	for i := range jobs {
		jobs[i] = job(spi.PriorityNormal, t0)
	}
	insert(t, s, jobs...)
	page, next, err := s.ListJobs(context.Background(), spi.ListParams{})
	require.NoError(t, err)
	assert.Len(t, page, 100)
	assert.Equal(t, jobs[99].ID, next)
}

func TestInsertJobsTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	committed, rolledBack := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)

	tx, err := s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	res, err := s.InsertJobsTx(ctx, tx, []*spi.Job{committed})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: committed.ID}}, res)
	require.NoError(t, tx.Commit())

	tx, err = s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = s.InsertJobsTx(ctx, tx, []*spi.Job{rolledBack})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())

	get(t, s, committed.ID)
	_, err = s.GetJob(ctx, rolledBack.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound)
	_, err = s.InsertJobsTx(ctx, nil, []*spi.Job{rolledBack})
	assert.Error(t, err)
}

func TestCorruptRows(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		corrupt func(t *testing.T, s *Store, j *spi.Job) string // returns the id to look for
		problem string
	}{
		{"unknown status", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET status = 'EXPLODED' WHERE job_id = ?`, j.ID.String())
			return j.ID.String()
		}, `unknown status "EXPLODED"`},
		{"bad params", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET params = '{"a": 1' WHERE job_id = ?`, j.ID.String())
			return j.ID.String()
		}, "params"},
		{"params not strings", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET params = '{"a": 1}' WHERE job_id = ?`, j.ID.String())
			return j.ID.String()
		}, "params"},
		{"priority", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET priority = 9 WHERE job_id = ?`, j.ID.String())
			return j.ID.String()
		}, "priority 9"},
		{"unreadable column", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET attempts = 'many' WHERE job_id = ?`, j.ID.String())
			return j.ID.String()
		}, "unreadable column"},
		{"invalid uuid", func(t *testing.T, s *Store, j *spi.Job) string {
			exec(t, s, `UPDATE scheduler_job SET job_id = 'not-a-uuid' WHERE job_id = ?`, j.ID.String())
			return "not-a-uuid"
		}, "not a canonical UUID"},
		{"upper-case uuid", func(t *testing.T, s *Store, j *spi.Job) string {
			up := "F" + j.ID.String()[1:]
			exec(t, s, `UPDATE scheduler_job SET job_id = ? WHERE job_id = ?`, up, j.ID.String())
			return up
		}, "not a canonical UUID"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t)
			j := job(spi.PriorityNormal, t0)
			insert(t, s, j)
			id := tc.corrupt(t, s, j)

			if id == j.ID.String() {
				_, err := s.GetJob(ctx, j.ID)
				require.ErrorIs(t, err, spi.ErrCorruptJob)
				assert.Contains(t, err.Error(), id)
				assert.Contains(t, err.Error(), tc.problem)
			}
			_, _, err := s.ListJobs(ctx, spi.ListParams{})
			require.ErrorIs(t, err, spi.ErrCorruptJob)
			assert.Contains(t, err.Error(), id)
			assert.Contains(t, err.Error(), tc.problem)
		})
	}
}
