package ferrettest_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mongodb"
)

// TestBatchCrashWindowsRepaired plants, directly in the collections, each
// state that a writer dying between two of the MongoDB store's batch writes
// leaves behind (batch.go), and shows that the store finishes or undoes
// it: a chunk staged but never committed is no child of its batch (not
// counted, not waited for, replaced by a retry of the same chunk, deleted
// at the end), a chunk committed but not activated is activated by the
// next reader, and a callback owed by an end is inserted by the next
// FinishBatches without the batch being reported again.
func TestBatchCrashWindowsRepaired(t *testing.T) {
	srv := startFerret(t)
	now := base.Add(time.Hour)
	batches := func(s *mongodb.Store) *mongo.Collection {
		return s.Database().Collection(s.CollectionPrefix() + "batches")
	}
	kids := func(b uuid.UUID, n int) []*spi.Job {
		out := make([]*spi.Job, n)
		for i := range out {
			out[i] = newJob(func(j *spi.Job) { j.WorkflowID = b })
		}
		return out
	}
	create := func(t *testing.T, s *mongodb.Store, b *spi.Batch, children []*spi.Job, seal bool) {
		t.Helper()
		n, err := s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: b.ID, Create: b, Children: children, Seal: seal})
		require.NoError(t, err)
		require.Equal(t, int64(len(children)), n)
	}
	// stageRaw writes children as a writer that died after staging them
	// leaves them: BLOCKED, staged, with their chunk's token.
	stageRaw := func(t *testing.T, s *mongodb.Store, children []*spi.Job) {
		t.Helper()
		for _, j := range children {
			_, err := s.Jobs().InsertOne(t.Context(), bson.M{"_id": bid(j.ID), "task_name": j.TaskName, "payload": bson.Binary{Data: j.Payload},
				"status": "BLOCKED", "priority": int32(j.Priority), "scheduled_time": j.ScheduledAt.UnixMicro(), "created_time": j.CreatedAt.UnixMicro(),
				"attempts": int64(0), "max_retries": int64(0), "backoff_param_us": int64(0), "claim_seq": int64(0), "crash_count": int64(0),
				"job_result": nil, "workflow_id": bid(j.WorkflowID), "stg": now.UnixMicro(), "bc": bid(children[0].ID)})
			require.NoError(t, err)
		}
	}
	// unactivate puts children of a committed chunk back in the state a
	// writer that died between its commit and its activation leaves.
	unactivate := func(t *testing.T, s *mongodb.Store, b uuid.UUID, children []*spi.Job) {
		t.Helper()
		token := bid(children[0].ID)
		for _, j := range children {
			_, err := s.Jobs().UpdateOne(t.Context(), bson.M{"_id": bid(j.ID)},
				bson.M{"$set": bson.M{"status": "BLOCKED", "stg": now.UnixMicro(), "bc": token}})
			require.NoError(t, err)
		}
		_, err := batches(s).UpdateOne(t.Context(), bson.M{"_id": bid(b)}, bson.M{"$set": bson.M{"act": token}})
		require.NoError(t, err)
	}
	finishRaw := func(t *testing.T, s *mongodb.Store, children []*spi.Job, st spi.Status) {
		t.Helper()
		for _, j := range children {
			_, err := s.Jobs().UpdateOne(t.Context(), bson.M{"_id": bid(j.ID)},
				bson.M{"$set": bson.M{"status": string(st), "finished_time": now.UnixMicro()}})
			require.NoError(t, err)
		}
	}
	status := func(t *testing.T, s *mongodb.Store, j *spi.Job) spi.Status {
		t.Helper()
		g, err := s.GetJob(t.Context(), j.ID)
		require.NoError(t, err)
		return g.Status
	}
	absent := func(t *testing.T, s *mongodb.Store, jobs []*spi.Job, msg string) {
		t.Helper()
		for _, j := range jobs {
			_, err := s.GetJob(t.Context(), j.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "%s: job %s", msg, j.ID)
		}
	}
	count := func(t *testing.T, s *mongodb.Store, b uuid.UUID) map[spi.Status]int {
		t.Helper()
		c, err := s.CountBatch(t.Context(), b)
		require.NoError(t, err)
		return c
	}
	finish := func(t *testing.T, s *mongodb.Store) []spi.FinishedBatch {
		t.Helper()
		out, err := s.FinishBatches(t.Context(), now, 10)
		require.NoError(t, err)
		return out
	}

	t.Run("DiedBeforeCommit", func(t *testing.T) {
		s := openStore(t, srv)
		b := &spi.Batch{ID: uuid.Must(uuid.NewV7()), Name: "before", CreatedAt: base}
		first := kids(b.ID, 2)
		create(t, s, b, first, false)
		dead := kids(b.ID, 3)
		stageRaw(t, s, dead)
		assert.Equal(t, map[spi.Status]int{spi.StatusPending: 2}, count(t, s, b.ID), "a staged chunk that never committed is not counted")

		n, err := s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: b.ID, Offset: 2, Children: dead})
		require.NoError(t, err, "the same chunk again replaces what its first try staged")
		assert.Equal(t, int64(5), n)
		for _, j := range dead {
			assert.Equal(t, spi.StatusPending, status(t, s, j))
		}
		assert.Equal(t, map[spi.Status]int{spi.StatusPending: 5}, count(t, s, b.ID))

		other := kids(b.ID, 2)
		stageRaw(t, s, other)
		_, err = s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: b.ID, Offset: 5, Seal: true})
		require.NoError(t, err)
		finishRaw(t, s, append(first, dead...), spi.StatusSucceeded)
		ended := finish(t, s)
		require.Len(t, ended, 1, "staged jobs of a chunk that never committed do not hold the batch open")
		assert.Equal(t, spi.BatchSucceeded, ended[0].Outcome)
		absent(t, s, other, "the end deletes what an uncommitted chunk staged")
		got, err := s.GetBatch(t.Context(), b.ID)
		require.NoError(t, err)
		assert.Equal(t, int64(5), got.Persisted)
	})

	t.Run("DiedAfterCommit", func(t *testing.T) {
		s := openStore(t, srv)
		open := &spi.Batch{ID: uuid.Must(uuid.NewV7()), Name: "open", CreatedAt: base}
		ok := kids(open.ID, 2)
		create(t, s, open, ok, false)
		more := kids(open.ID, 3)
		_, err := s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: open.ID, Offset: 2, Children: more})
		require.NoError(t, err)
		unactivate(t, s, open.ID, more)
		assert.Equal(t, spi.StatusBlocked, status(t, s, more[0]))
		assert.Empty(t, finish(t, s), "an open batch does not end")
		for _, j := range more {
			assert.Equal(t, spi.StatusPending, status(t, s, j), "FinishBatches activates a committed chunk left staged")
		}

		// The next chunk activates the one before it first.
		unactivate(t, s, open.ID, more)
		last := kids(open.ID, 1)
		_, err = s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: open.ID, Offset: 5, Children: last})
		require.NoError(t, err)
		for _, j := range append(more, last...) {
			assert.Equal(t, spi.StatusPending, status(t, s, j))
		}
		// And a count does.
		unactivate(t, s, open.ID, last)
		assert.Equal(t, map[spi.Status]int{spi.StatusPending: 6}, count(t, s, open.ID))

		// A sealed batch whose last chunk was left staged does not end
		// before those children ran.
		sealed := &spi.Batch{ID: uuid.Must(uuid.NewV7()), Name: "sealed", CreatedAt: base}
		sk := kids(sealed.ID, 2)
		create(t, s, sealed, sk, true)
		unactivate(t, s, sealed.ID, sk)
		assert.Empty(t, finish(t, s), "the sealed batch's children were activated, not taken for finished")
		assert.Equal(t, spi.StatusPending, status(t, s, sk[1]))

		// A cancel activates them before cancelling them.
		unactivate(t, s, sealed.ID, sk)
		n, err := s.CancelBatch(t.Context(), sealed.ID, now)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
		for _, j := range sk {
			assert.Equal(t, spi.StatusCancelled, status(t, s, j))
		}
	})

	t.Run("DiedAfterEnd", func(t *testing.T) {
		s := openStore(t, srv)
		cb := newJob(func(j *spi.Job) { j.TaskName = "cb" })
		b := &spi.Batch{ID: uuid.Must(uuid.NewV7()), CreatedAt: base, OnSuccess: cb}
		children := kids(b.ID, 2)
		create(t, s, b, children, true)
		finishRaw(t, s, children, spi.StatusSucceeded)
		// The finisher's end, then the crash before the callback's insert.
		_, err := batches(s).UpdateOne(t.Context(), bson.M{"_id": bid(b.ID)},
			bson.M{"$set": bson.M{"outcome": "SUCCEEDED", "finished": now.UnixMicro(), "callback_id": bid(cb.ID), "cbo": true}})
		require.NoError(t, err)
		absent(t, s, []*spi.Job{cb}, "before the repair")
		assert.Empty(t, finish(t, s), "an ended batch is not reported again")
		got, err := s.GetJob(t.Context(), cb.ID)
		require.NoError(t, err, "FinishBatches inserts the callback a dead finisher owed")
		assert.Equal(t, spi.StatusPending, got.Status)
		assert.True(t, got.CreatedAt.Equal(now), "created at the end")
		n, err := batches(s).CountDocuments(t.Context(), bson.M{"cbo": bson.M{"$exists": true}})
		require.NoError(t, err)
		assert.Zero(t, n, "the mark goes once the callback is in")
		assert.Empty(t, finish(t, s))
	})

	t.Run("CancelDropsUncommitted", func(t *testing.T) {
		s := openStore(t, srv)
		b := &spi.Batch{ID: uuid.Must(uuid.NewV7()), CreatedAt: base}
		create(t, s, b, kids(b.ID, 1), false)
		dead := kids(b.ID, 2)
		stageRaw(t, s, dead)
		n, err := s.CancelBatch(t.Context(), b.ID, now)
		require.NoError(t, err)
		assert.Equal(t, 1, n, "only the committed child is cancelled")
		absent(t, s, dead, "the cancel deletes what an uncommitted chunk staged")
		_, err = s.AddBatchChunk(t.Context(), spi.BatchChunk{BatchID: b.ID, Offset: 1, Children: kids(b.ID, 1)})
		assert.ErrorIs(t, err, spi.ErrInvalidState)
	})
}
