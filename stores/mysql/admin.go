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

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	_, err := s.db.ExecContext(ctx, s.sql.heartbeatTasks, []byte(nodeID), dbTime(now), tasks)
	return err
}

// The orphan condition on the job aliased j, and its arguments: no fresh
// node row (a count on the node's primary key, evaluated per RUNNING job;
// NOT EXISTS may be planned as a scan of the node table), or an owner
// among nodes.
func (st statements) orphanCond(cutoff time.Time, nodes []string) (string, []any) {
	cond := `(j.owner_node IS NULL OR (SELECT COUNT(*) FROM ` + st.t.node + ` n
		WHERE n.node_id = j.owner_node AND n.heartbeat_ts >= ?) = 0`
	args := []any{dbTime(cutoff)}
	if len(nodes) > 0 {
		cond += ` OR j.owner_node IN (` + marks(len(nodes)) + `)`
		args = append(args, binArgs(nodes)...)
	}
	return cond + `)`, args
}

// orphansSQL finds the orphans with a plain read (through
// idx_scheduler_job_owner); lockOrphansSQL then locks them in id order by
// primary key and checks them again, so that a completion or a concurrent
// recovery that gets there first wins, and no gap of the index is locked.
func (st statements) orphansSQL(cutoff time.Time, nodes []string) (string, []any) {
	cond, args := st.orphanCond(cutoff, nodes)
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
		FROM ` + st.t.job + ` j WHERE j.status = 'RUNNING' AND ` + cond + ` ORDER BY j.job_id`, args
}

func (st statements) lockOrphansSQL(cutoff time.Time, nodes []string, ids [][]byte) (string, []any) {
	cond, args := st.orphanCond(cutoff, nodes)
	return `SELECT j.job_id, j.task_name, j.owner_node, j.crash_count, j.priority
		FROM ` + st.t.job + ` j WHERE j.job_id IN (` + marks(len(ids)) + `) AND j.status = 'RUNNING' AND ` + cond + `
		ORDER BY j.job_id FOR UPDATE`, append(anys(ids), args...)
}

func (st statements) requeueSQL(now time.Time, ids [][]byte) (string, []any) {
	return `UPDATE ` + st.t.job + `
		SET status = 'PENDING', crash_count = crash_count + 1, scheduled_time = ?,
			claim_seq = claim_seq + 1, owner_node = NULL
		WHERE job_id IN (` + marks(len(ids)) + `)`, append([]any{dbTime(now)}, anys(ids)...)
}

func (st statements) burySQL(now time.Time, lastError string, ids [][]byte) (string, []any) {
	return `UPDATE ` + st.t.job + `
		SET status = 'FAILED', last_error = ?, finished_time = ?,
			claim_seq = claim_seq + 1, owner_node = NULL
		WHERE job_id IN (` + marks(len(ids)) + `)`, append([]any{nullString(lastError), dbTime(now)}, anys(ids)...)
}

func (st statements) deleteNodesSQL(cutoff time.Time, nodes []string) (string, []any) {
	q, args := `DELETE FROM `+st.t.node+` WHERE heartbeat_ts < ?`, []any{dbTime(cutoff)}
	if len(nodes) > 0 {
		q += ` OR node_id IN (` + marks(len(nodes)) + `)`
		args = append(args, binArgs(nodes)...)
	}
	return q, args
}
