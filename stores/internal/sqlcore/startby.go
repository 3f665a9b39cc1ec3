package sqlcore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The start-by sweeper's reads and writes (spi.StartBySweeper), in the
// portable SQL of every dialect: the candidates are a range of the
// property index (prop_key, prop_value, job_id) over spi.StartByProperty,
// joined with their PENDING jobs; the expiry is spi.Failed from PENDING,
// guarded by the claim sequence read, with the dependents released in the
// same transaction.

// UnstartedJobs returns a page of the PENDING jobs whose start-by property
// is before before, after the cursor. It implements [spi.StartBySweeper].
func (c Core[T]) UnstartedJobs(ctx context.Context, before time.Time, after spi.StartByCursor, limit int) ([]*spi.Job, spi.StartByCursor, error) {
	s := &c.cfg.D.Syntax
	limit = max(limit, 1)
	var jobs []*spi.Job
	var next spi.StartByCursor
	err := c.do("read unstarted jobs", func() error {
		jobs, next = nil, spi.StartByCursor{}
		args := []any{s.name(spi.StartByProperty), s.name(spi.FormatStartBy(before))}
		from := ""
		if after != (spi.StartByCursor{}) {
			from = " AND (p.prop_value > ? OR (p.prop_value = ? AND p.job_id > ?))"
			args = append(args, s.name(after.Value), s.name(after.Value), s.id(after.ID))
		}
		q, args := s.limited(`SELECT p.prop_value, p.job_id FROM {prop} p JOIN {job} j ON j.job_id = p.job_id
	WHERE p.prop_key = ? AND p.prop_value < ? AND j.status = 'PENDING'`+from+`
	ORDER BY p.prop_value, p.job_id`, int64(limit), args...)
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		var ids []uuid.UUID
		var last spi.StartByCursor
		for rows.Next() {
			var v sql.NullString
			var raw T
			if err := rows.Scan(&v, &raw); err != nil {
				rows.Close()
				return err
			}
			id, err := c.cfg.D.ParseID(raw)
			if err != nil {
				continue
			}
			ids, last = append(ids, id), spi.StartByCursor{Value: v.String, ID: id}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == limit {
			next = last
		}
		jobs, err = c.cfg.D.LoadJobs(ctx, c.cfg.DB, ids)
		return err
	})
	return jobs, next, err
}

// ExpireJobs fails the jobs of es still PENDING under their claim
// sequence, with their dependents, in one transaction. It implements
// [spi.StartBySweeper].
func (c Core[T]) ExpireJobs(ctx context.Context, es []spi.Expiry, now time.Time) ([]bool, error) {
	s := &c.cfg.D.Syntax
	out := make([]bool, len(es))
	released := false
	err := c.do("expire jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(out)
			var failed []uuid.UUID
			for i, e := range es {
				q, args := s.Update(spi.Failed(spi.StatusPending, e.LastError, now), "job_id = ? AND claim_seq = ?", s.id(e.JobID), e.ClaimSeq)
				ok, err := applied(tx.ExecContext(ctx, q, args...))
				if err != nil {
					return fmt.Errorf("job %s: %w", e.JobID, err)
				}
				if out[i] = ok; ok {
					failed = append(failed, e.JobID)
				}
			}
			var err error
			released, err = c.finishWithDependents(ctx, tx, failed, spi.StatusFailed, now)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	if released && c.cfg.D.Wake != nil {
		c.cfg.D.Wake(ctx, int(spi.PriorityNormal))
	}
	return out, nil
}
