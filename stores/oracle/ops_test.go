package oracle

import (
	"context"
	"database/sql/driver"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// TestEveryOperationAgainstTheFake runs each store method once against a
// fake that answers plausibly, and checks the statements it sends: their
// order, that each transaction commits, and (through fakeDB) that each
// binds exactly its placeholders, in order.
func TestEveryOperationAgainstTheFake(t *testing.T) {
	ctx := context.Background()
	j := job(spi.PriorityNormal, t0)
	j.Tags, j.IdempotencyKey, j.Payload = []string{"a", "b", "a"}, "k", []byte{}
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
	with := func(prefix string, r fakeResult, fn func() error) func() error {
		return func() error {
			answer[prefix] = r
			defer delete(answer, prefix)
			return fn()
		}
	}
	running := one([]string{"job_id", "claim_seq"}, j.ID[:], int64(1))
	for _, c := range []struct {
		name string
		run  func() error
		want []string
	}{
		{"InsertJobs", func() error {
			res, err := s.InsertJobs(ctx, []*spi.Job{j}, spi.InsertOptions{})
			assert.Equal(t, []spi.InsertResult{{ID: j.ID}}, res)
			return err
		}, []string{"BEGIN", "SELECT idempotency_key, job_id FROM scheduler_job WHERE idempotency_key IN (:1)",
			"INSERT INTO scheduler_job (job_id, task_name, payload, status, priority, scheduled_time, created_time,",
			"UPDATE scheduler_job SET payload = EMPTY_BLOB() WHERE job_id IN (:1)",
			"INSERT INTO scheduler_job_tag (job_id, tag) VALUES (:1, :2), (:3, :4)", "COMMIT"}},
		{"GetJob", with("SELECT j.job_id", fakeResult{Sets: []fakeSet{jobSet(j)}}, func() error {
			got, err := s.GetJob(ctx, j.ID)
			if err == nil {
				assert.Equal(t, j.ID, got.ID)
			}
			return err
		}), []string{"SELECT " + jobColumns, "SELECT job_id, name, signal_key, deadline, outcome, payload,"}},
		{"ListJobs", func() error {
			_, _, err := s.ListJobs(ctx, spi.ListParams{Status: spi.StatusFailed, Limit: 10})
			return err
		}, []string{"SELECT " + jobColumns}},
		{"ReleaseJobs", with("SELECT job_id, claim_seq", running, func() error {
			got, err := s.ReleaseJobs(ctx, []spi.ClaimRef{{JobID: j.ID, ClaimSeq: 1}, {JobID: j.ID, ClaimSeq: 2}}, t0)
			assert.Equal(t, []bool{true, false}, got)
			return err
		}), []string{"BEGIN", "SELECT job_id, claim_seq FROM scheduler_job", "SELECT claim_seq, job_id, owner_node, claimed_time FROM scheduler_job",
			"UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1, owner_node = NULL, claim_seq = claim_seq + 1", "COMMIT"}},
		{"RetryFailedJob", func() error { return s.RetryFailedJob(ctx, j.ID, t0) },
			[]string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', last_error = NULL, attempts = :1, crash_count = :2, snoozes = :3, scheduled_time = :4, finished_time = NULL, owner_node = NULL", "SELECT d.child_id, c.status, c.last_error FROM scheduler_job_dep d JOIN scheduler_job c ON c.job_id = d.child_id", "COMMIT"}},
		{"CancelJob", func() error { return s.CancelJob(ctx, j.ID, t0) },
			[]string{"BEGIN", "UPDATE scheduler_job SET status = 'CANCELLED', finished_time = :1", "SELECT parent_id FROM scheduler_job_dep WHERE child_id = :1 AND parent_status IS NULL AND allow_mask >= :2", "UPDATE scheduler_job_signal SET outcome = 'CANCELLED', resolved_at = :1 WHERE job_id = :2 AND outcome IS NULL", "SELECT job_id FROM scheduler_job WHERE dep_children > 0 AND job_id IN (:1)", "COMMIT"}},
		{"DeliverSignal", with("SELECT j.task_name, j.priority, g.name", one([]string{"task_name", "priority", "name"}, "t", int64(2), "approve"), func() error {
			r, err := s.DeliverSignal(ctx, j.ID, "approve", []byte(`{}`), t0)
			assert.Equal(t, spi.ResolvedSignal{JobID: j.ID, TaskName: "t", Name: "approve"}, r)
			return err
		}), []string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1", "UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = :1, resolved_at = :2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = :1", "COMMIT"}},
		{"DeliverSignalEmptyPayload", with("SELECT j.task_name, j.priority, g.name", one([]string{"task_name", "priority", "name"}, "t", int64(2), "approve"), func() error {
			_, err := s.DeliverSignal(ctx, j.ID, "approve", []byte{}, t0)
			return err
		}), []string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1", "UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = EMPTY_BLOB(), resolved_at = :1", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = :1", "COMMIT"}},
		{"DeliverSignalRefused", func() error {
			answer["UPDATE scheduler_job SET status = 'PENDING'"] = fakeResult{Affected: 0}
			answer["SELECT j.status, g.name"] = one([]string{"status", "name", "outcome", "payload", "resolved_at"}, "SUCCEEDED", nil, nil, nil, nil)
			defer delete(answer, "UPDATE scheduler_job SET status = 'PENDING'")
			defer delete(answer, "SELECT j.status, g.name")
			_, err := s.DeliverSignal(ctx, j.ID, "approve", nil, t0)
			assert.ErrorIs(t, err, spi.ErrInvalidState)
			assert.ErrorContains(t, err, "is SUCCEEDED, not WAITING")
			return nil
		}, []string{"BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1", "SELECT j.status, g.name, g.outcome, g.payload, g.resolved_at FROM scheduler_job j", "ROLLBACK"}},
		{"DeliverSignalByKey", func() error {
			answer["SELECT job_id FROM scheduler_job_signal"] = one([]string{"job_id"}, j.ID[:])
			answer["SELECT j.task_name, j.priority, g.name"] = one([]string{"task_name", "priority", "name"}, "t", int64(2), "paid")
			defer delete(answer, "SELECT job_id FROM scheduler_job_signal")
			defer delete(answer, "SELECT j.task_name, j.priority, g.name")
			rs, err := s.DeliverSignalByKey(ctx, "order-1", "paid", []byte(`{}`), t0, 1)
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: "t", Name: "paid"}}, rs)
			return err
		}, []string{"SELECT job_id FROM scheduler_job_signal WHERE signal_key = :1 AND name = :2 AND outcome IS NULL ORDER BY job_id FETCH FIRST :3 ROWS ONLY", "BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1", "UPDATE scheduler_job_signal SET outcome = 'DELIVERED', payload = :1, resolved_at = :2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = :1", "COMMIT"}},
		{"ExpireSignals", func() error {
			answer["SELECT job_id FROM scheduler_job_signal"] = one([]string{"job_id"}, j.ID[:])
			answer["SELECT j.task_name, j.priority, g.name"] = one([]string{"task_name", "priority", "name"}, "t", int64(2), "s")
			defer delete(answer, "SELECT job_id FROM scheduler_job_signal")
			defer delete(answer, "SELECT j.task_name, j.priority, g.name")
			rs, err := s.ExpireSignals(ctx, t0, 1)
			assert.Equal(t, []spi.ResolvedSignal{{JobID: j.ID, TaskName: "t", Name: "s"}}, rs)
			return err
		}, []string{"SELECT job_id FROM scheduler_job_signal WHERE outcome IS NULL AND deadline IS NOT NULL AND deadline <= :1 ORDER BY deadline, job_id FETCH FIRST :2 ROWS ONLY", "BEGIN", "UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1", "UPDATE scheduler_job_signal SET outcome = 'TIMED_OUT', payload = :1, resolved_at = :2", "SELECT j.task_name, j.priority, g.name FROM scheduler_job j JOIN scheduler_job_signal g ON g.job_id = j.job_id WHERE j.job_id = :1", "COMMIT"}},
		{"Heartbeat", func() error { return s.Heartbeat(ctx, "node-a", t0) },
			[]string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = :1 WHERE node_id = :2", "COMMIT"}},
		{"HeartbeatFirst", func() error {
			answer["UPDATE scheduler_node"] = fakeResult{Affected: 0}
			defer delete(answer, "UPDATE scheduler_node")
			return s.HeartbeatTasks(ctx, "node-a", []string{"t"}, t0)
		}, []string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = :1, task_names = :2 WHERE node_id = :3", "INSERT INTO scheduler_node (node_id, heartbeat_ts, task_names) VALUES (:1, :2, :3)", "COMMIT"}},
		{"HeartbeatReport", func() error {
			return s.HeartbeatReport(ctx, "node-a", []string{"t"}, spi.NodeReport{Version: "v1", Concurrency: 4}, t0)
		}, []string{"BEGIN", "UPDATE scheduler_node SET heartbeat_ts = :1, task_names = :2, node_report = :3 WHERE node_id = :4", "COMMIT"}},
		{"DeregisterNode", func() error { return s.DeregisterNode(ctx, "node-a") },
			[]string{"BEGIN", "DELETE FROM scheduler_node WHERE node_id = :1", "COMMIT"}},
		{"RecoverOrphans", with("SELECT j.job_id, j.task_name, j.owner_node, j.crash_count", fakeResult{Sets: []fakeSet{{
			Cols: []string{"job_id", "task_name", "owner_node", "crash_count", "priority"},
			Rows: [][]driver.Value{{j.ID[:], "t", "node-b", int64(0), int64(2)}, {uuid.Max[:], "u", "node-b", int64(3), int64(2)}},
		}}}, func() error {
			got, err := s.RecoverOrphans(ctx, spi.RecoverParams{Now: t0, Grace: time.Minute, MaxCrashRedeliveries: 3, Nodes: []string{"x", "y", "x"}, LastError: "crashed"})
			assert.Equal(t, []spi.RecoveredJob{
				{JobID: j.ID, TaskName: "t", FromNode: "node-b", NewStatus: spi.StatusPending, CrashCount: 1},
				{JobID: uuid.Max, TaskName: "u", FromNode: "node-b", NewStatus: spi.StatusFailed, CrashCount: 3},
			}, got)
			return err
		}), []string{"BEGIN", "SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority", "SELECT claim_seq, job_id, owner_node, claimed_time FROM scheduler_job",
			"UPDATE scheduler_job SET status = 'PENDING', scheduled_time = :1, owner_node = NULL, claim_seq = claim_seq + 1, crash_count = crash_count + 1",
			"UPDATE scheduler_job SET status = 'FAILED', last_error = :1, finished_time = :2, owner_node = NULL, claim_seq = claim_seq + 1",
			"SELECT job_id FROM scheduler_job WHERE dep_children > 0 AND job_id IN (:1)",
			"DELETE FROM scheduler_node WHERE heartbeat_ts < :1 OR node_id IN (:2, :3)", "COMMIT"}},
		{"CheckClaims", with("SELECT job_id, claim_seq", running, func() error {
			got, err := s.CheckClaims(ctx, []spi.ClaimRef{{JobID: j.ID, ClaimSeq: 1}, {JobID: j.ID, ClaimSeq: 0}, {JobID: newID(), ClaimSeq: 1}})
			assert.Equal(t, []bool{true, false, false}, got)
			return err
		}), []string{"SELECT job_id, claim_seq FROM scheduler_job"}},
		{"TryAcquireLease", with("SELECT owner", one([]string{"owner"}, "me"), func() error {
			ok, err := s.TryAcquireLease(ctx, "singleton", "me", time.Minute, t0)
			assert.True(t, ok)
			return err
		}), []string{"BEGIN", "UPDATE scheduler_lease SET owner = :1, expires_at = :2 WHERE name = :3 AND (owner = :4 OR expires_at <= :5)", "SELECT owner FROM scheduler_lease WHERE name = :1", "COMMIT"}},
		{"TryAcquireLeaseHeld", func() error {
			answer["UPDATE scheduler_lease"] = fakeResult{Affected: 0}
			answer["SELECT owner FROM scheduler_lease"] = one([]string{"owner"}, "other")
			failing["INSERT INTO scheduler_lease"] = oraErr(1, "unique constraint (RATCHET.SCHEDULER_LEASE_PK) violated")
			defer func() {
				delete(answer, "UPDATE scheduler_lease")
				delete(answer, "SELECT owner FROM scheduler_lease")
				delete(failing, "INSERT INTO scheduler_lease")
			}()
			ok, err := s.TryAcquireLease(ctx, "singleton", "me", time.Minute, t0)
			assert.False(t, ok, "another holds the lease: the insert's duplicate key is the answer")
			return err
		}, []string{"BEGIN", "UPDATE scheduler_lease SET owner = :1, expires_at = :2 WHERE name = :3 AND (owner = :4 OR expires_at <= :5)", "INSERT INTO scheduler_lease (name, owner, expires_at) VALUES (:1, :2, :3)", "SELECT owner FROM scheduler_lease WHERE name = :1", "COMMIT"}},
		{"ReleaseLease", func() error { return s.ReleaseLease(ctx, "singleton", "me") },
			[]string{"BEGIN", "DELETE FROM scheduler_lease WHERE name = :1 AND owner = :2", "COMMIT"}},
		{"GetState", with("SELECT s.state_json", one([]string{"state_json", "version"}, []byte(`{"n":1}`), int64(3)), func() error {
			st, ok, err := s.GetState(ctx, j.ID, "ns")
			assert.True(t, ok)
			assert.Equal(t, spi.VersionedState{JSON: []byte(`{"n":1}`), Version: 3}, st)
			return err
		}), []string{"SELECT s.state_json, s.version FROM scheduler_job j"}},
		{"InitState", with("SELECT status, claim_seq", one([]string{"status", "claim_seq"}, "RUNNING", int64(4)), func() error {
			r, err := s.InitState(ctx, j.ID, "ns", []byte(`{}`), 4)
			assert.Equal(t, spi.StateUpdated, r)
			return err
		}), []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WHERE job_id = :1 FOR UPDATE",
			"INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (:1, :2, :3, 0)", "COMMIT"}},
		{"InitStateExists", with("SELECT status, claim_seq", one([]string{"status", "claim_seq"}, "FAILED", int64(4)), func() error {
			answer["INSERT INTO scheduler_job_state"] = fakeResult{Affected: 0}
			defer delete(answer, "INSERT INTO scheduler_job_state")
			r, err := s.InitStateUnfenced(ctx, j.ID, "ns", []byte(`{}`))
			assert.Equal(t, spi.StateVersionConflict, r)
			return err
		}), []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WHERE job_id = :1 FOR UPDATE",
			"INSERT INTO scheduler_job_state (job_id, namespace, state_json, version) VALUES (:1, :2, :3, 0)", "COMMIT"}},
		{"UpdateStateSuperseded", with("SELECT status, claim_seq", one([]string{"status", "claim_seq"}, "RUNNING", int64(5)), func() error {
			r, err := s.UpdateState(ctx, j.ID, "ns", []byte(`{}`), 0, 4)
			assert.Equal(t, spi.StateSuperseded, r)
			return err
		}), []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WHERE job_id = :1 FOR UPDATE", "COMMIT"}},
		{"UpdateState", with("SELECT status, claim_seq", one([]string{"status", "claim_seq"}, "RUNNING", int64(4)), func() error {
			r, err := s.UpdateState(ctx, j.ID, "ns", []byte(`{}`), 0, 4)
			assert.Equal(t, spi.StateUpdated, r)
			return err
		}), []string{"BEGIN", "SELECT status, claim_seq FROM scheduler_job WHERE job_id = :1 FOR UPDATE",
			"UPDATE scheduler_job_state SET state_json = :1, version = version + 1", "COMMIT"}},
		{"PutPropertyExisting", with("SELECT p.prop_key", one([]string{"k", "v"}, "tenant", "acme"), func() error {
			answer["INSERT INTO scheduler_job_property"] = fakeResult{Affected: 0}
			defer delete(answer, "INSERT INTO scheduler_job_property")
			assert.ErrorIs(t, s.PutProperty(ctx, j.ID, "tenant", "globex"), spi.ErrPropertyExists)
			return s.PutProperty(ctx, j.ID, "tenant", "acme")
		}), []string{"BEGIN", "INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)", "SELECT p.prop_key, p.prop_value FROM scheduler_job j", "ROLLBACK",
			"BEGIN", "INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)", "SELECT p.prop_key, p.prop_value FROM scheduler_job j", "COMMIT"}},
		{"PutPropertyNew", func() error {
			return s.PutProperty(ctx, j.ID, "tenant", "")
		}, []string{"BEGIN", "INSERT INTO scheduler_job_property (job_id, prop_key, prop_value)", "COMMIT"}},
		{"GetPropertyEmptyValue", with("SELECT p.prop_key", one([]string{"k", "v"}, "k", nil), func() error {
			v, ok, err := s.GetProperty(ctx, j.ID, "k")
			assert.True(t, ok, "a key whose value is NULL (Oracle's empty string) is set")
			assert.Equal(t, "", v)
			return err
		}), []string{"SELECT p.prop_key, p.prop_value FROM scheduler_job j"}},
		{"GetPropertiesByPrefix", with("SELECT p.prop_key", one([]string{"k", "v"}, "a.x", "1"), func() error {
			m, err := s.GetPropertiesByPrefix(ctx, j.ID, "a.")
			assert.Equal(t, map[string]string{"a.x": "1"}, m)
			return err
		}), []string{"SELECT p.prop_key, p.prop_value FROM scheduler_job j"}},
		{"FindJobsByProperty", with("SELECT job_id FROM scheduler_job_property", one([]string{"job_id"}, j.ID[:]), func() error {
			ids, err := s.FindJobsByProperty(ctx, "k", "v", 5)
			assert.Equal(t, []uuid.UUID{j.ID}, ids)
			return err
		}), []string{"SELECT job_id FROM scheduler_job_property WHERE prop_key = :1 AND prop_value = :2 ORDER BY job_id FETCH FIRST :3 ROWS ONLY"}},
	} {
		f.Reset()
		require.NoError(t, c.run(), c.name)
		got := f.Statements()
		want := make([]string, len(c.want))
		for i, w := range c.want {
			want[i] = firstLine(w)
		}
		assert.Equal(t, want, got, c.name)
	}
}

func TestInsertValidatesBeforeWriting(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	bad := job(spi.PriorityNormal, t0)
	bad.Resource, bad.ResourceLimit = "R", 0
	_, err := s.InsertJobs(context.Background(), []*spi.Job{job(spi.PriorityNormal, t0), bad}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "the limit must be at least 1")
	empty := job(spi.PriorityNormal, t0)
	empty.Tags = []string{"a", ""}
	_, err = s.InsertJobs(context.Background(), []*spi.Job{empty}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "empty tag")
	_, err = s.InsertJobsTx(context.Background(), 42, []*spi.Job{job(spi.PriorityNormal, t0)}, spi.InsertOptions{})
	assert.ErrorContains(t, err, "transaction of type int, the Oracle store needs a *sql.Tx")
	_, err = s.InitStateUnfenced(context.Background(), newID(), "", nil)
	assert.ErrorContains(t, err, "empty namespace")
	assert.Empty(t, f.Statements())
}

func TestClosedStore(t *testing.T) {
	f := &fakeDB{}
	s := fakeStore(t, f, Options{})
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
	_, err := s.GetJob(context.Background(), newID())
	assert.ErrorIs(t, err, spi.ErrClosed)
	_, err = s.ClaimJobs(context.Background(), spi.ClaimParams{Limit: 1})
	assert.ErrorIs(t, err, spi.ErrClosed)
}
