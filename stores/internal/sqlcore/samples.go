package sqlcore

import (
	"context"
	"database/sql"
	"time"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// The history of the job counts (spi.StatsSampleStore, migration PostgreSQL
// 20, SQLite 20, MySQL 22, SQL Server 19, Oracle 19), in the portable SQL
// of every dialect: one row per minute in {sample}, keyed by the minute as
// Unix seconds, its counts in their stored form (spi.EncodeStatsCounts).
// Every process that samples records into the same minutes, and the
// database's primary key decides which sample of a minute is kept: the
// first insert of the minute's row, whichever process made it.

// sampleRetention is spi.StatsSampleRetention in the seconds of
// sample_minute.
const sampleRetention = int64(spi.StatsSampleRetention / time.Second)

// RecordStatsSample keeps smp as the sample of its minute unless the minute
// has one, and reports whether it kept it; then it deletes the samples of
// the minutes more than spi.StatsSampleRetention before, all in one
// transaction. The insert does nothing when the minute's row exists (ON
// CONFLICT DO NOTHING where the dialect has it); elsewhere, its
// duplicate key (the row there already, or inserted meanwhile by another
// process) means that the sample is not kept, the databases without ON
// CONFLICT undoing the failed statement only. A COMMIT whose outcome was
// lost runs the transaction again, which then finds the sample it kept
// and reports false. It implements [spi.StatsSampleStore].
func (c Core[T]) RecordStatsSample(ctx context.Context, smp spi.StatsSample) (bool, error) {
	s := &c.cfg.D.Syntax
	minute, counts := smp.Minute().Unix(), spi.EncodeStatsCounts(smp.Counts)
	var kept bool
	err := c.do("record a stats sample", func() error {
		return c.inTx(ctx, nil, func(tx *sql.Tx) error {
			q, args := s.insertSample(minute, counts)
			var err error
			kept, err = applied(tx.ExecContext(ctx, q, args...))
			if err != nil && c.cfg.D.IsDuplicate != nil && c.cfg.D.IsDuplicate(err) {
				kept, err = false, nil // the minute has its sample
			}
			if err != nil {
				return err
			}
			q, args = s.dropSamples(minute - sampleRetention)
			_, err = tx.ExecContext(ctx, q, args...)
			return err
		})
	})
	return kept, err
}

// StatsSamples returns the samples of since's minute and the later ones,
// oldest first, at most limit (zero or less: spi.StatsSampleRetention's
// minutes): one range of the primary key. A row whose counts cannot be
// read is left out (so a page may hold fewer than limit samples). It
// implements [spi.StatsSampleStore].
func (c Core[T]) StatsSamples(ctx context.Context, since time.Time, limit int) ([]spi.StatsSample, error) {
	if limit <= 0 {
		limit = int(spi.StatsSampleRetention / time.Minute)
	}
	type row struct {
		minute int64
		counts sql.NullString
	}
	q, args := c.cfg.D.Syntax.statsSamples(since.UTC().Truncate(time.Minute).Unix(), limit)
	rows, err := queryAll(ctx, c, "read the stats samples", q, args, func(rows *sql.Rows) (row, error) {
		var r row
		return r, rows.Scan(&r.minute, &r.counts)
	})
	if err != nil {
		return nil, err
	}
	out := make([]spi.StatsSample, 0, len(rows))
	for _, r := range rows {
		if !r.counts.Valid {
			continue
		}
		counts, err := spi.DecodeStatsCounts(r.counts.String)
		if err != nil {
			continue // left out, as spi.StatsSampleStore says
		}
		out = append(out, spi.StatsSample{At: time.Unix(r.minute, 0).UTC(), Counts: counts})
	}
	return out, nil
}

// The sample statements, in the syntax of a dialect.

// insertSample inserts the sample of minute (Unix seconds) with its
// stored counts, doing nothing when the minute has one where the dialect
// has ON CONFLICT.
func (s *Syntax) insertSample(minute int64, counts string) (string, []any) {
	q := "INSERT INTO {sample} (sample_minute, counts) VALUES (?, ?)"
	if s.OnConflict {
		q += "\n\tON CONFLICT (sample_minute) DO NOTHING"
	}
	return s.SQL(q, minute, s.long(counts))
}

// dropSamples deletes the samples of the minutes before cut.
func (s *Syntax) dropSamples(cut int64) (string, []any) {
	return s.SQL("DELETE FROM {sample} WHERE sample_minute < ?", cut)
}

// statsSamples reads the first limit samples from minute from on.
func (s *Syntax) statsSamples(from int64, limit int) (string, []any) {
	return s.limited("SELECT sample_minute, counts FROM {sample} WHERE sample_minute >= ? ORDER BY sample_minute", int64(limit), from)
}

// sampleStatements are the sample statements for the golden files.
func (s *Syntax) sampleStatements() map[string]string {
	text := func(q string, _ []any) string { return q }
	return map[string]string{
		"sample_insert": text(s.insertSample(60, "{}")),
		"sample_drop":   text(s.dropSamples(60)),
		"sample_read":   text(s.statsSamples(60, 10)),
	}
}
