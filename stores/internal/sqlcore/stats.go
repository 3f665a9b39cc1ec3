package sqlcore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// JobCountsSQL counts the jobs of table by status, task and priority, in
// the five columns Dialect.JobCountsSQL reads (estimated 0).
func JobCountsSQL(table string) string {
	return `SELECT status, task_name, priority, COUNT(*), 0 FROM ` + table + ` GROUP BY status, task_name, priority`
}

// OldestDueSQL reads the earliest scheduled time of the PENDING jobs of
// table due at its one argument, in the dialects that have WITH RECURSIVE
// and LIMIT (see PendingTasksSQL): for each pending task and each priority
// level, one probe of the task-led claim index (task_name, priority,
// scheduled_time), instead of a scan of every PENDING entry. claimTask is
// the dialect's Syntax.ClaimTask.
func OldestDueSQL(table, claimTask string) string {
	levels := `SELECT 0 AS lvl UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4`
	k := claimKey(claimTask)
	return pendingTasksCTE(table, k) + `
		SELECT MIN(d) FROM (SELECT (SELECT MIN(j.scheduled_time) FROM ` + table + ` j
				WHERE ` + k.of("j.", "t.name") + ` AND j.priority = p.lvl AND j.scheduled_time <= ?) AS d
			FROM t CROSS JOIN (` + levels + `) p WHERE t.name IS NOT NULL) x`
}

// OldestDuePlainSQL is OldestDueSQL for the dialects without WITH
// RECURSIVE (SQL Server, Oracle): one MIN over the PENDING jobs.
func OldestDuePlainSQL(table string) string {
	return `SELECT MIN(scheduled_time) FROM ` + table + ` WHERE status = 'PENDING' AND scheduled_time <= ?`
}

// OldestDuePlain is the Dialect.OldestDueSQL of OldestDuePlainSQL, in s.
func OldestDuePlain(s *Syntax) func(now time.Time) (string, []any) {
	return func(now time.Time) (string, []any) { return s.SQL(OldestDuePlainSQL("{job}"), s.time(now)) }
}

// JobStats reads the gauges of the live jobs: the counts of JobCountsSQL
// and the oldest due job of OldestDueSQL. It implements [spi.StatsReader].
func (c Core[T]) JobStats(ctx context.Context, now time.Time) (spi.JobStats, error) {
	var st spi.JobStats
	err := c.do("read job stats", func() error {
		st = spi.JobStats{}
		q, err := c.cfg.D.JobCountsSQL(ctx, c.cfg.DB)
		if err != nil {
			return err
		}
		rows, err := c.cfg.DB.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var jc spi.JobCount
			var status string
			var est int64
			if err := rows.Scan(&status, &jc.Task, &jc.Priority, &jc.N, &est); err != nil {
				return err
			}
			jc.Status = spi.Status(status)
			st.Estimated = st.Estimated || est != 0
			if jc.N > 0 {
				st.Counts = append(st.Counts, jc)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		q, args := c.cfg.D.OldestDueSQL(now)
		var v any
		if err := c.cfg.DB.QueryRowContext(ctx, q, args...).Scan(&v); err != nil && err != sql.ErrNoRows {
			return err
		}
		st.OldestDue, err = c.cfg.D.timeOf(v)
		return err
	})
	return st, err
}
