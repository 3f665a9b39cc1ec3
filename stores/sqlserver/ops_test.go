package sqlserver

import (
	"bytes"
	"context"
	"database/sql/driver"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	mssql "github.com/microsoft/go-mssqldb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestEveryOperationAgainstTheFake runs each store method once against a
// fake that answers plausibly, and checks the statements it sends: their
// order, that each transaction commits, and (through fakeDB) that each
// names exactly the parameters it is given.
func TestEveryOperationAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	j := job(spi.PriorityNormal, t0)
	j.Tags, j.IdempotencyKey = []string{"a", "b", "a"}, "k"
	answer := map[string]fakeResult{}
	failing := map[string]error{} // statements that fail, by prefix
	f := &fakeDB{}
	f.Handler = func(q string, _ []driver.NamedValue) (fakeResult, error) {
		for prefix, err := range failing {
			if strings.HasPrefix(q, prefix) {
				return fakeResult{}, err
			}
		}
		for prefix, r := range answer {
			if strings.HasPrefix(q, prefix) {
				return r, nil
			}
		}
		return fakeResult{Affected: 1}, nil
	}
	s := fakeStore(t, f, Options{})
	one := func(cols []string, row ...driver.Value) fakeResult {
		return fakeResult{Sets: []fakeSet{{Cols: cols, Rows: [][]driver.Value{row}}}}
	}
	for _, c := range []struct {
		name string
		run  func() error
		want []string
	}{
		{"InsertJobs", func() error {
			res, err := s.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{})
			if err == nil {
				assert.Equal(t, []spi.InsertResult{{ID: j.ID}}, res)
			}
			return err
		}, []string{"BEGIN", "SELECT idempotency_key, job_id FROM scheduler_job WITH (UPDLOCK, HOLDLOCK) WHERE idempotency_key IN (@p1)", "INSERT INTO scheduler_job (job_id, task_name, payload, status, priority, scheduled_time, created_time,", "INSERT INTO scheduler_job_tag (job_id, tag) VALUES (@p1, @p2), (@p3, @p4)", "COMMIT"}},
		{"GetJob", func() error {
			answer["SELECT j.job_id"] = fakeResult{Sets: []fakeSet{jobSet(j)}}
			defer delete(answer, "SELECT j.job_id")
			got, err := s.GetJob(ctx, j.ID)
			if err == nil {
				assert.Equal(t, j.ID, got.ID)
			}
			return err
		}, []string{"SELECT j.job_id, j.task_name, j.payload, CASE WHEN j.payload IS NULL THEN 1 ELSE 0 END, j.status, j.priority, j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us, j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error, j.job_result, CASE WHEN j.job_result IS NULL THEN 1 ELSE 0 END, j.result_type, j.idempotency_key, j.params, j.resource_name, j.resource_limit, j.workflow_id, j.dep_count, j.dep_waiting, j.dep_children, j.trace_context, j.snoozes, (SELECT t.tag AS t FROM scheduler_job_tag t WHERE t.job_id = j.job_id FOR JSON PATH)", "SELECT job_id, name, signal_key, deadline, outcome, payload,"}},
		{"ListJobs", func() error {
			_, _, err := s.ListJobs(ctx, spi.ListParams{Status: spi.StatusFailed, Limit: 10})
			return err
		}, []string{"SELECT TOP (@p1) j.job_id, j.task_name, j.payload, CASE WHEN j.payload IS NULL THEN 1 ELSE 0 END, j.status, j.priority, j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us, j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error, j.job_result, CASE WHEN j.job_result IS NULL THEN 1 ELSE 0 END, j.result_type, j.idempotency_key, j.params, j.resource_name, j.resource_limit, j.workflow_id, j.dep_count, j.dep_waiting, j.dep_children, j.trace_context, j.snoozes, (SELECT t.tag AS t FROM scheduler_job_tag t WHERE t.job_id = j.job_id FOR JSON PATH)"}},
		{"ReleaseJobs", func() error {
			answer["SELECT job_id, claim_seq"] = one([]string{"job_id", "claim_seq"}, j.ID[:], int64(1))
			defer delete(answer, "SELECT job_id, claim_seq")
			got, err := s.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: j.ID, ClaimSeq: 1}, {JobID: j.ID, ClaimSeq: 1}}, t0)
			assert.Equal(t, []bool{true, false}, got, "the first ref of a claim only")
			return err
		}, []string{"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job WITH (UPDLOCK, ROWLOCK)", "SELECT claim_seq, job_id, owner_node, claimed_time FROM scheduler_job WITH (UPDLOCK, ROWLOCK)", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1, owner_node = NULL, claim_seq = claim_seq + 1", "COMMIT"}},
		{"RetryFailedJob", func() error { return s.RetryFailedJob(ctx, j.ID, t0) },
			[]string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = @p1, crash_count = @p2, snoozes = @p3, scheduled_time = @p4, finished_time = NULL, owner_node = NULL", "SELECT d.child_id, c.status, c.last_error FROM scheduler_job_dep d JOIN scheduler_job c ON c.job_id = d.child_id", "COMMIT"}},
		{"CancelJob", func() error { return s.CancelJob(ctx, j.ID, t0) },
			[]string{"BEGIN", "UPDATE scheduler_job SET status = 'CANCELLED', finished_time = @p1", "SELECT parent_id FROM scheduler_job_dep WHERE child_id = @p1 AND parent_status IS NULL AND allow_mask >= @p2", "UPDATE scheduler_job_signal SET outcome = 'CANCELLED', resolved_at = @p1 WHERE job_id = @p2 AND outcome IS NULL", "SELECT job_id FROM scheduler_job WHERE dep_children > 0 AND job_id IN (@p1)", "COMMIT"}},
		{"DeliverSignal", func() error {
			answer["SELECT j.task_name, j.priority, g.name"] = one([]string{"task_name", "priority", "name"}, "t", int64(2), []byte("approve"))
			defer delete(answer, "SELECT j.task_name, j.priority, g.name")
			r, err := s.DeliverSignal(ctx, j.ID, "approve", []byte(`{}`), t0)
			assert.Equal(t, spi.ResolvedSignal{JobID: j.ID, TaskName: "t", Name: "approve"}, r)
			return err
		}, []string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1", "UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = @p1, resolved_at = @p2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = @p1", "COMMIT"}},
		{"DeliverSignalRefused", func() error {
			answer["UPDATE scheduler_job SET status = 'PENDING'"] = fakeResult{Affected: 0}
			answer["SELECT j.status, g.name"] = one([]string{"status", "name", "outcome", "payload", "resolved_at"}, "WAITING", []byte("approve"), nil, nil, nil)
			defer delete(answer, "UPDATE scheduler_job SET status = 'PENDING'")
			defer delete(answer, "SELECT j.status, g.name")
			_, err := s.DeliverSignal(ctx, j.ID, "reject", nil, t0)
			assert.ErrorIs(t, err, spi.ErrInvalidState)
			assert.ErrorContains(t, err, `waits for signal "approve", not "reject"`)
			return nil
		}, []string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1", "SELECT j.status, g.name, g.outcome, g.payload, g.resolved_at FROM scheduler_job j", "ROLLBACK"}},
		{"DeliverSignalByKey", func() error {
			answer["SELECT TOP (@p1) job_id FROM scheduler_job_signal"] = one([]string{"job_id"}, j.ID[:])
			answer["SELECT j.task_name, j.priority, g.name"] = one([]string{"task_name", "priority", "name"}, "t", int64(2), []byte("paid"))
			defer delete(answer, "SELECT TOP (@p1) job_id FROM scheduler_job_signal")
			defer delete(answer, "SELECT j.task_name, j.priority, g.name")
			rs, err := s.DeliverSignalByKey(ctx, "order-1", "paid", []byte(`{}`), t0, 1)
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: "t", Name: "paid"}}, rs)
			return err
		}, []string{"SELECT TOP (@p1) job_id FROM scheduler_job_signal WHERE signal_key = @p2 AND name = @p3 AND outcome IS NULL ORDER BY job_id", "BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1", "UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = @p1, resolved_at = @p2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = @p1", "COMMIT"}},
		{"ExpireSignals", func() error {
			answer["SELECT TOP (@p1) job_id FROM scheduler_job_signal"] = one([]string{"job_id"}, j.ID[:])
			answer["SELECT j.task_name, j.priority, g.name"] = one([]string{"task_name", "priority", "name"}, "t", int64(2), []byte("s"))
			defer delete(answer, "SELECT TOP (@p1) job_id FROM scheduler_job_signal")
			defer delete(answer, "SELECT j.task_name, j.priority, g.name")
			rs, err := s.ExpireSignals(ctx, t0, 1)
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: "t", Name: "s"}}, rs)
			return err
		}, []string{"SELECT TOP (@p1) job_id FROM scheduler_job_signal WHERE outcome IS NULL AND deadline IS NOT NULL AND deadline <= @p2 ORDER BY deadline, job_id", "BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1", "UPDATE scheduler_job_signal SET outcome = 'TIMED_OUT', payload = @p1, resolved_at = @p2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = @p1", "COMMIT"}},
		{"Heartbeat", func() error { return s.Heartbeat(ctx, "node-a", t0) },
			[]string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = @p1 WHERE node_id = @p2", "COMMIT"}},
		{"HeartbeatFirst", func() error {
			answer["UPDATE scheduler_node"] = fakeResult{Affected: 0}
			defer delete(answer, "UPDATE scheduler_node")
			return s.HeartbeatTasks(ctx, "node-a", []string{"t"}, t0)
		}, []string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = @p1, task_names = @p2 WHERE node_id = @p3", "INSERT INTO scheduler_node (node_id, heartbeat_ts, task_names) VALUES (@p1, @p2, @p3)", "COMMIT"}},
		{"HeartbeatReport", func() error {
			return s.HeartbeatReport(ctx, "node-a", []string{"t"}, spi.NodeReport{Version: "v1", Concurrency: 4}, t0)
		}, []string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = @p1, task_names = @p2, node_report = @p3 WHERE node_id = @p4", "COMMIT"}},
		{"DeregisterNode", func() error { return s.DeregisterNode(ctx, "node-a") },
			[]string{"BEGIN", "DELETE FROM scheduler_node WHERE node_id = @p1", "COMMIT"}},
		{"RecoverOrphans", func() error {
			// Two orphans: one below the crash budget (requeued), one at it
			// (buried): the decision is spi.CrashOutcome's.
			spent := newID()
			answer["SELECT j.job_id, j.task_name, j.owner_node, j.crash_count"] = fakeResult{Sets: []fakeSet{{
				Cols: []string{"job_id", "task_name", "owner_node", "crash_count", "priority"},
				Rows: [][]driver.Value{{j.ID[:], "t", []byte("node-b"), int64(0), int64(2)}, {spent[:], "t", []byte("x"), int64(3), int64(2)}},
			}}}
			defer delete(answer, "SELECT j.job_id, j.task_name, j.owner_node, j.crash_count")
			got, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3, Nodes: []string{"x", "y", "x"}, LastError: "crashed"})
			if err == nil {
				want := []spi.RecoveredJob{
					{JobID: j.ID, TaskName: "t", FromNode: "node-b", NewStatus: spi.StatusPending, CrashCount: 1},
					{JobID: spent, TaskName: "t", FromNode: "x", NewStatus: spi.StatusFailed, CrashCount: 3},
				}
				slices.SortFunc(want, func(a, b spi.RecoveredJob) int { return bytes.Compare(a.JobID[:], b.JobID[:]) })
				assert.Equal(t, want, got)
			}
			return err
		}, []string{"BEGIN", "SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority", "SELECT claim_seq, job_id, owner_node, claimed_time FROM scheduler_job WITH (UPDLOCK, ROWLOCK)",
			"UPDATE scheduler_job SET status = 'PENDING', scheduled_time = @p1, owner_node = NULL, claim_seq = claim_seq + 1, crash_count = crash_count + 1",
			"UPDATE scheduler_job SET status = 'FAILED', last_error = @p1, finished_time = @p2, owner_node = NULL, claim_seq = claim_seq + 1",
			"SELECT job_id FROM scheduler_job WHERE dep_children > 0 AND job_id IN (@p1)",
			"DELETE FROM scheduler_node WHERE heartbeat_ts < @p1 OR node_id IN (@p2, @p3)", "COMMIT"}},
		{"CheckClaims", func() error {
			answer["SELECT job_id, claim_seq"] = one([]string{"job_id", "claim_seq"}, j.ID[:], int64(1))
			defer delete(answer, "SELECT job_id, claim_seq")
			got, err := s.CheckClaims(ctx, []spi.ClaimRef{{JobID: j.ID, ClaimSeq: 1}, {JobID: newID(), ClaimSeq: 1}, {JobID: j.ID, ClaimSeq: 2}})
			if err == nil {
				assert.Equal(t, []bool{true, false, false}, got)
			}
			return err
		}, []string{"SELECT job_id, claim_seq FROM scheduler_job"}},
		{"TryAcquireLease", func() error {
			answer["SELECT owner FROM scheduler_lease"] = one([]string{"owner"}, []byte("me"))
			defer delete(answer, "SELECT owner FROM scheduler_lease")
			ok, err := s.TryAcquireLease(ctx, "singleton", "me", time.Minute, t0)
			assert.True(t, ok)
			return err
		}, []string{"BEGIN", "UPDATE scheduler_lease SET owner = @p1, expires_at = @p2 WHERE name = @p3 AND (owner = @p4 OR expires_at <= @p5)", "SELECT owner FROM scheduler_lease WHERE name = @p1", "COMMIT"}},
		{"TryAcquireLeaseHeld", func() error {
			answer["UPDATE scheduler_lease"] = fakeResult{Affected: 0}
			answer["SELECT owner FROM scheduler_lease"] = one([]string{"owner"}, []byte("other"))
			failing["INSERT INTO scheduler_lease"] = mssql.Error{Number: 2627, Message: "Violation of PRIMARY KEY constraint"}
			defer func() {
				delete(answer, "UPDATE scheduler_lease")
				delete(answer, "SELECT owner FROM scheduler_lease")
				delete(failing, "INSERT INTO scheduler_lease")
			}()
			ok, err := s.TryAcquireLease(ctx, "singleton", "me", time.Minute, t0)
			assert.False(t, ok, "another holds the lease: the insert's duplicate key is the answer")
			return err
		}, []string{"BEGIN", "UPDATE scheduler_lease SET owner = @p1, expires_at = @p2 WHERE name = @p3 AND (owner = @p4 OR expires_at <= @p5)", "INSERT INTO scheduler_lease (name, owner, expires_at) VALUES (@p1, @p2, @p3)", "SELECT owner FROM scheduler_lease WHERE name = @p1", "COMMIT"}},
		{"ReleaseLease", func() error { return s.ReleaseLease(ctx, "singleton", "me") },
			[]string{"BEGIN", "DELETE FROM scheduler_lease WHERE name = @p1 AND owner = @p2", "COMMIT"}},
		{"GetState", func() error {
			answer["SELECT s.state_json"] = one([]string{"state_json", "version"}, []byte(`{"n":1}`), int64(3))
			defer delete(answer, "SELECT s.state_json")
			st, ok, err := s.GetState(ctx, j.ID, "ns")
			assert.True(t, ok)
			assert.Equal(t, spi.VersionedState{JSON: []byte(`{"n":1}`), Version: 3}, st)
			return err
		}, []string{"SELECT s.state_json, s.version FROM scheduler_job j"}},
		{"InitState", func() error {
			answer["SELECT status, claim_seq"] = one([]string{"status", "claim_seq"}, "RUNNING", int64(4))
			defer delete(answer, "SELECT status, claim_seq")
			r, err := s.InitState(ctx, j.ID, "ns", []byte(`{}`), 4)
			assert.Equal(t, spi.StateUpdated, r)
			return err
		}, []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WITH (REPEATABLEREAD, ROWLOCK) WHERE job_id = @p1", "INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (@p1, @p2, @p3, 0)", "COMMIT"}},
		{"UpdateStateSuperseded", func() error {
			answer["SELECT status, claim_seq"] = one([]string{"status", "claim_seq"}, "RUNNING", int64(5))
			defer delete(answer, "SELECT status, claim_seq")
			r, err := s.UpdateState(ctx, j.ID, "ns", []byte(`{}`), 0, 4)
			assert.Equal(t, spi.StateSuperseded, r)
			return err
		}, []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WITH (REPEATABLEREAD, ROWLOCK) WHERE job_id = @p1", "COMMIT"}},
		{"UpdateStateUnfenced", func() error {
			answer["SELECT status, claim_seq"] = one([]string{"status", "claim_seq"}, "SUCCEEDED", int64(5))
			defer delete(answer, "SELECT status, claim_seq")
			r, err := s.UpdateStateUnfenced(ctx, j.ID, "ns", []byte(`{}`), 0)
			assert.Equal(t, spi.StateUpdated, r)
			return err
		}, []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WITH (REPEATABLEREAD, ROWLOCK) WHERE job_id = @p1", "UPDATE scheduler_job_state SET state_json = @p1, version = version + 1", "COMMIT"}},
		{"PutPropertyExisting", func() error {
			answer["INSERT INTO scheduler_job_property"] = fakeResult{Affected: 0}
			answer["SELECT p.prop_key, p.prop_value"] = one([]string{"k", "v"}, []byte("tenant"), []byte("acme"))
			defer delete(answer, "INSERT INTO scheduler_job_property")
			defer delete(answer, "SELECT p.prop_key, p.prop_value")
			err := s.PutProperty(ctx, j.ID, "tenant", "globex")
			assert.ErrorIs(t, err, spi.ErrPropertyExists)
			return nil
		}, []string{"BEGIN", "INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)", "SELECT p.prop_key, p.prop_value FROM scheduler_job j", "ROLLBACK"}},
		{"GetProperty", func() error {
			answer["SELECT p.prop_key"] = one([]string{"k", "v"}, []byte("k"), []byte("v"))
			defer delete(answer, "SELECT p.prop_key")
			v, ok, err := s.GetProperty(ctx, j.ID, "k")
			assert.True(t, ok)
			assert.Equal(t, "v", v)
			return err
		}, []string{"SELECT p.prop_key, p.prop_value FROM scheduler_job j"}},
		{"GetPropertiesByPrefix", func() error {
			answer["SELECT p.prop_key"] = one([]string{"k", "v"}, []byte("a.x"), []byte("1"))
			defer delete(answer, "SELECT p.prop_key")
			m, err := s.GetPropertiesByPrefix(ctx, j.ID, "a.")
			assert.Equal(t, map[string]string{"a.x": "1"}, m)
			return err
		}, []string{"SELECT p.prop_key, p.prop_value FROM scheduler_job j"}},
		{"FindJobsByProperty", func() error {
			answer["SELECT TOP (@p1) job_id"] = one([]string{"job_id"}, j.ID[:])
			defer delete(answer, "SELECT TOP (@p1) job_id")
			ids, err := s.FindJobsByProperty(ctx, "k", "v", 5)
			assert.Equal(t, []uuid.UUID{j.ID}, ids)
			return err
		}, []string{"SELECT TOP (@p1) job_id FROM scheduler_job_property WHERE prop_key = @p2 AND prop_value = @p3 ORDER BY job_id"}},
	} {
		f.Reset()
		require.NoError(t, c.run(), c.name)
		assert.Equal(t, c.want, f.Statements(), c.name)
	}
}

func TestInsertValidatesBeforeWriting(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	bad := job(spi.PriorityNormal, t0)
	bad.Resource, bad.ResourceLimit = "R", 0
	_, err := s.InsertJobs(context.Background(), []*spi.Job{job(spi.PriorityNormal, t0), bad}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "the limit must be at least 1")
	_, err = s.InsertJobs(context.Background(), []*spi.Job{{ID: uuid.Nil}}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "zero id")
	_, err = s.InsertJobs(context.Background(), []*spi.Job{nil}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "is nil")
	_, err = s.InsertJobsTx(context.Background(), "not a tx", []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "transaction of type string, the SQL Server store needs a *sql.Tx")
	assert.Empty(t, f.Statements())
}

func TestInsertDuplicateKeys(t *testing.T) {
	existing := newID()
	f := &fakeDB{}
	f.Handler = func(q string, _ []driver.NamedValue) (fakeResult, error) {
		if strings.HasPrefix(q, "SELECT idempotency_key") {
			return fakeResult{Sets: []fakeSet{{Cols: []string{"k", "id"}, Rows: [][]driver.Value{{[]byte("old"), existing[:]}}}}}, nil
		}
		return fakeResult{Affected: 1}, nil
	}
	s := fakeStore(t, f, Options{})
	a, b, c := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	a.IdempotencyKey, b.IdempotencyKey, c.IdempotencyKey = "old", "new", "new"
	res, err := s.InsertJobs(context.Background(), []*spi.Job{a, b, c}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: existing, Duplicate: true}, {ID: b.ID}, {ID: b.ID, Duplicate: true}}, res)
	assert.Equal(t, []string{"BEGIN", "SELECT idempotency_key, job_id FROM scheduler_job WITH (UPDLOCK, HOLDLOCK) WHERE idempotency_key IN (@p1, @p2)", "INSERT INTO scheduler_job (job_id, task_name, payload, status, priority, scheduled_time, created_time,", "COMMIT"}, f.Statements())
	assert.Len(t, f.Args[2], numInsertArgs, "only the new job is written")
}

func TestClosedStore(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "a second Close is harmless")
	_, err := s.GetJob(context.Background(), newID())
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.ClaimJobs(context.Background(), spi.ClaimParams{Limit: 1})
	assert.ErrorIs(t, err, spi.ErrClosed)
}

// TestInsertAfterALostCommit: the COMMIT of an insert reached the server
// but its answer was lost. The run again finds the batch's jobs written
// and reports them inserted, without writing them twice (which would fail
// on the primary key) or calling them duplicates.
func TestInsertAfterALostCommit(t *testing.T) {
	a, b := job(spi.PriorityNormal, t0), job(spi.PriorityNormal, t0)
	a.IdempotencyKey = "k"
	committed := false
	f := &fakeDB{Commits: []error{driver.ErrBadConn}}
	f.Handler = func(q string, _ []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "INSERT INTO scheduler_job ("):
			committed = true // the server applies it; the answer to COMMIT is lost
		case strings.HasPrefix(q, "SELECT idempotency_key") && committed:
			return fakeResult{Sets: []fakeSet{{Cols: []string{"k", "id"}, Rows: [][]driver.Value{{[]byte("k"), a.ID[:]}}}}}, nil
		case strings.HasPrefix(q, "SELECT j.job_id") && committed:
			return fakeResult{Sets: []fakeSet{jobSet(a, b)}}, nil
		}
		return fakeResult{Affected: 1}, nil
	}
	s := fakeStore(t, f, Options{})
	res, err := s.InsertJobs(context.Background(), []*spi.Job{a, b}, spi.InsertOptions{})
	require.NoError(t, err)
	assert.Equal(t, []spi.InsertResult{{ID: a.ID}, {ID: b.ID}}, res)
	assert.Equal(t, 1, strings.Count(strings.Join(f.Statements(), "\n"), "INSERT INTO scheduler_job ("), "written once")
}

// TestReleaseAfterALostCommit: a release whose COMMIT applied but whose
// answer was lost runs again, finds its job no longer RUNNING but showing
// exactly what it wrote, and reports it released.
func TestReleaseAfterALostCommit(t *testing.T) {
	j := job(spi.PriorityNormal, t0)
	j.Status, j.ClaimSeq, j.OwnerNode = spi.StatusRunning, 3, "n"
	released := false
	f := &fakeDB{Commits: []error{driver.ErrBadConn}}
	f.Handler = func(q string, _ []driver.NamedValue) (fakeResult, error) {
		switch {
		case strings.HasPrefix(q, "SELECT job_id, claim_seq") && !released:
			return fakeResult{Sets: []fakeSet{{Cols: []string{"job_id", "claim_seq"}, Rows: [][]driver.Value{{j.ID[:], int64(3)}}}}}, nil
		case strings.HasPrefix(q, "SELECT job_id, claim_seq"):
			return fakeResult{Sets: []fakeSet{{Cols: []string{"job_id", "claim_seq"}}}}, nil
		case strings.HasPrefix(q, "UPDATE scheduler_job SET status = 'PENDING'"):
			released = true
			back := *j
			back.Status, back.ClaimSeq, back.OwnerNode, back.ScheduledAt = spi.StatusPending, 4, "", t0
			j = &back
		case strings.HasPrefix(q, "SELECT j.job_id"):
			return fakeResult{Sets: []fakeSet{jobSet(j)}}, nil
		}
		return fakeResult{Affected: 1}, nil
	}
	s := fakeStore(t, f, Options{})
	got, err := s.ReleaseJobs(context.Background(), []spi.ClaimRef{{JobID: j.ID, ClaimSeq: 3}}, t0)
	require.NoError(t, err)
	assert.Equal(t, []bool{true}, got)
}
