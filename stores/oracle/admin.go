package oracle

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// applied reports whether a guarded UPDATE changed its row.
func applied(res sql.Result) (bool, error) {
	n, err := res.RowsAffected()
	return n == 1, err
}

// Heartbeat registers nodeID or refreshes its heartbeat to now with one
// MERGE (run again if it raced with another creating the row).
func (s *Store) Heartbeat(ctx context.Context, nodeID string, now time.Time) error {
	done, err := s.enter()
	if err != nil {
		return err
	}
	defer done()
	err = s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		query, args := heartbeatSQL(nodeID, now)
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return fail("heartbeat "+nodeID, err)
	}
	return nil
}

// beatTasks writes the heartbeat of nodeID at now with tasks (their
// stored form): the dialect's part of spi.NodeTaskStore.
func (s *Store) beatTasks(ctx context.Context, nodeID, tasks string, now time.Time) error {
	return s.inTx(ctx, upsertRetryable, func(tx *sql.Tx, _ attempt) error {
		query, args := heartbeatTasksSQL(nodeID, tasks, now)
		_, err := tx.ExecContext(ctx, query, args...)
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
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		query, args := deregisterSQL(nodeID)
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return fail("deregister node "+nodeID, err)
	}
	return nil
}

// RecoverOrphans recovers, in one transaction, the RUNNING jobs whose owner
// has no node row, has a heartbeat older than p.Now − p.Grace, or is named in
// p.Nodes: it locks them (FOR UPDATE, in id order), puts those whose crash
// count is below p.MaxCrashRedeliveries back to PENDING due at p.Now with the
// crash count plus one, and fails the others into the dead-letter queue with
// p.LastError and their finish time at p.Now. Either way the claim sequence
// advances and the owner is cleared. The node rows with a heartbeat older
// than the cutoff, and those named in p.Nodes, are deleted. The recovered
// jobs are returned in id order (a row whose id is not 16 bytes is not
// touched).
func (s *Store) RecoverOrphans(ctx context.Context, p spi.RecoverParams) ([]spi.RecoveredJob, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	nodes := slices.Compact(slices.Sorted(slices.Values(p.Nodes)))
	if len(nodes) > idsPerList {
		return nil, fmt.Errorf("oracle: recover orphans: %d nodes named, at most %d", len(nodes), idsPerList)
	}
	cutoff := p.Now.Add(-p.Grace)
	var out []spi.RecoveredJob
	err = s.inTx(ctx, nil, func(tx *sql.Tx, _ attempt) error {
		out = out[:0]
		query, args := orphansSQL(cutoff, nodes)
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		var requeue, bury [][]byte
		for rows.Next() {
			var id []byte
			var task, owner sql.NullString
			var crash int64
			if err := rows.Scan(&id, &task, &owner, &crash); err != nil {
				rows.Close()
				return err
			}
			if len(id) != 16 {
				continue
			}
			rj := spi.RecoveredJob{JobID: uuid.UUID(id), TaskName: task.String, FromNode: owner.String}
			rj.NewStatus, rj.CrashCount = spi.CrashOutcome(int(crash), p.MaxCrashRedeliveries)
			if rj.NewStatus == spi.StatusPending {
				requeue = append(requeue, id)
			} else {
				bury = append(bury, id)
			}
			out = append(out, rj)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
		for start := 0; start < len(requeue); start += idsPerList {
			query, args := requeueSQL(p.Now, requeue[start:min(start+idsPerList, len(requeue))])
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		for start := 0; start < len(bury); start += idsPerList {
			query, args := buryCrashedSQL(p.Now, p.LastError, bury[start:min(start+idsPerList, len(bury))])
			if _, err := tx.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		query, args = deleteNodesSQL(cutoff, nodes)
		_, err = tx.ExecContext(ctx, query, args...)
		return err
	})
	if err != nil {
		return nil, fail("recover orphans", err)
	}
	return out, nil
}
