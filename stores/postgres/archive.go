package postgres

import (
	"context"
	"time"
)

// archiveSQL moves a batch of finished jobs in one statement ($1: the
// cutoff, $2: the batch): the candidates are locked, skipping those a DLQ
// retry holds (it wins; a later run takes them if they finish again);
// every sub-statement sees the same snapshot, so the tags, properties and
// state are copied while the DELETE of the jobs (which cascades to them)
// runs; their dependencies and signal waits are deleted. The children of
// an open batch stay, so that its end sees them all. Its two
// parameters replace the core's eleven statements of 1,000 bound ids each,
// whose parsing and planning were most of a batch.
const archiveSQL = `WITH c AS (
	SELECT job_id FROM {job} j
	WHERE status IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'SKIPPED') AND finished_time < $1
		AND (dep_children = 0 OR NOT EXISTS (SELECT 1 FROM {dep} d JOIN {job} k ON k.job_id = d.child_id
			WHERE d.parent_id = j.job_id AND k.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED', 'SKIPPED')))
		AND (workflow_id IS NULL OR NOT EXISTS (SELECT 1 FROM {batch} b WHERE b.batch_id = j.workflow_id AND b.outcome IS NULL))
	ORDER BY job_id LIMIT $2 FOR UPDATE SKIP LOCKED
), dp AS (
	DELETE FROM {dep} x USING c WHERE x.child_id = c.job_id
), sg AS (
	DELETE FROM {signal} x USING c WHERE x.job_id = c.job_id
), t AS (
	INSERT INTO {archive_tag} SELECT x.* FROM {tag} x JOIN c USING (job_id)
), p AS (
	INSERT INTO {archive_prop} SELECT x.* FROM {prop} x JOIN c USING (job_id)
), s AS (
	INSERT INTO {archive_state} SELECT x.* FROM {state} x JOIN c USING (job_id)
), m AS (
	DELETE FROM {job} j USING c WHERE j.job_id = c.job_id RETURNING j.*
)
INSERT INTO {archive} SELECT * FROM m`

// ArchiveJobs moves up to limit terminal jobs finished before before,
// lowest ids first, with their tags, properties and state, to the archive,
// archiveStep jobs per statement (each its own transaction). It implements
// [spi.JobArchiver].
func (s *Store) ArchiveJobs(ctx context.Context, before time.Time, limit int) (int, error) {
	done, err := s.enter()
	if err != nil {
		return 0, err
	}
	defer done()
	moved := 0
	for moved < max(limit, 1) {
		tag, err := s.pool.Exec(ctx, s.sql.archive, before.UTC(), min(archiveStep, max(limit, 1)-moved))
		if err != nil {
			return moved, fail("archive jobs", err)
		}
		n := int(tag.RowsAffected())
		if moved += n; n == 0 {
			break
		}
	}
	return moved, nil
}

// archiveStep is the most jobs one statement moves: a step of 1,000 jobs
// held up the claims and completions running beside it (most likely
// behind its WAL, flushed at its commit): p99 of the jobs waiting during
// a back-to-back archive of 100,000 jobs 30-50 ms in steps of 1,000,
// 25-29 ms in steps of 100, on 2 cores; the archive itself takes about
// 1.5 times as long.
const archiveStep = 100
