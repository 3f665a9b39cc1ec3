package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// RetryFailedJob moves a FAILED job out of the dead-letter queue: status
// PENDING due at now, last error cleared, attempts and crash count zero,
// finish time and owner cleared, and publishes a wakeup. It wraps
// spi.ErrNotFound for an unknown id and spi.ErrInvalidState, naming the
// actual status, for a job that is not FAILED. One statement.
func (s *Store) RetryFailedJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.retryFailed, id, now, spi.StatusFailed, "retried"); err != nil {
		return fail("retry job", err)
	}
	return nil
}

// CancelJob moves a PENDING job to CANCELLED with its finish time at now. It
// wraps spi.ErrNotFound for an unknown id and spi.ErrInvalidState, naming the
// actual status, for a job in any other state. One statement.
func (s *Store) CancelJob(ctx context.Context, id uuid.UUID, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if err := s.transition(ctx, s.sql.cancel, id, nullTime(now), spi.StatusPending, "cancelled"); err != nil {
		return fail("cancel job", err)
	}
	return nil
}

// transition runs an UPDATE guarded by status = want that returns the job's
// priority when it applied and the job's status as it was before; it
// explains a transition that did not apply, and wakes pollers after a
// transition to PENDING.
func (s *Store) transition(ctx context.Context, q string, id uuid.UUID, now any, want spi.Status, verb string) error {
	var prio *int32
	var status *string
	if err := s.pool.QueryRow(ctx, q, pgUUID(id), now).Scan(&prio, &status); err != nil {
		return err
	}
	switch {
	case prio != nil:
		if want == spi.StatusFailed {
			s.wake(ctx, *prio)
		}
		return nil
	case status == nil:
		return fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	default:
		return fmt.Errorf("%w: job %s is %s, only %s jobs can be %s", spi.ErrInvalidState, id, *status, want, verb)
	}
}

// Heartbeat registers nodeID or refreshes its heartbeat to now.
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.pool.Exec(ctx, s.sql.heartbeat, nodeID, now); err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// HeartbeatTasks implements spi.NodeTaskStore: Heartbeat that records the
// node's tasks too.
func (s *Store) HeartbeatTasks(ctx context.Context, nodeID string, tasks []string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.pool.Exec(ctx, s.sql.heartbeatTasks, nodeID, now, sqlcore.EncodeTasks(tasks)); err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// LiveNodes implements spi.NodeTaskStore.
func (s *Store) LiveNodes(ctx context.Context, since time.Time) ([]spi.NodeInfo, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := s.pool.Query(ctx, s.sql.liveNodes, since)
	if err != nil {
		return nil, fail("list the live nodes", err)
	}
	defer rows.Close()
	nodes, err := sqlcore.ReadNodes(rows, time.Time.UTC)
	if err != nil {
		return nil, fail("list the live nodes", err)
	}
	return nodes, nil
}

// PendingTasks implements spi.NodeTaskStore: one pass over the PENDING
// entries of the claim index.
func (s *Store) PendingTasks(ctx context.Context) ([]spi.TaskBacklog, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := s.pool.Query(ctx, s.sql.pendingCount)
	if err != nil {
		return nil, fail("count the pending jobs per task", err)
	}
	defer rows.Close()
	out, err := sqlcore.ReadBacklogs(rows, time.Time.UTC)
	if err != nil {
		return nil, fail("count the pending jobs per task", err)
	}
	return out, nil
}

// DeregisterNode removes the node's row (graceful stop). Its jobs are left
// as they are. Removing an unknown node is not an error.
func (s *Store) DeregisterNode(ctx context.Context, nodeID string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	if _, err := s.pool.Exec(ctx, s.sql.deregister, nodeID); err != nil {
		return fail("deregister node "+nodeID, err)
	}
	return nil
}

// RecoverOrphans recovers, in one statement (so in one transaction), the
// RUNNING jobs whose owner has no node row, has a heartbeat older than
// p.Now − p.Grace, or is named in p.Nodes. A job whose crash count is below
// p.MaxCrashRedeliveries goes back to PENDING due at p.Now with the crash
// count plus one; any other fails into the dead-letter queue with
// p.LastError and its finish time at p.Now. Either way the claim sequence
// advances and the owner is cleared. The orphans are locked, in id order,
// before they move, and re-checked once locked, so a completion or a
// concurrent recovery that gets there first wins. The node rows with a
// heartbeat older than the cutoff, and those named in p.Nodes, are deleted. The recovered jobs are returned in id
// order; a wakeup is published when some went back to PENDING.
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	nodes := p.Nodes
	if nodes == nil {
		nodes = []string{}
	}
	cutoff := p.Now.Add(-p.Grace)
	var out []spi.RecoveredJob
	top := int32(-1) // the best priority requeued, for the wakeup
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		out, top = nil, -1
		rows, err := tx.Query(ctx, s.sql.orphans, nodes, cutoff)
		if err != nil {
			return err
		}
		var requeue, bury []pgtype.UUID
		var (
			id    pgtype.UUID
			task  string
			owner string
			crash int32
			prio  int32
		)
		_, err = pgx.ForEachRow(rows, []any{&id, &task, &owner, &crash, &prio}, func() error {
			rj := spi.RecoveredJob{JobID: id.Bytes, TaskName: task, FromNode: owner}
			rj.NewStatus, rj.CrashCount = spi.CrashOutcome(int(crash), p.MaxCrashRedeliveries)
			if rj.NewStatus == spi.StatusPending {
				requeue = append(requeue, id)
				top = max(top, prio)
			} else {
				bury = append(bury, id)
			}
			out = append(out, rj)
			return nil
		})
		if err != nil {
			return err
		}
		// The rows are locked: the writes apply to every one of them.
		b := &pgx.Batch{}
		if len(requeue) > 0 {
			b.Queue(s.sql.requeue, requeue, p.Now)
		}
		if len(bury) > 0 {
			b.Queue(s.sql.bury, bury, nullText(p.LastError), p.Now)
		}
		b.Queue(s.sql.deleteNodes, nodes, cutoff)
		return tx.SendBatch(ctx, b).Close()
	})
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	if top >= 0 {
		s.wake(ctx, top)
	}
	return out, nil
}
