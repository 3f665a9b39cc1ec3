package sqlcore

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The archive of finished jobs (spi.JobArchiver), in the portable SQL of
// every dialect. The archive tables are copies of the job, tag, property
// and state tables with the same columns in the same order (migration 6),
// so a move is an INSERT ... SELECT * of each and a DELETE, in one
// transaction, of the candidates locked first: a DLQ retry waits for the
// move, and then finds no job.

const terminal = "('SUCCEEDED', 'FAILED', 'CANCELLED', 'SKIPPED')"

// keepsParents is the condition of the archive's candidates j that keeps
// a parent live while one of its dependents has not finished, so that a
// child can always read its parents.
const keepsParents = ` AND (j.dep_children = 0 OR NOT EXISTS (SELECT 1 FROM {dep} d JOIN {job} c ON c.job_id = d.child_id
		WHERE d.parent_id = j.job_id AND c.status NOT IN ` + terminal + `))`

// archived renders s's select list of a job for the archive tables.
var archived = strings.NewReplacer("scheduler_job_tag", "scheduler_job_archive_tag")

// ArchiveJobs moves up to limit terminal jobs finished before before,
// lowest ids first, with their tags, properties and state, to the archive.
// Their signal waits are dropped. The children of an open batch stay (see
// keepsBatches). It implements [spi.JobArchiver].
func (c Core[T]) ArchiveJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	s := &c.cfg.D.Syntax
	moved := 0
	err := c.do("archive jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			moved = 0
			q, args := s.limited("SELECT j.job_id FROM {job} j WHERE j.status IN "+terminal+" AND j.finished_time < ?"+keepsParents+keepsBatches+" ORDER BY j.job_id",
				int64(max(limit, 1)), s.time(before))
			ids, err := c.readIDs(ctx, tx, q, args)
			if err != nil || len(ids) == 0 {
				return err
			}
			_, err = InChunks(ids, c.cfg.D.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
				took, err := c.leave(ctx, tx, ids, archiveCopies)
				moved += len(took)
				return nil, err
			})
			return err
		})
	})
	return moved, err
}

// archiveCopies copies jobs to the archive before leave deletes them.
var archiveCopies = []string{
	"INSERT INTO {archive} SELECT * FROM {job} WHERE job_id IN (?)",
	"INSERT INTO {archive_tag} SELECT * FROM {tag} WHERE job_id IN (?)",
	"INSERT INTO {archive_prop} SELECT * FROM {prop} WHERE job_id IN (?)",
	"INSERT INTO {archive_state} SELECT * FROM {state} WHERE job_id IN (?)",
}

// leaveDeletes take jobs out of the live tables (the job last); a
// deletion also drops their log lines and attempt records, which the
// archive keeps.
var leaveDeletes = []string{
	"DELETE FROM {tag} WHERE job_id IN (?)",
	"DELETE FROM {prop} WHERE job_id IN (?)",
	"DELETE FROM {state} WHERE job_id IN (?)",
	"DELETE FROM {dep} WHERE child_id IN (?)",
	"DELETE FROM {signal} WHERE job_id IN (?)",
	"DELETE FROM {job} WHERE job_id IN (?)",
}

// leave locks those of ids (candidates of the archive's kind) that are
// still finished, runs first on them, and takes them out of the live
// tables, in tx; it returns the ids it took. An archive move copies them
// first (archiveCopies), a deletion drops their log lines and attempt
// records.
func (c Core[T]) leave(ctx context.Context, tx *sql.Tx, ids []uuid.UUID, first []string) ([]uuid.UUID, error) {
	s := &c.cfg.D.Syntax
	q, args := s.SQL("SELECT job_id FROM {job}"+s.LockHint+" WHERE status IN "+terminal+" AND job_id IN (?) ORDER BY job_id"+s.LockOn, s.ids(ids))
	locked, err := c.readIDs(ctx, tx, q, args)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	in := s.ids(locked)
	for _, stmt := range slices.Concat(first, leaveDeletes) {
		q, args := s.SQL(stmt, in)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, err
		}
	}
	return locked, nil
}

// PurgeArchivedJobs deletes for good up to limit archived jobs finished
// before before, oldest finish first, with their archived tags,
// properties and state, their log lines and their attempt records (the
// live log and attempt tables keep those of archived jobs), in one
// transaction. It implements
// [spi.JobArchiver].
func (c Core[T]) PurgeArchivedJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	s := &c.cfg.D.Syntax
	purged := 0
	err := c.do("purge archived jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			purged = 0
			q, args := s.limited("SELECT job_id FROM {archive} WHERE finished_time < ? ORDER BY finished_time, job_id",
				int64(max(limit, 1)), s.time(before))
			ids, err := c.readIDs(ctx, tx, q, args)
			if err != nil || len(ids) == 0 {
				return err
			}
			_, err = InChunks(ids, c.cfg.D.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
				in := s.ids(ids)
				var r sql.Result
				for _, stmt := range purgeDeletes {
					q, args := s.SQL(stmt, in)
					var err error
					if r, err = tx.ExecContext(ctx, q, args...); err != nil {
						return nil, err
					}
				}
				n, err := r.RowsAffected() // of the jobs, the last: a purge beside this one may have taken some
				purged += int(n)
				return nil, err
			})
			return err
		})
	})
	return purged, err
}

// purgeDeletes delete archived jobs for good (the job last), with their
// log lines and attempt records.
var purgeDeletes = []string{
	"DELETE FROM {archive_tag} WHERE job_id IN (?)",
	"DELETE FROM {archive_prop} WHERE job_id IN (?)",
	"DELETE FROM {archive_state} WHERE job_id IN (?)",
	"DELETE FROM {log} WHERE job_id IN (?)",
	"DELETE FROM {attempt} WHERE job_id IN (?)",
	"DELETE FROM {archive} WHERE job_id IN (?)",
}

// readIDs reads a column of job ids.
func (c Core[T]) readIDs(ctx context.Context, tx *sql.Tx, q string, args []any) ([]uuid.UUID, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var raw T
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		id, err := c.cfg.D.ParseID(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// GetArchivedJob returns an archived job with its properties. It
// implements [spi.JobArchiver].
func (c Core[T]) GetArchivedJob(ctx context.Context, id uuid.UUID) (*spi.Job, error) {
	s := &c.cfg.D.Syntax
	var j *spi.Job
	err := c.do("get archived job "+id.String(), func() error {
		q, args := s.SQL("SELECT "+archived.Replace(s.JobColumns)+" FROM {archive} j WHERE j.job_id = ?", s.id(id))
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		j, err = ReadOne(rows, id, c.cfg.D.Decoder(rows))
		rows.Close()
		if err != nil {
			return err
		}
		q, args = s.SQL("SELECT prop_key, prop_value FROM {archive_prop} WHERE job_id = ?", s.id(id))
		prows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer prows.Close()
		for prows.Next() {
			var k string
			var v sql.NullString // Oracle's NULL for ""
			if err := prows.Scan(&k, &v); err != nil {
				return err
			}
			if j.Properties == nil {
				j.Properties = map[string]string{}
			}
			j.Properties[k] = v.String
		}
		return prows.Err()
	})
	return j, err
}

// ListArchivedJobs lists archived jobs as ListJobs lists live ones. It
// implements [spi.JobArchiver].
func (c Core[T]) ListArchivedJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	s := &c.cfg.D.Syntax
	return c.listPage(ctx, "list archived jobs", false, p, func(p spi.ListParams, limit int) (string, []any) {
		_, where, args := s.listed(p)
		where = strings.NewReplacer("{prop}", "{archive_prop}", "{tag}", "{archive_tag}").Replace(where)
		return s.limited("SELECT "+archived.Replace(s.JobColumns)+"\n\tFROM {archive} j WHERE "+where+"\n\tORDER BY j.job_id", int64(limit), args...)
	})
}

// DeleteJobs deletes those of ids that are finished, with their tags,
// properties, state, log lines, attempt records, dependency and signal
// rows, in one
// transaction: the same candidates as the archive's (a parent whose
// dependents have not all finished stays, and so does a child of an open
// batch), locked first, so that a DLQ retry meanwhile either comes first
// (and the job stays) or finds no job. It implements [spi.JobDeleter].
func (c Core[T]) DeleteJobs(ctx context.Context, ids []uuid.UUID) ([]bool, error) {
	s := &c.cfg.D.Syntax
	gone := map[uuid.UUID]bool{}
	err := c.do("delete jobs", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			clear(gone)
			_, err := InChunks(ids, c.cfg.D.chunk(), func(ids []uuid.UUID) ([]struct{}, error) {
				q, args := s.SQL("SELECT j.job_id FROM {job} j WHERE j.job_id IN (?) AND j.status IN "+terminal+keepsParents+keepsBatches, s.ids(ids))
				cands, err := c.readIDs(ctx, tx, q, args)
				if err != nil || len(cands) == 0 {
					return nil, err
				}
				locked, err := c.leave(ctx, tx, cands, []string{"DELETE FROM {log} WHERE job_id IN (?)", "DELETE FROM {attempt} WHERE job_id IN (?)"})
				if err != nil {
					return nil, err
				}
				for _, id := range locked {
					gone[id] = true
				}
				return nil, nil
			})
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(ids))
	for i, id := range ids {
		out[i] = gone[id]
	}
	return out, nil
}
