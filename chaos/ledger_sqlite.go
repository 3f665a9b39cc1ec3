package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/google/uuid"

	ratchet "github.com/ratchet-go/ratchet/sdk"
)

// SQLiteLedger is the ledger in the SQLite database of db (as stores/sqlite
// opens it). Its tables are those of the other databases; job ids are their
// text, as in scheduler_job. Times are the machine's wall clock: the
// processes sharing an SQLite file share one machine, so they share that
// clock (and a node's skewed engine clock never reaches the ledger).
func SQLiteLedger(db *sql.DB) *Ledger {
	return &Ledger{db: db, lite: true, run: RunTable, final: FinalTable, job: "scheduler_job"}
}

// prepareSQLite is Prepare on SQLite.
func (l *Ledger) prepareSQLite(ctx context.Context) error {
	if _, err := l.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+l.run+` (
		run_id      INTEGER  PRIMARY KEY AUTOINCREMENT,
		job_id      TEXT     NOT NULL,
		node        TEXT     NOT NULL,
		task        TEXT     NOT NULL,
		claim_seq   INTEGER,
		attempt     INTEGER  NOT NULL,
		crash_count INTEGER  NOT NULL,
		started_at  DATETIME NOT NULL,
		ended_at    DATETIME,
		outcome     TEXT,
		token       TEXT     NOT NULL UNIQUE
	)`); err != nil {
		return fmt.Errorf("chaos: create %s: %w", RunTable, err)
	}
	if _, err := l.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+l.final+` (
		final_id INTEGER  PRIMARY KEY AUTOINCREMENT,
		job_id   TEXT     NOT NULL,
		node     TEXT     NOT NULL,
		event    TEXT     NOT NULL,
		at       DATETIME NOT NULL
	)`); err != nil {
		return fmt.Errorf("chaos: create %s: %w", FinalTable, err)
	}
	return nil
}

// startSQLite is start on SQLite.
func (l *Ledger) startSQLite(ctx context.Context, jc *ratchet.JobContext, node string, token uuid.UUID) (int64, error) {
	var run int64
	err := l.db.QueryRowContext(ctx, `INSERT INTO `+l.run+` (job_id, node, task, claim_seq, attempt, crash_count, started_at, token)
		VALUES (?, ?, ?, (SELECT claim_seq FROM `+l.job+` WHERE job_id = ?), ?, ?, ?, ?) RETURNING run_id`,
		jc.ID.String(), node, jc.TaskName, jc.ID.String(), jc.Run, jc.CrashCount, time.Now().UTC(), token.String()).Scan(&run)
	return run, err
}

// endSQLite is end on SQLite.
func (l *Ledger) endSQLite(ctx context.Context, run int64, outcome string) error {
	_, err := l.db.ExecContext(ctx, `UPDATE `+l.run+` SET ended_at = ?, outcome = ? WHERE run_id = ?`, time.Now().UTC(), outcome, run)
	return err
}

// recordFinalSQLite is RecordFinal's write on SQLite.
func (l *Ledger) recordFinalSQLite(ctx context.Context, f Final) error {
	_, err := l.db.ExecContext(ctx, `INSERT INTO `+l.final+` (job_id, node, event, at) VALUES (?, ?, ?, ?)`,
		f.JobID.String(), f.Node, f.Event, f.At.UTC())
	return err
}
