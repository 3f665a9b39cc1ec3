package sqlcore

import (
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Claim runs one claim of p at now in tx, as the stores' documentation
// describes it: the candidates of each task and level, ranked with exact
// aging, admitted against the permits their resources have left, moved to
// RUNNING and read back; a row that cannot be read back is failed into the
// dead-letter queue with the problem as its last error and left out. It
// records in *tried the ids it moved (for Adopting).
func (d Dialect[T]) Claim(ctx context.Context, tx *sql.Tx, p spi.ClaimParams, now time.Time, tried *[]uuid.UUID) ([]*spi.Job, error) {
	if p.Held != nil {
		*p.Held = spi.ClaimHeld{} // this run's, not an earlier run's of a retried transaction
	}
	tasks, err := ClaimTasksSQL(ctx, tx, p, d.PendingTasksSQL)
	if err != nil || len(tasks) == 0 {
		return nil, err
	}
	var bad []BadRow[T]
	n := d.TasksPerClaim
	if n <= 0 {
		n = len(tasks)
	}
	if d.Syntax.MaxArgs > 0 {
		n = max(1, min(n, d.Syntax.MaxArgs/d.Syntax.scanArgs(p.Tags)))
	}
	cands, err := InChunks(tasks, n, func(tasks []string) ([]Candidate, error) {
		q, args := d.CandidatesSQL(tasks, p.Tags, now, p.Limit)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []Candidate
		for rows.Next() {
			var c Candidate
			var raw T
			var prio int64
			var scheduled any
			var res sql.NullString
			if err := rows.Scan(&raw, &prio, &scheduled, &res, &c.Limit); err != nil {
				// A column of the wrong type (a priority or a permit limit
				// that is no integer): the row, not the claim, fails, so
				// that one corrupt row cannot hold up the queue. A second
				// Scan of the row reads its id alone.
				var skip any
				if rows.Scan(&raw, &skip, &skip, &skip, &skip) != nil {
					return nil, err
				}
				bad = append(bad, BadRow[T]{ID: raw, Seq: -1, Err: Corrupt(d.IDText(raw), "unreadable claim columns: %v", err)})
				continue
			}
			if c.ID, err = d.ParseID(raw); err != nil {
				// failed below, so it cannot take a candidate's place at every claim
				bad = append(bad, BadRow[T]{ID: raw, Seq: -1, Err: err})
				continue
			}
			if c.Scheduled, err = d.timeOf(scheduled); err != nil {
				bad = append(bad, BadRow[T]{ID: raw, Seq: -1, Err: Corrupt(c.ID.String(), "unreadable scheduled time: %v", err)})
				continue
			}
			c.Priority, c.Resource = spi.Priority(prio), res.String
			out = append(out, c)
		}
		return out, rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if err := d.FailCorrupt(ctx, tx, now, bad); err != nil {
		return nil, err
	}
	Rank(cands, now, p.BoostInterval)
	var held map[string]int64
	var rates rateCount // the count of the candidates' rate limits
	if resources := Resources(cands, p.Limit); resources != nil {
		if held, err = d.Holders(ctx, tx, resources); err != nil {
			return nil, err
		}
		if held == nil {
			held = map[string]int64{}
		}
		if rates, err = d.countRates(ctx, tx, resources, held); err != nil {
			return nil, err
		}
	}
	var ids []uuid.UUID
	if d.Pick != nil {
		ids, err = d.Pick(ctx, tx, cands, p.Limit, held)
	} else {
		ids = IDs(Admit(cands, p.Limit, held))
	}
	if err != nil {
		return nil, err
	}
	admitted := rates.admitted(ids)
	rates.heldBack(p, cands, admitted, held)
	if len(ids) == 0 {
		return nil, nil
	}
	if err := d.recordRates(ctx, tx, cands, admitted, rates.now); err != nil {
		return nil, err
	}
	if d.Chosen != nil {
		if err := d.Chosen(tx); err != nil {
			return nil, err
		}
	}
	*tried = ids
	var got []*spi.Job
	if d.Take != nil {
		got, bad, err = d.Take(ctx, tx, p.NodeID, now, ids)
	} else {
		got, bad, err = d.take(ctx, tx, p.NodeID, now, ids)
	}
	if err != nil {
		return nil, err
	}
	if err := d.PassTurns(ctx, tx, got, now); err != nil {
		return nil, err
	}
	return got, d.FailCorrupt(ctx, tx, now, bad)
}

// take moves ids to RUNNING with ClaimSQL and reads them back.
func (d Dialect[T]) take(ctx context.Context, tx *sql.Tx, node string, now time.Time, ids []uuid.UUID) ([]*spi.Job, []BadRow[T], error) {
	q, args := d.ClaimSQL(node, now, ids)
	if !d.ClaimReturns {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, nil, err
		}
		q, args = d.JobsSQL(ids)
	}
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	return d.ReadJobs(rows, nil)
}

// FailCorrupt moves, through q, rows that cannot be read back to FAILED, so
// that they cannot block the queue; GetJob and ListJobs keep reporting them.
func (d Dialect[T]) FailCorrupt(ctx context.Context, q DBTX, now time.Time, bad []BadRow[T]) error {
	for _, b := range bad {
		query, args := d.FailCorruptSQL(now, "ratchet: corrupt job row: "+b.Err.Error(), b.ID, b.Seq)
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return err
		}
	}
	return nil
}

// adopt reads the jobs of ids that a claim by node at now took: RUNNING,
// claimed at now, owned by node.
func (d Dialect[T]) adopt(ctx context.Context, tx *sql.Tx, ids []uuid.UUID, node string, now time.Time) ([]*spi.Job, error) {
	got, err := InChunks(ids, d.chunk(), func(ids []uuid.UUID) ([]*spi.Job, error) {
		q, args := d.AdoptSQL(now, ids)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		got, _, err := d.ReadJobs(rows, nil)
		return got, err
	})
	var out []*spi.Job
	for _, j := range got {
		if j.OwnerNode == node {
			out = append(out, j)
		}
	}
	return out, err
}

// ClaimJobs moves up to p.Limit due PENDING jobs of p.Tasks to RUNNING for
// p.NodeID and returns them in claim order: effective priority
// descending, scheduled time ascending, id ascending. Only jobs passing
// p.Tags are considered, and jobs whose resource has no free permit are
// skipped (the store's doc says how its dialect reads and locks them).
//
// A transient error runs the transaction again, up to the store's
// retries. When the COMMIT itself failed, so that the jobs may have been
// claimed, the next run first adopts those of them that are RUNNING under
// p.NodeID at p.Now (see [Adopting]; only with an AdoptSQL): no job is
// left claimed by a node that never heard of it. A claimed row that cannot
// be read back as a job is failed into the dead-letter queue with the
// problem as its last error and left out of the result. It implements
// [spi.Store].
func (c Core[T]) ClaimJobs(ctx context.Context, p spi.ClaimParams) ([]*spi.Job, error) {
	var out []*spi.Job
	err := c.do("claim jobs", func() error {
		if p.Limit <= 0 {
			return nil
		}
		now := p.Now.UTC().Truncate(time.Microsecond)
		claim := func(tx *sql.Tx, tried *[]uuid.UUID) ([]*spi.Job, error) { return c.cfg.D.Claim(ctx, tx, p, now, tried) }
		adopt := func(tx *sql.Tx, ids []uuid.UUID) ([]*spi.Job, error) {
			if c.cfg.D.AdoptSQL == nil {
				return nil, nil // the claim runs afresh
			}
			return c.cfg.D.adopt(ctx, tx, ids, p.NodeID, now)
		}
		return c.inTxAt(ctx, nil, Adopting(claim, adopt, &out))
	})
	if err != nil {
		return nil, err
	}
	SortClaimed(out, p.Now, p.BoostInterval)
	return out, nil
}

// PassTurns runs Dialect.PassTurns in a transaction of its own, for a
// store whose claim is a statement of its own (PostgreSQL's): until it
// commits, a successor waits on its predecessor's finish, which releases
// it as any link. It writes nothing when no job of claimed has
// dependents.
func (c Core[T]) PassTurns(ctx context.Context, claimed []*spi.Job, now time.Time) error {
	if !slices.ContainsFunc(claimed, func(j *spi.Job) bool { return j.Dependents > 0 }) {
		return nil
	}
	return c.do("pass fair turns", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error { return c.cfg.D.PassTurns(ctx, tx, claimed, now) })
	})
}

// FairTurns implements [spi.FairShareStore]: the claims pass turns.
func (c Core[T]) FairTurns() bool { return true }
