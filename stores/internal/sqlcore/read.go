package sqlcore

import (
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
