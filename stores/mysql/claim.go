package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// ClaimJobs moves up to p.Limit due PENDING jobs to RUNNING for p.NodeID
// and returns them in claim order: effective priority descending,
// scheduled time ascending, id ascending. Only jobs passing p.Tags are
// considered, and jobs whose resource has no free permit are skipped.
//
// One READ COMMITTED transaction: a UNION ALL of five LIMITed subqueries
// locks, with FOR UPDATE SKIP LOCKED, the first p.Limit due jobs of each
// priority level from the claim index (aging is monotone inside a level, so
// the best p.Limit overall are among them); the candidates are merged in Go
// by effective priority; when they name resources, the resources' rows of
// scheduler_resource are locked in name order and their RUNNING holders
// counted, and the candidates are admitted in claim order while their
// resource has a free permit (counting the permits this claim takes); one
// UPDATE by primary key moves the chosen jobs to RUNNING (claim_seq + 1),
// and a SELECT reads them back. Concurrent claimers skip each other's rows
// instead of waiting; claimers of one resource take turns from the count to
// the commit, so no connection ever over-admits.
//
// A claimed row that cannot be read back as a job is failed into the
// dead-letter queue, in the same transaction, with the problem as its last
// error, and left out of the result. A deadlock, lock wait timeout or lost
// connection runs the transaction again; a connection lost during COMMIT
// is settled by reading the chosen jobs back, so that jobs claimed by a
// commit whose answer was lost are returned, not stranded.
func (s *Store) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	done, err := s.enter()
	if err != nil {
		return nil, err
	}
	defer done()
	if p.Limit <= 0 {
		return nil, nil
	}
	now := dbTime(p.Now)
	tf := compileTags(p.Tags)
	var got []*spi.Job
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		got = nil
		cands, err := s.claimCandidates(ctx, tx, p, now, tf)
		if err != nil || len(cands) == 0 {
			return err
		}
		if err := s.at("claim:locked", tx); err != nil {
			return err
		}
		ids := sqlcore.IDs(cands)
		args := append([]any{nullBinary(p.NodeID), now}, idArgs(ids)...)
		if _, err := tx.ExecContext(ctx, `UPDATE `+s.sql.t.job+`
			SET status = 'RUNNING', owner_node = ?, claim_seq = claim_seq + 1, claimed_time = ?
			WHERE status = 'PENDING' AND job_id IN (`+marks(len(ids))+`)`, args...); err != nil {
			return fmt.Errorf("move the chosen jobs to RUNNING: %w", err)
		}
		jobs, bad, err := s.readClaimed(ctx, tx, ids)
		if err != nil {
			return err
		}
		for _, b := range bad {
			if _, err := tx.ExecContext(ctx, `UPDATE `+s.sql.t.job+`
				SET status = 'FAILED', owner_node = NULL, finished_time = ?, last_error = ?
				WHERE job_id = ?`, now, "ratchet: corrupt job row: "+b.err.Error(), b.id); err != nil {
				return fmt.Errorf("fail corrupt rows: %w", err)
			}
		}
		got = jobs
		return nil
	}, func(ctx context.Context) (bool, error) {
		return s.claimCommitted(ctx, got, p.NodeID)
	})
	if err != nil {
		return nil, fail("claim jobs", err)
	}
	sqlcore.SortClaimed(got, p.Now, p.BoostInterval)
	return got, nil
}

// claimCandidates returns the jobs to claim, best first: at most p.Limit of
// the union of each level's first p.Limit due jobs, locked, admitted in
// order while their resources have permits.
func (s *Store) claimCandidates(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time, tf tagFilter) ([]sqlcore.Candidate, error) {
	tasks, err := sqlcore.ClaimTasksSQL(ctx, tx, p, s.sql.pendingTasks)
	if err != nil {
		return nil, err
	}
	cands, err := sqlcore.InChunks(tasks, tasksPerStatement, func(tasks []string) ([]sqlcore.Candidate, error) {
		q, args := candidatesSQL(s.sql.t, tf, tasks, now, p.Limit)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("read the candidates: %w", err)
		}
		defer rows.Close()
		var cands []sqlcore.Candidate
		for rows.Next() {
			var c sqlcore.Candidate
			var raw []byte
			var prio int64
			var res sql.NullString
			if err := rows.Scan(&raw, &prio, &c.Scheduled, &res, &c.Limit); err != nil {
				return nil, fmt.Errorf("read the candidates: %w", err)
			}
			if c.ID, err = scanID(raw); err != nil {
				return nil, err
			}
			c.Priority, c.Resource = spi.Priority(prio), res.String
			cands = append(cands, c)
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read the candidates: %w", err)
		}
		return cands, nil
	})
	if err != nil {
		return nil, err
	}
	sqlcore.Rank(cands, p.Now, p.BoostInterval)
	resources := sqlcore.Resources(cands, p.Limit)
	if resources == nil {
		return cands[:min(len(cands), p.Limit)], nil
	}
	held, err := s.lockResources(ctx, tx, resources)
	if err != nil {
		return nil, err
	}
	return sqlcore.Admit(cands, p.Limit, held), nil
}

// lockResources locks the rows of resources in scheduler_resource, in name
// order (creating the missing ones), and then counts each resource's
// RUNNING holders through idx_scheduler_job_resource. The count is a
// statement of its own, run once the locks are granted: under READ
// COMMITTED it sees every claim that held a lock before, so claimers of a
// resource take turns from the count to the commit. Locks are taken in name
// order, so claimers that need several resources cannot deadlock on them;
// while waiting, a claimer holds only its own PENDING candidates, which
// others skip, and only claims add holders (completions, releases and
// recovery remove them).
func (s *Store) lockResources(ctx context.Context, tx *sql.Tx, sorted []string) (map[string]int64, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+s.sql.t.resource+` (resource_name) VALUES `+rowMarks(len(sorted), 1)+`
		ON DUPLICATE KEY UPDATE resource_name = resource_name`, binArgs(sorted)...); err != nil {
		return nil, fmt.Errorf("lock resources: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT resource_name, COUNT(*) FROM `+s.sql.t.job+`
		WHERE status = 'RUNNING' AND resource_name IN (`+marks(len(sorted))+`) GROUP BY resource_name`, binArgs(sorted)...)
	if err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	defer rows.Close()
	held := make(map[string]int64, len(sorted))
	for rows.Next() {
		var name []byte
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, fmt.Errorf("count resource holders: %w", err)
		}
		held[string(name)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count resource holders: %w", err)
	}
	return held, nil
}

// badRow is a claimed row that could not be decoded.
type badRow struct {
	id  []byte
	err error
}

// readClaimed reads the claimed rows back: the jobs, and the rows that
// could not be decoded.
func (s *Store) readClaimed(ctx context.Context, tx querier, ids []uuid.UUID) ([]*spi.Job, []badRow, error) {
	rows, err := tx.QueryContext(ctx, s.sql.claimedRows+`(`+marks(len(ids))+`)`, idArgs(ids)...)
	if err != nil {
		return nil, nil, fmt.Errorf("read the claimed jobs: %w", err)
	}
	defer rows.Close()
	jobs := make([]*spi.Job, 0, len(ids))
	var bad []badRow
	for rows.Next() {
		j, raw, _, err := s.core.D.Decode(rows)
		if err != nil {
			bad = append(bad, badRow{raw, err})
			continue
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("read the claimed jobs: %w", err)
	}
	return jobs, bad, nil
}

// claimCommitted settles a claim whose COMMIT lost its connection: the
// claim committed when its jobs are RUNNING for node with the claim
// sequence it gave them.
func (s *Store) claimCommitted(ctx context.Context, jobs []*spi.Job, node string) (bool, error) {
	if len(jobs) == 0 {
		return true, nil // nothing to lose either way
	}
	j := jobs[0]
	var status string
	var seq int64
	var owner sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT status, claim_seq, owner_node FROM `+s.sql.t.job+` WHERE job_id = ?`, binID(j.ID)).Scan(&status, &seq, &owner)
	if err != nil {
		return false, err
	}
	return status == string(spi.StatusRunning) && seq == j.ClaimSeq && owner.String == node, nil
}
