package sqlcore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Cursor is what a store's result rows offer (database/sql's *sql.Rows and
// pgx's Rows alike); the store closes them.
type Cursor interface {
	Next() bool
	Err() error
}

// DefaultPageSize is the page of ListJobs when spi.ListParams.Limit is zero
// or less.
const DefaultPageSize = 100

// PageSize returns the page size of a ListJobs call: p.Limit, or
// DefaultPageSize when that is zero or less. The store's query asks for one
// row more, so ReadPage can tell whether a next page follows.
func PageSize(p spi.ListParams) int {
	if p.Limit <= 0 {
		return DefaultPageSize
	}
	return p.Limit
}

// ReadOne reads the job of a GetJob query: decode converts the current row
// (an error wrapping spi.ErrCorruptJob for a row that cannot be read back);
// no row is an error wrapping spi.ErrNotFound that names id.
func ReadOne(rows Cursor, id uuid.UUID, decode func() (*spi.Job, error)) (*spi.Job, error) {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, id)
	}
	return decode()
}

// ReadPage reads a ListJobs page of at most limit jobs from rows (a query
// for limit+1 rows in id order), decoding each with decode, and returns the
// cursor of the next page: the last listed id when more jobs follow, the
// zero UUID otherwise. A row that cannot be read back fails the page.
func ReadPage(rows Cursor, limit int, decode func() (*spi.Job, error)) ([]*spi.Job, uuid.UUID, error) {
	jobs := make([]*spi.Job, 0, min(limit, 256))
	for rows.Next() {
		if len(jobs) == limit {
			return jobs, jobs[len(jobs)-1].ID, nil
		}
		j, err := decode()
		if err != nil {
			return nil, uuid.Nil, err
		}
		jobs = append(jobs, j)
	}
	if err := rows.Err(); err != nil {
		return nil, uuid.Nil, err
	}
	return jobs, uuid.Nil, nil
}

// Scanner is a Cursor whose current row can be scanned.
type Scanner interface {
	Cursor
	Scan(dest ...any) error
}

// ReadIDs reads a one-column result of job ids; parse converts the stored
// form (a UUID's bytes or text) and names a malformed one.
func ReadIDs[T any](rows Scanner, parse func(T) (uuid.UUID, error)) ([]uuid.UUID, error) {
	var out []uuid.UUID
	for rows.Next() {
		var raw T
		if err := rows.Scan(&raw); err != nil {
			return nil, err
		}
		id, err := parse(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// ReadProperties reads the (key, value) rows of a job LEFT JOINed with the
// properties a query selects: no row at all means the job does not exist
// (an error wrapping spi.ErrNotFound that names jobID); a row with a NULL
// key, a job without any such property.
func ReadProperties(rows Scanner, jobID uuid.UUID) (map[string]string, error) {
	found := false
	out := map[string]string{}
	for rows.Next() {
		found = true
		var k, v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		if k.Valid {
			out[k.String] = v.String
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("%w: %s", spi.ErrNotFound, jobID)
	}
	return out, nil
}

// InChunks calls fn with consecutive chunks of at most n items (a
// dialect's limit on an IN list or on the terms of a statement) and
// returns what the calls returned, in order.
func InChunks[E, T any](items []E, n int, fn func(chunk []E) ([]T, error)) ([]T, error) {
	var out []T
	for start := 0; start < len(items); start += n {
		got, err := fn(items[start:min(start+n, len(items))])
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

// ReadColumn reads the one column of rows as T, for example the task names
// of PendingTasksSQL. The caller closes rows.
func ReadColumn[T any](rows Scanner) ([]T, error) {
	var out []T
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Args returns vs as statement arguments, each converted by conv (as it
// is when conv is nil): the stored forms of ids, names or times.
func Args[E any](vs []E, conv func(E) any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if conv == nil {
			out[i] = v
		} else {
			out[i] = conv(v)
		}
	}
	return out
}

// Conv returns vs each converted by conv.
func Conv[E, V any](vs []E, conv func(E) V) []V {
	out := make([]V, len(vs))
	for i, v := range vs {
		out[i] = conv(v)
	}
	return out
}

// ReadCounts reads rows of (name, count) into a map, closing rows: the
// holders of each resource that a dialect's Holders counts.
func ReadCounts(rows *sql.Rows) (map[string]int64, error) {
	defer rows.Close()
	out := make(map[string]int64)
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, rows.Err()
}

// queryAll runs the read q of c (as c.do runs an operation) and returns
// each row as scan reads it.
func queryAll[T, R any](ctx context.Context, c Core[T], op, q string, args []any, scan func(*sql.Rows) (R, error)) ([]R, error) {
	var out []R
	err := c.do(op, func() error {
		out = nil
		rows, err := c.cfg.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scan(rows)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	return out, err
}
