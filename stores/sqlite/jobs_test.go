package sqlite

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
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
	res, err := s.InsertJobs(ctx, []*spi.Job{again, fresh, sameBatch, noKey}, spi.InsertOptions{})
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

	res, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{})
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

func TestInsertJobsTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)
	committed, rolledBack := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)

	tx, err := s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	res, err := s.InsertJobsTx(ctx, tx, []*spi.Job{committed}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: committed.ID}}, res)
	require.NoError(t, tx.Commit())

	tx, err = s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = s.InsertJobsTx(ctx, tx, []*spi.Job{rolledBack}, spi.InsertOptions{})
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())

	get(t, s, committed.ID)
	_, err = s.GetJob(ctx, rolledBack.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound)
	_, err = s.InsertJobsTx(ctx, nil, []*spi.Job{rolledBack}, spi.InsertOptions{})
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
