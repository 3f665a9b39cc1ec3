package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// applied reports whether a guarded UPDATE changed its row.
func applied(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}

// Heartbeat registers nodeID or refreshes its heartbeat to now, with an
// upsert under a key-range lock.
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		_, err := tx.ExecContext(ctx, heartbeatSQL, name(nodeID), dbTime(now))
		return err
	})
	if err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// upsertRetryable is IsRetryable plus a key clash, which an upsert that
// raced with another creating the same row resolves by running again.
func upsertRetryable(err error) bool { return IsRetryable(err) || isDuplicateKey(err, "") }

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	return s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		_, err := tx.ExecContext(ctx, heartbeatTasksSQL, name(nodeID), dbTime(now), tasks)
		return err
	})
}

// DeregisterNode removes the node's row (graceful stop). Its jobs are left
// as they are. Removing an unknown node is not an error.
func (s *Store) DeregisterNode(ctx context.Context, nodeID string) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	err = s.withRetry(ctx, IsRetryable, func(int) error {
		_, err := s.db.ExecContext(ctx, deregisterSQL, name(nodeID))
		return err
	})
	if err != nil {
		return fail("deregister node "+nodeID, err)
	}
	return nil
}

// RecoverOrphans recovers, in one transaction and one UPDATE ... OUTPUT,
// the RUNNING jobs whose owner has no node row, has a heartbeat older than
// p.Now − p.Grace, or is named in p.Nodes. A job whose crash count is below
// p.MaxCrashRedeliveries goes back to PENDING due at p.Now with the crash
// count plus one; any other fails into the dead-letter queue with
// p.LastError and its finish time at p.Now. Either way the claim sequence
// advances and the owner is cleared. The node rows with a heartbeat older
// than the cutoff, and those named in p.Nodes, are deleted. The recovered
// jobs are returned in id order (a row whose id is not 16 bytes is
// recovered but not reported).
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	nodes := slices.Compact(slices.Sorted(slices.Values(p.Nodes)))
	if len(nodes) > maxParams-10 {
		return nil, fmt.Errorf("sqlserver: recover orphans: %d nodes named, at most %d", len(nodes), maxParams-10)
	}
	cutoff := dbTime(p.Now.Add(-p.Grace))
	args := []any{cutoff}
	for _, n := range nodes {
		args = append(args, name(n))
	}
	var out []spi.RecoveredJob
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, orphansSQL(len(nodes)), args...)
		if err != nil {
			return err
		}
		var requeue, bury []uuid.UUID
		for rows.Next() {
			var id, owner []byte
			var task string
			var crash int64
			if err := rows.Scan(&id, &task, &owner, &crash); err != nil {
				rows.Close()
				return err
			}
			if len(id) != 16 {
				continue
			}
			rj := spi.RecoveredJob{JobID: uuid.UUID(id), TaskName: task, FromNode: string(owner)}
			rj.NewStatus, rj.CrashCount = spi.CrashOutcome(int(crash), p.MaxCrashRedeliveries)
			if rj.NewStatus == spi.StatusPending {
				requeue = append(requeue, rj.JobID)
			} else {
				bury = append(bury, rj.JobID)
			}
			out = append(out, rj)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		// The rows are update-locked: the writes apply to every one.
		if _, err := sqlcore.InChunks(requeue, maxParams-10, func(ids []uuid.UUID) ([]struct{}, error) {
			_, err := tx.ExecContext(ctx, requeueSQL(len(ids)), append([]any{dbTime(p.Now)}, idArgs(ids)...)...)
			return nil, err
		}); err != nil {
			return err
		}
		if _, err := sqlcore.InChunks(bury, maxParams-10, func(ids []uuid.UUID) ([]struct{}, error) {
			_, err := tx.ExecContext(ctx, burySQL(len(ids)), append([]any{dbTime(p.Now), nullText(p.LastError)}, idArgs(ids)...)...)
			return nil, err
		}); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, deleteNodesSQL(len(nodes)), args...)
		return err
	})
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	slices.SortFunc(out, func(a, b spi.RecoveredJob) int { return compareIDs(a.JobID, b.JobID) })
	return out, nil
}

// compareIDs orders job ids as the database does.
func compareIDs(a, b uuid.UUID) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}
