package storeflag

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/ratchet-go/ratchet/stores/postgres"
)

// The server's own COPY: the rate a bench's insert is held to. The rows a
// burn-down inserted are exported and written again, by the server alone,
// into an empty job table that the same migrations made (same columns,
// indexes, fill factor), in transactions of the bench's batch on one
// connection, as the store writes a batch of new jobs: what no client can
// beat, since the client's share (building, encoding and sending the
// rows) is left out.

// copySuffix names the schema of the reference: the run's schema and it.
const copySuffix = "_copy"

// copyReference migrates the schema from+copySuffix, times the copy of
// from's job table into it (copyJobs), drops it, and returns the rows
// written per second of the timed part.
func copyReference(ctx context.Context, pool *pgxpool.Pool, from string, batch int) (float64, error) {
	to := from + copySuffix
	drop := func(ctx context.Context) error {
		_, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{to}.Sanitize()+" CASCADE")
		return err
	}
	if err := drop(ctx); err != nil {
		return 0, fmt.Errorf("server COPY: drop %s: %w", to, err)
	}
	if _, err := postgres.Migrate(ctx, pool, to); err != nil {
		return 0, fmt.Errorf("server COPY: migrate %s: %w", to, err)
	}
	rows, took, err := copyJobs(ctx, pool, from, to, batch)
	if derr := drop(context.WithoutCancel(ctx)); derr != nil && err == nil {
		err = fmt.Errorf("server COPY: drop %s: %w", to, derr)
	}
	if err != nil {
		return 0, err
	}
	if rows == 0 || took <= 0 {
		return 0, fmt.Errorf("server COPY: %s holds no jobs to copy", from)
	}
	return float64(rows) / took.Seconds(), nil
}

// copyJobs copies the rows of from's scheduler_job into to's, which must
// be empty, with the same columns in the same order and none generated,
// in chunks of batch rows in job_id order. Each chunk is exported with
// COPY (SELECT ...) TO STDOUT in PostgreSQL's binary format, untimed, then
// written with BEGIN, COPY ... FROM STDIN, COMMIT, timed; one connection
// does both. A chunk is exported just before it is written so that the
// process holds one chunk at a time (the rows of 2,000,000 jobs are about
// half a gigabyte). It returns the rows written and the time their
// writing took.
func copyJobs(ctx context.Context, pool *pgxpool.Pool, from, to string, batch int) (rows int64, took time.Duration, err error) {
	if batch < 1 {
		return 0, 0, fmt.Errorf("server COPY: batch %d: at least 1", batch)
	}
	src, dst := pgx.Identifier{from, "scheduler_job"}.Sanitize(), pgx.Identifier{to, "scheduler_job"}.Sanitize()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("server COPY: %w", err)
	}
	defer conn.Release()
	if err := sameColumns(ctx, conn.Conn(), src, dst); err != nil {
		return 0, 0, fmt.Errorf("server COPY: %w", err)
	}
	chunks, err := idChunks(ctx, conn.Conn(), src, batch)
	if err != nil {
		return 0, 0, fmt.Errorf("server COPY: read the ids of %s: %w", src, err)
	}
	pc := conn.Conn().PgConn()
	into := "COPY " + dst + " FROM STDIN WITH (FORMAT binary)"
	var buf bytes.Buffer
	for _, c := range chunks {
		buf.Reset()
		tag, err := pc.CopyTo(ctx, &buf, "COPY (SELECT * FROM "+src+" WHERE job_id BETWEEN '"+c.lo.String()+"' AND '"+c.hi.String()+
			"' ORDER BY job_id) TO STDOUT WITH (FORMAT binary)")
		if err != nil {
			return 0, 0, fmt.Errorf("server COPY: export: %w", err)
		}
		if tag.RowsAffected() != int64(c.rows) {
			return 0, 0, fmt.Errorf("server COPY: export of %s..%s: %d rows, want %d (was the table written meanwhile?)", c.lo, c.hi, tag.RowsAffected(), c.rows)
		}
		start := time.Now()
		n, err := copyInTx(ctx, pc, into, &buf)
		took += time.Since(start)
		if err != nil {
			return 0, 0, fmt.Errorf("server COPY: %w", err)
		}
		rows += n
	}
	return rows, took, nil
}

// copyInTx runs BEGIN, the COPY ... FROM STDIN sql reading r, and COMMIT
// (ROLLBACK when the COPY fails) on pc, and returns the rows copied.
func copyInTx(ctx context.Context, pc *pgconn.PgConn, sql string, r *bytes.Buffer) (int64, error) {
	if err := pc.Exec(ctx, "BEGIN").Close(); err != nil {
		return 0, err
	}
	tag, err := pc.CopyFrom(ctx, r, sql)
	if err != nil {
		return 0, errors.Join(err, pc.Exec(context.WithoutCancel(ctx), "ROLLBACK").Close())
	}
	if err := pc.Exec(ctx, "COMMIT").Close(); err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// idChunk is a range of job ids, lo to hi inclusive, holding rows rows.
type idChunk struct {
	lo, hi uuid.UUID
	rows   int
}

// idChunks reads the job ids of table (quoted) in order and cuts them
// into ranges of batch rows (the last one the rest).
func idChunks(ctx context.Context, conn *pgx.Conn, table string, batch int) ([]idChunk, error) {
	rows, err := conn.Query(ctx, "SELECT job_id FROM "+table+" ORDER BY job_id")
	if err != nil {
		return nil, err
	}
	var chunks []idChunk
	var id pgtype.UUID
	_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
		if n := len(chunks); n == 0 || chunks[n-1].rows == batch {
			chunks = append(chunks, idChunk{lo: id.Bytes})
		}
		c := &chunks[len(chunks)-1]
		c.hi = id.Bytes
		c.rows++
		return nil
	})
	return chunks, err
}

// column is a column of a table as the catalog gives it.
type column struct {
	name, typ string
	generated bool
}

// sameColumns fails unless the tables a and b (quoted, schema-qualified
// names) have the same columns in the same order, none of them
// generated: a binary COPY of SELECT * from one is then a COPY into the
// other's every column.
func sameColumns(ctx context.Context, conn *pgx.Conn, a, b string) error {
	read := func(table string) ([]column, error) {
		rows, err := conn.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod), attgenerated <> ''
			FROM pg_catalog.pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, table)
		if err != nil {
			return nil, fmt.Errorf("the columns of %s: %w", table, err)
		}
		var cols []column
		var c column
		_, err = pgx.ForEachRow(rows, []any{&c.name, &c.typ, &c.generated}, func() error {
			cols = append(cols, c)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("the columns of %s: %w", table, err)
		}
		return cols, nil
	}
	ca, err := read(a)
	if err != nil {
		return err
	}
	cb, err := read(b)
	if err != nil {
		return err
	}
	if !slices.Equal(ca, cb) {
		return fmt.Errorf("%s and %s differ in their columns (%s against %s): not made by the same migrations", a, b, columnList(ca), columnList(cb))
	}
	for _, c := range ca {
		if c.generated {
			return fmt.Errorf("%s has a generated column, %s, which a COPY cannot write", a, c.name)
		}
	}
	return nil
}

func columnList(cols []column) string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = c.name + " " + c.typ
	}
	return strings.Join(s, ", ")
}
