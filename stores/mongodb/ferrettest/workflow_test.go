package ferrettest_test

import (
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/mongodb"
)

func bid(id uuid.UUID) bson.Binary { return bson.Binary{Subtype: bson.TypeBinaryUUID, Data: id[:]} }

// workflow returns the jobs of one workflow: roots without dependencies, then
// each child of edges[i] depending on the jobs it names.
func workflow(roots int, edges ...[]int) []*spi.Job {
	wf := uuid.Must(uuid.NewV7())
	var jobs []*spi.Job
	for range roots {
		jobs = append(jobs, newJob(func(j *spi.Job) { j.WorkflowID = wf }))
	}
	for _, parents := range edges {
		c := newJob(func(j *spi.Job) { j.WorkflowID = wf })
		for _, p := range parents {
			c.Dependencies = append(c.Dependencies, spi.Dependency{ParentID: jobs[p].ID})
			jobs[p].Dependents++
		}
		jobs = append(jobs, c)
	}
	return jobs
}

// TestWorkflowCrashWindowsRepaired plants, directly in the collections,
// each state that a crash between two of the MongoDB store's
// single-document workflow writes leaves behind (workflow.go), and shows
// that RepairWorkflows finishes or undoes it: nothing stays BLOCKED behind
// finished parents, nothing of an uncommitted insert survives, nothing
// runs early.
func TestWorkflowCrashWindowsRepaired(t *testing.T) {
	srv := startFerret(t)
	now := base.Add(time.Hour)
	status := func(t *testing.T, s *mongodb.Store, j *spi.Job) spi.Status {
		t.Helper()
		g, err := s.GetJob(t.Context(), j.ID)
		require.NoError(t, err)
		return g.Status
	}
	finishRaw := func(t *testing.T, s *mongodb.Store, j *spi.Job, st spi.Status) {
		t.Helper()
		_, err := s.Jobs().UpdateOne(t.Context(), bson.M{"_id": bid(j.ID)},
			bson.M{"$set": bson.M{"status": string(st), "finished_time": now.UnixMicro()}})
		require.NoError(t, err)
	}
	repair := func(t *testing.T, s *mongodb.Store, at time.Time) int {
		t.Helper()
		n, err := s.RepairWorkflows(t.Context(), at, 100)
		require.NoError(t, err)
		return n
	}

	t.Run("ParentFinishedChildrenNotTold", func(t *testing.T) {
		s := openStore(t, srv)
		jobs := workflow(1, []int{0}, []int{0}, []int{1, 2})
		_, err := s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
		require.NoError(t, err)
		finishRaw(t, s, jobs[0], spi.StatusSucceeded) // the parent's write, then the crash
		assert.Equal(t, spi.StatusBlocked, status(t, s, jobs[1]))
		assert.Equal(t, 2, repair(t, s, now), "the two children of the finished root are released")
		for _, k := range jobs[1:3] {
			assert.Equal(t, spi.StatusPending, status(t, s, k))
			ds, err := s.Dependencies(t.Context(), k.ID)
			require.NoError(t, err)
			assert.Equal(t, spi.StatusSucceeded, ds[0].ParentStatus, "the repair records the parent's state")
		}
		assert.Equal(t, spi.StatusBlocked, status(t, s, jobs[3]), "the join still waits for its unfinished parents")
		assert.Zero(t, repair(t, s, now), "nothing is left to repair")
	})

	t.Run("RecordedNotReleased", func(t *testing.T) {
		s := openStore(t, srv)
		jobs := workflow(1, []int{0})
		_, err := s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
		require.NoError(t, err)
		finishRaw(t, s, jobs[0], spi.StatusFailed)
		_, err = s.Jobs().UpdateOne(t.Context(), bson.M{"_id": bid(jobs[1].ID)},
			bson.M{"$set": bson.M{"dps." + uuidHex(jobs[0].ID): "FAILED"}})
		require.NoError(t, err)
		g, err := s.GetJob(t.Context(), jobs[1].ID)
		require.NoError(t, err)
		assert.Equal(t, []any{spi.StatusBlocked, 0}, []any{g.Status, g.Waiting}, "recorded, waiting for nothing, not released")
		assert.Equal(t, 1, repair(t, s, now))
		assert.Equal(t, spi.StatusPending, status(t, s, jobs[1]))
	})

	// stage puts the jobs of an inserted workflow back into the state of
	// an insert whose commit (or activation) has not happened.
	stage := func(t *testing.T, s *mongodb.Store, jobs []*spi.Job, committed bool) {
		t.Helper()
		wf := bid(jobs[0].WorkflowID)
		_, err := s.Jobs().UpdateMany(t.Context(), bson.M{"workflow_id": wf},
			bson.M{"$set": bson.M{"status": "BLOCKED", "stg": base.UnixMicro()}})
		require.NoError(t, err)
		flows := s.Database().Collection(mongodb.DefaultCollectionPrefix + "workflows")
		_, err = flows.DeleteOne(t.Context(), bson.M{"_id": wf})
		require.NoError(t, err)
		if committed {
			_, err = flows.InsertOne(t.Context(), bson.M{"_id": wf})
			require.NoError(t, err)
		}
	}

	t.Run("InsertNeverCommitted", func(t *testing.T) {
		s := openStore(t, srv)
		jobs := workflow(2, []int{0, 1})
		_, err := s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
		require.NoError(t, err)
		stage(t, s, jobs, false)
		got, err := s.ClaimJobs(t.Context(), spi.ClaimParams{NodeID: "n", Limit: 10, Now: now})
		require.NoError(t, err)
		assert.Empty(t, got, "no job of an uncommitted insert is claimed")
		assert.Zero(t, repair(t, s, base.Add(time.Minute)), "a young insert may still be committing: left alone")
		assert.Equal(t, spi.StatusBlocked, status(t, s, jobs[0]))
		repair(t, s, base.Add(time.Hour))
		for _, j := range jobs {
			_, err := s.GetJob(t.Context(), j.ID)
			assert.ErrorIs(t, err, spi.ErrNotFound, "the jobs of an insert that never committed are deleted")
		}
		var mark bson.M
		require.NoError(t, s.Database().Collection(mongodb.DefaultCollectionPrefix+"workflows").
			FindOne(t.Context(), bson.M{"_id": bid(jobs[0].WorkflowID)}).Decode(&mark), "an abort mark is left")
		assert.Equal(t, true, mark["aborted"])
		_, err = s.InsertJobs(t.Context(), workflowWithID(jobs[0].WorkflowID), spi.InsertOptions{})
		assert.ErrorContains(t, err, "aborted", "a commit after the abort fails")
	})

	t.Run("CommittedNotActivated", func(t *testing.T) {
		s := openStore(t, srv)
		jobs := workflow(2, []int{0, 1})
		_, err := s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
		require.NoError(t, err)
		stage(t, s, jobs, true)
		assert.Equal(t, 2, repair(t, s, base.Add(time.Minute)), "the two roots of the committed insert are activated")
		assert.Equal(t, spi.StatusPending, status(t, s, jobs[0]))
		assert.Equal(t, spi.StatusPending, status(t, s, jobs[1]))
		assert.Equal(t, spi.StatusBlocked, status(t, s, jobs[2]))
		n, err := s.Jobs().CountDocuments(t.Context(), bson.M{"stg": bson.M{"$exists": true}})
		require.NoError(t, err)
		assert.Zero(t, n, "no staging mark is left")
		assert.Zero(t, repair(t, s, base.Add(time.Hour)))
	})

	t.Run("ReviveCutShort", func(t *testing.T) {
		s := openStore(t, srv)
		jobs := workflow(1, []int{0})
		_, err := s.InsertJobs(t.Context(), jobs, spi.InsertOptions{})
		require.NoError(t, err)
		// The parent failed; a DLQ retry made the child wait again, then
		// died before writing the parent itself.
		finishRaw(t, s, jobs[0], spi.StatusFailed)
		_, err = s.Jobs().UpdateOne(t.Context(), bson.M{"_id": bid(jobs[1].ID)},
			bson.M{"$set": bson.M{"revived": now.UnixMicro()}})
		require.NoError(t, err)
		assert.Zero(t, repair(t, s, now.Add(10*time.Second)), "a job revived moments ago may have a retry in flight: left alone")
		assert.Equal(t, 1, repair(t, s, now.Add(time.Minute)), "then released behind its FAILED parent")
		ds, err := s.Dependencies(t.Context(), jobs[1].ID)
		require.NoError(t, err)
		assert.Equal(t, spi.StatusFailed, ds[0].ParentStatus)
	})
}

// workflowWithID is a one-job workflow with the given id.
func workflowWithID(wf uuid.UUID) []*spi.Job {
	return []*spi.Job{newJob(func(j *spi.Job) { j.WorkflowID = wf })}
}
