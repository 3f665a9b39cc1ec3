package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// batchSizes exercise one statement and several (rowsPerInsert rows each).
var batchSizes = []int{1, 7, rowsPerInsert + 13}

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
	j.Resource, j.ResourceLimit = "gpu-pool", 3
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

func TestInsertTruncatesTimesToMicroseconds(t *testing.T) {
	// DATETIME(6) would round 999 ns up; the store truncates, as the other
	// stores do.
	s := openStore(t)
	j := job(spi.PriorityNormal, t0.Add(999*time.Nanosecond))
	j.CreatedAt = t0.Add(-time.Nanosecond)
	insert(t, s, j)
	got := get(t, s, j.ID)
	assert.Equal(t, t0, got.ScheduledAt)
	assert.Equal(t, t0.Add(-time.Microsecond), got.CreatedAt)
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
		"nul inside": []byte("a\x00b'\\\""),
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

func TestInsertLargeBatchInSeveralStatements(t *testing.T) {
	// A small statement budget splits a batch of large payloads into many
	// INSERTs inside one transaction.
	s := openStore(t)
	s.budget = 64 << 10
	payload := []byte(strings.Repeat("x", 20<<10))
	var jobs []*spi.Job
	for range 30 {
		j := job(spi.PriorityNormal, t0)
		j.Payload = payload
		j.Tags = []string{"big"}
		jobs = append(jobs, j)
	}
	insert(t, s, jobs...)
	all, _, err := s.ListJobs(context.Background(), spi.ListParams{Limit: 100})
	require.NoError(t, err)
	require.Len(t, all, 30)
	for _, j := range all {
		assert.Equal(t, payload, j.Payload)
		assert.Equal(t, []string{"big"}, j.Tags)
	}
}

func TestInsertIdempotency(t *testing.T) {
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
				assert.Contains(t, err.Error(), "already exists")
			}
		})
	}
}

func TestKeysAndTagsCompareByteForByte(t *testing.T) {
	// Whatever the server's collation: no case folding, no trailing-space
	// padding, no accent folding.
	ctx := context.Background()
	s := openStore(t)
	keys := []string{"Key", "key", "key ", "kéy", "KEY"}
	var jobs []*spi.Job
	for _, k := range keys {
		j := job(spi.PriorityNormal, t0)
		j.IdempotencyKey = k
		j.Tags = []string{k}
		jobs = append(jobs, j)
	}
	res, err := s.InsertJobs(ctx, jobs, spi.InsertOptions{})
	require.NoError(t, err)
	for i, r := range res {
		assert.Equal(t, spi.InsertResult{ID: jobs[i].ID}, r, "key %q is its own", keys[i])
	}
	got, err := s.ClaimJobs(ctx, spi.ClaimParams{NodeID: "n", Limit: 10, Now: t0, Tags: spi.TagFilter{All: []string{"key"}}})
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{jobs[1].ID}, ids(got), "the tag filter matches the exact tag only")
	require.NoError(t, s.PutProperty(ctx, jobs[0].ID, "p", "Value"))
	found, err := s.FindJobsByProperty(ctx, "p", "value", 10)
	require.NoError(t, err)
	assert.Empty(t, found)
	props, err := s.GetPropertiesByPrefix(ctx, jobs[0].ID, "P")
	require.NoError(t, err)
	assert.Empty(t, props)
}

func TestInsertRefusesValuesThatDoNotFit(t *testing.T) {
	// Strict mode: a key longer than its column fails instead of being
	// truncated into another job's key.
	ctx := context.Background()
	s := openStore(t)
	a := job(spi.PriorityNormal, t0)
	a.IdempotencyKey = strings.Repeat("k", 300)
	_, err := s.InsertJobs(ctx, []*spi.Job{a}, spi.InsertOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mysql: insert jobs")
	assert.Contains(t, err.Error(), "idempotency_key")
	_, err = s.GetJob(ctx, a.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound)
}

func TestInsertIsAtomic(t *testing.T) {
	// A batch with an id that already exists fails as a whole and writes
	// nothing, also when earlier statements of the batch went in.
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
	s := openStore(t)
	var jobs []*spi.Job
	for range 3 {
		j := job(spi.PriorityNormal, t0)
		j.Tags = []string{"z", "a", "z", "m", "a", "a,b", ""}
		jobs = append(jobs, j)
	}
	insert(t, s, jobs...)
	assert.Equal(t, []string{"", "a", "a,b", "m", "z"}, get(t, s, jobs[0].ID).Tags)
	// Jobs without tags have none (nil).
	j := job(spi.PriorityNormal, t0)
	insert(t, s, j)
	assert.Nil(t, get(t, s, j.ID).Tags)
}

func TestInsertJobsTx(t *testing.T) {
	ctx := context.Background()
	s := openStore(t)

	// Rolled back: nothing exists, and the key is free again.
	tx, err := s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	a := job(spi.PriorityNormal, t0)
	a.IdempotencyKey = "tx-key"
	a.Tags = []string{"t"}
	res, err := s.InsertJobsTx(ctx, tx, []*spi.Job{a}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: a.ID}}, res)
	// Visible inside the transaction only.
	var n int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM scheduler_job WHERE job_id = ?`, a.ID[:]).Scan(&n))
	assert.Equal(t, 1, n)
	_, err = s.GetJob(ctx, a.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound, "uncommitted jobs are invisible to others")
	assert.Empty(t, claim(t, s, "n", 10, t0, 0), "and cannot be claimed")
	require.NoError(t, tx.Rollback())
	_, err = s.GetJob(ctx, a.ID)
	assert.ErrorIs(t, err, spi.ErrNotFound)

	// Committed: the jobs exist, with their tags, and are claimable.
	tx, err = s.DB().BeginTx(ctx, nil)
	require.NoError(t, err)
	b := job(spi.PriorityHigh, t0)
	b.IdempotencyKey = "tx-key"
	b.Tags = []string{"t"}
	c := job(spi.PriorityLow, t0)
	res, err = s.InsertJobsTx(ctx, tx, []*spi.Job{b, c}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: b.ID}, {ID: c.ID}}, res)
	dup := job(spi.PriorityLow, t0)
	dup.IdempotencyKey = "tx-key"
	res, err = s.InsertJobsTx(ctx, tx, []*spi.Job{dup}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: b.ID, Duplicate: true}}, res, "a key inserted earlier in the same transaction")
	require.NoError(t, tx.Commit())
	assert.Equal(t, []string{"t"}, get(t, s, b.ID).Tags)
	assert.Equal(t, []uuid.UUID{b.ID, c.ID}, ids(claim(t, s, "n", 10, t0, 0)))

	// A transaction of another kind, or none.
	_, err = s.InsertJobsTx(ctx, "not a tx", []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "*sql.Tx")
	var nilTx *sql.Tx
	_, err = s.InsertJobsTx(ctx, nilTx, nil, spi.InsertOptions{})
	require.Error(t, err)
}

func TestInsertJobsTxOnAnotherPool(t *testing.T) {
	// The statements name the store's database, so a transaction on a pool
	// whose connections use another current database works too.
	ctx := context.Background()
	dsn, database := testDB(t)
	_, other := testDB(t)
	s := openDatabase(t, dsn, database)
	db := rawDB(t, dsn, other)
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	j := job(spi.PriorityNormal, t0)
	_, err = s.InsertJobsTx(ctx, tx, []*spi.Job{j}, spi.InsertOptions{})
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	assert.Equal(t, j.ID, get(t, s, j.ID).ID)
}
