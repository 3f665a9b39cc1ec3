package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// RetryFailedJob moves a FAILED job out of the dead-letter queue: status
// PENDING due at now, last error cleared, attempts and crash count zero,
// finish time and owner cleared. It wraps spi.ErrNotFound for an unknown id
// and spi.ErrInvalidState, naming the actual status, for a job that is not
// FAILED.
func (s *Store) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.retryFailed, dbTime(now), id, spi.StatusFailed, "retried"); err != nil {
		return fail("retry job", err)
	}
	return nil
}

// CancelJob moves a PENDING job to CANCELLED with its finish time at now. It
// wraps spi.ErrNotFound for an unknown id and spi.ErrInvalidState, naming the
// actual status, for a job in any other state.
func (s *Store) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.cancel, nullDBTime(now), id, spi.StatusPending, "cancelled"); err != nil {
		return fail("cancel job", err)
	}
	return nil
}

// transition runs an UPDATE guarded by status = want in one transaction
// and, when it matched no row, explains why: the job does not exist, or it
// is in another state.
func (s *Store) transition(ctx context.Context, q string, now any, id uuid.UUID, want spi.Status, verb string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, q, now, binID(id))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var st string
		err = tx.QueryRowContext(ctx, s.sql.statusOf, binID(id)).Scan(&st)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: job %s is %s, only %s jobs can be %s", spi.ErrInvalidState, id, st, want, verb)
	}, nil)
}

// Heartbeat registers nodeID or refreshes its heartbeat to now.
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.db.ExecContext(ctx, s.sql.heartbeat, []byte(nodeID), dbTime(now)); err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, s.sql.heartbeatTasks, []byte(nodeID), dbTime(now), tasks)
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
	if _, err := s.db.ExecContext(ctx, s.sql.deregister, []byte(nodeID)); err != nil {
		return fail("deregister node "+nodeID, err)
	}
	return nil
}

// orphan is a RUNNING job whose owner is gone.
type orphan struct {
	id    uuid.UUID
	task  string
	owner string
	crash int
}

// RecoverOrphans recovers, in one transaction, the RUNNING jobs whose owner
// has no node row, has a heartbeat older than p.Now − p.Grace, or is named
// in p.Nodes. A job whose crash count is below p.MaxCrashRedeliveries goes
// back to PENDING due at p.Now with the crash count plus one; any other
// fails into the dead-letter queue with p.LastError and its finish time at
// p.Now. Either way the claim sequence advances and the owner is cleared.
// The orphans are found with a plain read (through idx_scheduler_job_owner),
// then locked in id order and checked again, so that a completion or a
// concurrent recovery that gets there first wins. The node rows with a
// heartbeat older than the cutoff, and those named in p.Nodes, are deleted.
// The recovered jobs are returned in id order. Transient errors run the
// transaction again.
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	cutoff := dbTime(p.Now.Add(-p.Grace))
	now := dbTime(p.Now)
	// The orphan condition on the job aliased j, and its arguments: no
	// fresh node row (a count on the node's primary key, evaluated per
	// RUNNING job; NOT EXISTS may be planned as a scan of the node table).
	cond := `(j.owner_node IS NULL OR (SELECT COUNT(*) FROM ` + s.sql.t.node + ` n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ?) = 0`
	condArgs := []any{cutoff}
	if len(p.Nodes) > 0 {
		cond += ` OR j.owner_node IN (` + marks(len(p.Nodes)) + `)`
		condArgs = append(condArgs, binArgs(p.Nodes)...)
	}
	cond += `)`
	var out []spi.RecoveredJob
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		found, err := queryOrphans(ctx, tx, `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count
			FROM `+s.sql.t.job+` j WHERE j.status = 'RUNNING' AND `+cond+` ORDER BY j.job_id`, condArgs)
		if err != nil {
			return err
		}
		var orphans []orphan
		for start := 0; start < len(found); start += 1000 {
			chunk := found[start:min(start+1000, len(found))]
			ids := make([]uuid.UUID, len(chunk))
			for i, o := range chunk {
				ids[i] = o.id
			}
			locked, err := queryOrphans(ctx, tx, `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count
				FROM `+s.sql.t.job+` j WHERE j.job_id IN (`+marks(len(ids))+`) AND j.status = 'RUNNING' AND `+cond+`
				ORDER BY j.job_id FOR UPDATE`, append(idArgs(ids), condArgs...))
			if err != nil {
				return err
			}
			orphans = append(orphans, locked...)
		}
		var back, dead []uuid.UUID
		recovered := make([]spi.RecoveredJob, 0, len(orphans))
		for _, o := range orphans {
			rj := spi.RecoveredJob{JobID: o.id, TaskName: o.task, FromNode: o.owner}
			rj.NewStatus, rj.CrashCount = spi.CrashOutcome(o.crash, p.MaxCrashRedeliveries)
			if rj.NewStatus == spi.StatusPending {
				back = append(back, o.id)
			} else {
				dead = append(dead, o.id)
			}
			recovered = append(recovered, rj)
		}
		for start := 0; start < len(back); start += 1000 {
			chunk := back[start:min(start+1000, len(back))]
			if _, err := tx.ExecContext(ctx, `UPDATE `+s.sql.t.job+`
				SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = ?,
					claim_seq = claim_seq + 1, owner_node = NULL
				WHERE job_id IN (`+marks(len(chunk))+`)`, append([]any{now}, idArgs(chunk)...)...); err != nil {
				return fmt.Errorf("requeue orphans: %w", err)
			}
		}
		for start := 0; start < len(dead); start += 1000 {
			chunk := dead[start:min(start+1000, len(dead))]
			if _, err := tx.ExecContext(ctx, `UPDATE `+s.sql.t.job+`
				SET status = 'FAILED', last_error = ?, finished_time = ?,
					claim_seq = claim_seq + 1, owner_node = NULL
				WHERE job_id IN (`+marks(len(chunk))+`)`, append([]any{nullString(p.LastError), now}, idArgs(chunk)...)...); err != nil {
				return fmt.Errorf("fail orphans: %w", err)
			}
		}
		del := `DELETE FROM ` + s.sql.t.node + ` WHERE heartbeat_ts < ?`
		delArgs := []any{cutoff}
		if len(p.Nodes) > 0 {
			del += ` OR node_id IN (` + marks(len(p.Nodes)) + `)`
			delArgs = append(delArgs, binArgs(p.Nodes)...)
		}
		if _, err := tx.ExecContext(ctx, del, delArgs...); err != nil {
			return fmt.Errorf("delete stale nodes: %w", err)
		}
		out = recovered
		return nil
	}, nil)
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	return out, nil
}

// queryOrphans reads (job_id, task_name, owner_node, crash_count) rows.
func queryOrphans(ctx context.Context, tx *sql.Tx, q string, args []any) ([]orphan, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find orphans: %w", err)
	}
	defer rows.Close()
	var out []orphan
	for rows.Next() {
		var o orphan
		var raw []byte
		var owner sql.NullString
		if err := rows.Scan(&raw, &o.task, &owner, &o.crash); err != nil {
			return nil, fmt.Errorf("find orphans: %w", err)
		}
		id, err := scanID(raw)
		if err != nil {
			return nil, err
		}
		o.id, o.owner = id, owner.String
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find orphans: %w", err)
	}
	return out, nil
}
