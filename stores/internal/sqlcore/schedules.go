package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The recurring schedules (spi.ScheduleStore), in the portable SQL of every
// dialect: one row per schedule in {sched}, every write a compare-and-set
// on its version. A fire advances the row first (its UPDATE locks it, so
// that concurrent firers queue behind it and then find the version moved
// on) and inserts the slots' jobs in the same transaction, under their
// unique idempotency keys.

const scheduleColumns = `schedule_id, task_name, definition, paused, next_fire_time, last_fire_time, last_job_id,
	skipped_count, version, created_time, updated_time`

// flag is a boolean column's value.
func flag(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// CreateSchedule writes a new schedule at version 1; false when the id
// exists. It implements [spi.ScheduleStore].
func (c Core[T]) CreateSchedule(ctx context.Context, r spi.ScheduleRow) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, c.cfg.Fail("create schedule", err)
	}
	q, args := c.cfg.D.Syntax.createSchedule(r)
	var created bool
	err := c.do("create schedule "+r.ID, func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			created, err = applied(tx.ExecContext(ctx, q, args...))
			if err != nil && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
				created, err = false, nil
			}
			return err
		})
	})
	return created, err
}

// UpdateSchedule replaces the schedule's task, definition, pause flag and
// next fire time if its version is still expected. It implements
// [spi.ScheduleStore].
func (c Core[T]) UpdateSchedule(ctx context.Context, r spi.ScheduleRow, expected int64) (bool, error) {
	if err := spi.ValidateScheduleRow(r); err != nil {
		return false, c.cfg.Fail("update schedule", err)
	}
	q, args := c.cfg.D.Syntax.updateSchedule(r, expected)
	var ok bool
	err := c.do("update schedule "+r.ID, func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			ok, err = applied(tx.ExecContext(ctx, q, args...))
			return err
		})
	})
	return ok, err
}

// GetSchedule returns the schedule of id. It implements
// [spi.ScheduleStore].
func (c Core[T]) GetSchedule(ctx context.Context, id string) (spi.ScheduleRow, bool, error) {
	q, args := c.cfg.D.Syntax.getSchedule(id)
	rows, err := c.schedules(ctx, "get schedule "+id, q, args)
	if err != nil || len(rows) == 0 {
		return spi.ScheduleRow{}, false, err
	}
	return rows[0], true, nil
}

// ListSchedules returns up to limit schedules with ids above after, in id
// order. It implements [spi.ScheduleStore].
func (c Core[T]) ListSchedules(ctx context.Context, after string, limit int) ([]spi.ScheduleRow, error) {
	q, args := c.cfg.D.Syntax.listSchedules(after, limit)
	return c.schedules(ctx, "list schedules", q, args)
}

// DueSchedules returns up to limit unpaused schedules due at now, earliest
// first. It implements [spi.ScheduleStore].
func (c Core[T]) DueSchedules(ctx context.Context, now time.Time, limit int) ([]spi.ScheduleRow, error) {
	q, args := c.cfg.D.Syntax.dueSchedules(now, limit)
	return c.schedules(ctx, "due schedules", q, args)
}

// DeleteSchedule deletes the schedule and its skip records. It implements
// [spi.ScheduleStore].
func (c Core[T]) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	q, args := c.cfg.D.Syntax.deleteSchedule(id)
	var ok bool
	skips, skipArgs := c.cfg.D.Syntax.deleteSkips(id)
	err := c.do("delete schedule "+id, func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) (err error) {
			if _, err := tx.ExecContext(ctx, skips, skipArgs...); err != nil {
				return err
			}
			ok, err = applied(tx.ExecContext(ctx, q, args...))
			return err
		})
	})
	return ok, err
}

// FireSchedule advances the schedule if it is still at f.Version and
// inserts f.Jobs, in one transaction. A run again after a COMMIT whose
// outcome is unknown recognizes its own advance by the version and the
// first job. It implements [spi.ScheduleStore].
func (c Core[T]) FireSchedule(ctx context.Context, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	if err := c.validateJobs(f.Jobs); err != nil {
		return false, nil, c.cfg.Fail("fire schedule "+f.ID, err)
	}
	advance, advanceArgs := c.cfg.D.Syntax.advanceSchedule(f)
	var ok bool
	var res []spi.InsertResult
	err := c.do("fire schedule "+f.ID, func() error {
		return c.inTxAt(ctx, c.cfg.D.InsertRetryable, func(tx *sql.Tx, at Attempt) (err error) {
			ok, res = false, nil
			if ok, err = applied(tx.ExecContext(ctx, advance, advanceArgs...)); err != nil {
				return err
			}
			if !ok {
				if at.Uncertain {
					ok, res, err = c.ownFire(ctx, tx, f)
				}
				return err
			}
			if rec, skipped := f.SkipRecord(); skipped {
				if err := c.recordSkip(ctx, tx, f.ID, rec); err != nil {
					return err
				}
			}
			if len(f.Jobs) > 0 {
				res, err = c.cfg.D.Insert(ctx, tx, f.Jobs, at.Uncertain)
			}
			return err
		})
	})
	if err == nil && ok && c.cfg.D.Wake != nil && len(f.Jobs) > 0 {
		top := spi.PriorityLowest
		for i, r := range res {
			if !r.Duplicate {
				top = max(top, f.Jobs[i].Priority)
			}
		}
		c.cfg.D.Wake(ctx, int(top))
	}
	return ok, res, err
}

// recordSkip writes a skip record and, when spi.ShedSkipRecords says so,
// drops those past the latest spi.MaxSkipRecords.
func (c Core[T]) recordSkip(ctx context.Context, tx *sql.Tx, id string, rec spi.SkipRecord) error {
	s := &c.cfg.D.Syntax
	q, args := s.insertSkip(id, rec)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return err
	}
	var n int64
	q, args = s.SQL("SELECT COUNT(*) FROM {skip} WHERE schedule_id = ?", s.name(id))
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&n); err != nil || !spi.ShedSkipRecords(n) {
		return err
	}
	q, args = s.scheduleSkips(id, spi.MaxSkipRecords)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	var oldest, to, slots, at any
	for rows.Next() {
		if err := rows.Scan(&oldest, &to, &slots, &at); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	t, err := c.cfg.D.timeOf(oldest)
	if err != nil {
		return err
	}
	q, args = s.SQL("DELETE FROM {skip} WHERE schedule_id = ? AND from_time < ?", s.name(id), s.time(t))
	_, err = tx.ExecContext(ctx, q, args...)
	return err
}

// ScheduleSkips returns the schedule's skip records, the latest first. It
// implements [spi.ScheduleStore].
func (c Core[T]) ScheduleSkips(ctx context.Context, id string, limit int) ([]spi.SkipRecord, error) {
	if limit <= 0 {
		limit = 100
	}
	q, args := c.cfg.D.Syntax.scheduleSkips(id, limit)
	return queryAll(ctx, c, "read the skips of schedule "+id, q, args, func(rows *sql.Rows) (spi.SkipRecord, error) {
		var r spi.SkipRecord
		var from, to, at any
		if err := rows.Scan(&from, &to, &r.Slots, &at); err != nil {
			return r, fmt.Errorf("skip record of schedule %q: %w", id, err)
		}
		var err error
		for _, t := range []struct {
			v   any
			out *time.Time
		}{{from, &r.From}, {to, &r.To}, {at, &r.At}} {
			if *t.out, err = c.cfg.D.timeOf(t.v); err != nil {
				return r, fmt.Errorf("skip record of schedule %q: unreadable time: %w", id, err)
			}
		}
		return r, nil
	})
}

// ownFire tells, after a COMMIT whose outcome is unknown, whether that
// COMMIT applied f: the schedule is one version on and f's first job (if
// any) exists.
func (c Core[T]) ownFire(ctx context.Context, tx *sql.Tx, f spi.ScheduleFire) (bool, []spi.InsertResult, error) {
	q, args := c.cfg.D.Syntax.scheduleVersion(f.ID)
	var v int64
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&v); errors.Is(err, sql.ErrNoRows) || (err == nil && v != f.Version+1) {
		return false, nil, nil
	} else if err != nil {
		return false, nil, err
	}
	res := make([]spi.InsertResult, len(f.Jobs))
	if len(f.Jobs) == 0 {
		return true, res, nil
	}
	ids := make([]uuid.UUID, len(f.Jobs))
	for i, j := range f.Jobs {
		ids[i], res[i] = j.ID, spi.InsertResult{ID: j.ID}
	}
	got, err := c.cfg.D.LoadJobs(ctx, tx, ids[:1])
	return err == nil && len(got) == 1, res, err
}

// schedules runs a query of schedule rows.
func (c Core[T]) schedules(ctx context.Context, op, q string, args []any) ([]spi.ScheduleRow, error) {
	return queryAll(ctx, c, op, q, args, c.scanSchedule)
}

func (c Core[T]) scanSchedule(rows *sql.Rows) (spi.ScheduleRow, error) {
	var (
		r                            spi.ScheduleRow
		paused                       int64
		next, last, created, updated any
		lastJob                      sql.Null[T]
		timeErr                      error
		times                        = []*time.Time{&r.NextFireAt, &r.LastFireAt, &r.CreatedAt, &r.UpdatedAt}
		scanned                      = []*any{&next, &last, &created, &updated}
	)
	if err := rows.Scan(&r.ID, &r.TaskName, &r.Definition, &paused, &next, &last, &lastJob, &r.Skipped, &r.Version, &created, &updated); err != nil {
		return r, fmt.Errorf("schedule row: %w", err)
	}
	r.Paused = paused != 0
	for i, v := range scanned {
		if *times[i], timeErr = c.cfg.D.timeOf(*v); timeErr != nil {
			return r, fmt.Errorf("schedule %q: unreadable time: %w", r.ID, timeErr)
		}
	}
	if lastJob.Valid {
		id, err := c.cfg.D.ParseID(lastJob.V)
		if err != nil {
			return r, fmt.Errorf("schedule %q: unreadable last job id: %w", r.ID, err)
		}
		r.LastJobID = id
	}
	return r, nil
}

// The schedule statements, in the syntax of a dialect.

func (s *Syntax) createSchedule(r spi.ScheduleRow) (string, []any) {
	q, args := s.SQL("INSERT INTO {sched} ("+scheduleColumns+`)
	VALUES (?, ?, ?, ?, ?, NULL, NULL, 0, 1, ?, ?)`, s.name(r.ID), r.TaskName, s.blob(r.Definition), flag(r.Paused),
		s.time(r.NextFireAt), s.time(r.CreatedAt), s.time(r.UpdatedAt))
	if s.OnConflict {
		q += "\n\tON CONFLICT (schedule_id) DO NOTHING"
	}
	return q, args
}

func (s *Syntax) updateSchedule(r spi.ScheduleRow, expected int64) (string, []any) {
	return s.SQL(`UPDATE {sched} SET task_name = ?, definition = ?, paused = ?, next_fire_time = ?, updated_time = ?,
		version = version + 1
	WHERE schedule_id = ? AND version = ?`, r.TaskName, s.blob(r.Definition), flag(r.Paused), s.time(r.NextFireAt),
		s.time(r.UpdatedAt), s.name(r.ID), expected)
}

func (s *Syntax) getSchedule(id string) (string, []any) {
	return s.SQL("SELECT "+scheduleColumns+" FROM {sched} WHERE schedule_id = ?", s.name(id))
}

func (s *Syntax) listSchedules(after string, limit int) (string, []any) {
	return s.limited("SELECT "+scheduleColumns+" FROM {sched} WHERE schedule_id > ? ORDER BY schedule_id", int64(max(limit, 1)), s.name(after))
}

func (s *Syntax) dueSchedules(now time.Time, limit int) (string, []any) {
	return s.limited("SELECT "+scheduleColumns+` FROM {sched}
	WHERE paused = 0 AND next_fire_time <= ? ORDER BY next_fire_time, schedule_id`, int64(max(limit, 1)), s.time(now))
}

func (s *Syntax) deleteSchedule(id string) (string, []any) {
	return s.SQL("DELETE FROM {sched} WHERE schedule_id = ?", s.name(id))
}

func (s *Syntax) advanceSchedule(f spi.ScheduleFire) (string, []any) {
	set, args := "next_fire_time = ?, skipped_count = skipped_count + ?, updated_time = ?", []any{s.time(f.NextFireAt), f.Skipped, s.time(f.Now)}
	if len(f.Jobs) > 0 {
		set, args = set+", last_fire_time = ?, last_job_id = ?", append(args, s.time(f.LastFireAt), s.id(f.LastJobID))
	}
	return s.SQL("UPDATE {sched} SET "+set+", version = version + 1\n\tWHERE schedule_id = ? AND version = ?",
		append(args, s.name(f.ID), f.Version)...)
}

func (s *Syntax) insertSkip(id string, r spi.SkipRecord) (string, []any) {
	return s.SQL("INSERT INTO {skip} (schedule_id, from_time, to_time, slots, recorded_time) VALUES (?, ?, ?, ?, ?)",
		s.name(id), s.time(r.From), s.time(r.To), r.Slots, s.time(r.At))
}

func (s *Syntax) scheduleSkips(id string, limit int) (string, []any) {
	return s.limited("SELECT from_time, to_time, slots, recorded_time FROM {skip} WHERE schedule_id = ? ORDER BY from_time DESC",
		int64(limit), s.name(id))
}

func (s *Syntax) deleteSkips(id string) (string, []any) {
	return s.SQL("DELETE FROM {skip} WHERE schedule_id = ?", s.name(id))
}

func (s *Syntax) scheduleVersion(id string) (string, []any) {
	return s.SQL("SELECT version FROM {sched} WHERE schedule_id = ?", s.name(id))
}

// Statements returns the text of the statements of the optional features
// (schedule_*, log_*, signal_*, batch_*, bulk_*, ...) in the syntax, by name, for a dialect's reviewed
// golden files.
func (s *Syntax) Statements() map[string]string {
	t := time.Unix(0, 0)
	r := spi.ScheduleRow{ID: "s", TaskName: "t", NextFireAt: t}
	text := func(q string, _ []any) string { return q }
	m := map[string]string{
		"schedule_create":  text(s.createSchedule(r)),
		"schedule_update":  text(s.updateSchedule(r, 1)),
		"schedule_get":     text(s.getSchedule("s")),
		"schedule_list":    text(s.listSchedules("", 10)),
		"schedule_due":     text(s.dueSchedules(t, 10)),
		"schedule_delete":  text(s.deleteSchedule("s")),
		"schedule_advance": text(s.advanceSchedule(spi.ScheduleFire{ID: "s", Jobs: []*spi.Job{{}}})),
		"schedule_version": text(s.scheduleVersion("s")),
		"schedule_skip":    text(s.insertSkip("s", spi.SkipRecord{From: t, To: t, At: t})),
		"schedule_skips":   text(s.scheduleSkips("s", 10)),
		"schedule_unskip":  text(s.deleteSkips("s")),
		"log_tally":        text(s.logTally(spi.ClaimRef{})),
		"log_insert":       text(s.insertLogLine(uuid.Nil, spi.LogLine{Time: t, Message: "m"})),
		"log_read":         text(s.jobLogs(uuid.Nil, spi.LogCursor{}, 10)),
		"log_old":          text(s.oldLogs(t, 10)),
		"log_delete":       text(s.deleteLogs([]uuid.UUID{uuid.Nil}, t)),
	}
	for name, q := range s.signalStatements() {
		m[name] = q
	}
	for name, q := range s.batchStatements() {
		m[name] = q
	}
	for name, q := range s.listStatements() {
		m[name] = q
	}
	for name, q := range s.rewriteStatements() {
		m[name] = q
	}
	for name, q := range s.auditStatements() {
		m[name] = q
	}
	for name, q := range s.bulkStatements() {
		m[name] = q
	}
	for name, q := range s.sampleStatements() {
		m[name] = q
	}
	return m
}
