package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// Heartbeat registers nodeID or refreshes its heartbeat to now.
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	_, err = s.db.ExecContext(ctx, `INSERT INTO scheduler_node (node_id, heartbeat_ts) VALUES (?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts`, nodeID, micros(now))
	if err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// liveNodesSQL and pendingCountSQL are the reads of spi.NodeTaskStore.
var (
	liveNodesSQL    = sqlcore.LiveNodesSQL("scheduler_node", "?")
	pendingCountSQL = sqlcore.PendingTasksCountSQL("scheduler_job")
)

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO scheduler_node (node_id, heartbeat_ts, task_names) VALUES (?, ?, ?)
		ON CONFLICT (node_id) DO UPDATE SET heartbeat_ts = excluded.heartbeat_ts, task_names = excluded.task_names`,
		nodeID, micros(now), tasks)
	return err
}

// DeregisterNode removes the node's row (graceful stop). Its jobs are left
// as they are. Removing an unknown node is not an error.
func (s *Store) DeregisterNode(ctx context.Context, nodeID string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM scheduler_node WHERE node_id = ?`, nodeID); err != nil {
		return fail("deregister node "+nodeID, err)
	}
	return nil
}

// RecoverOrphans recovers, in one transaction, the RUNNING jobs whose owner
// has no node row, has a heartbeat older than p.Now − p.Grace, or is named in
// p.Nodes. A job whose crash count is below p.MaxCrashRedeliveries goes back
// to PENDING due at p.Now with the crash count plus one; any other fails
// into the dead-letter queue with p.LastError and its finish time at p.Now.
// Either way the claim sequence advances and the owner is cleared. The node
// rows with a heartbeat older than the cutoff, and those named in p.Nodes,
// are deleted. The recovered jobs are returned in id order (a row whose id
// is not a UUID is recovered but not reported).
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	now := micros(p.Now)
	cutoff := micros(p.Now.Add(-p.Grace))
	nodes := jsonList(p.Nodes)
	var out []spi.RecoveredJob
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		type orphan struct {
			id, task, owner string
			crash           int
		}
		rows, err := tx.QueryContext(ctx, `SELECT j.job_id, j.task_name, COALESCE(j.owner_node, ''), j.crash_count
			FROM scheduler_job j
			WHERE j.status = 'RUNNING' AND (
				COALESCE(j.owner_node, '') IN (SELECT value FROM json_each(?))
				OR NOT EXISTS (SELECT 1 FROM scheduler_node n
					WHERE n.node_id = COALESCE(j.owner_node, '') AND n.heartbeat_ts >= ?))
			ORDER BY j.job_id`, nodes, cutoff)
		if err != nil {
			return err
		}
		var orphans []orphan
		for rows.Next() {
			var o orphan
			if err := rows.Scan(&o.id, &o.task, &o.owner, &o.crash); err != nil {
				rows.Close()
				return err
			}
			orphans = append(orphans, o)
		}
		if err := rows.Err(); err != nil {
			rows.Close()
			return err
		}
		rows.Close()
		out = make([]spi.RecoveredJob, 0, len(orphans))
		for _, o := range orphans {
			rj := spi.RecoveredJob{TaskName: o.task, FromNode: o.owner}
			rj.NewStatus, rj.CrashCount = spi.CrashOutcome(o.crash, p.MaxCrashRedeliveries)
			if rj.NewStatus == spi.StatusPending {
				_, err = tx.ExecContext(ctx, `UPDATE scheduler_job
					SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = ?,
						claim_seq = claim_seq + 1, owner_node = NULL
					WHERE job_id = ?`, now, o.id)
			} else {
				_, err = tx.ExecContext(ctx, `UPDATE scheduler_job
					SET status = 'FAILED', last_error = ?, finished_time = ?,
						claim_seq = claim_seq + 1, owner_node = NULL
					WHERE job_id = ?`, nullString(p.LastError), nullMicros(p.Now), o.id)
			}
			if err != nil {
				return err
			}
			id, perr := uuid.Parse(o.id)
			if perr != nil {
				continue
			}
			rj.JobID = id
			out = append(out, rj)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM scheduler_node
			WHERE heartbeat_ts < ? OR node_id IN (SELECT value FROM json_each(?))`, cutoff, nodes)
		return err
	})
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	return out, nil
}

// retryFailedSQL, cancelSQL and statusSQL are the statements of the shared
// RetryFailedJob and CancelJob (sqlcore.AdminWrites).
func retryFailedSQL(id uuid.UUID, now time.Time) (string, []any) {
	return `UPDATE scheduler_job
			SET status = 'PENDING', last_error = NULL, attempts = 0, crash_count = 0,
				scheduled_time = ?, finished_time = NULL, owner_node = NULL
			WHERE job_id = ? AND status = 'FAILED'`, []any{micros(now), id.String()}
}

func cancelSQL(id uuid.UUID, now time.Time) (string, []any) {
	return `UPDATE scheduler_job
			SET status = 'CANCELLED', finished_time = ?
			WHERE job_id = ? AND status = 'PENDING'`, []any{nullMicros(now), id.String()}
}

func statusSQL(id uuid.UUID) (string, []any) {
	return `SELECT status FROM scheduler_job WHERE job_id = ?`, []any{id.String()}
}
