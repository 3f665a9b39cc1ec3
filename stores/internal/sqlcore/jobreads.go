package sqlcore

import (
	"context"
	"database/sql"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// JobReads implements spi.Store.GetJob and ListJobs for the database/sql
// stores over their dialect's statements and row decoder. A store embeds
// it (under a local alias, so the field stays unexported) and fills it when
// it builds itself.
type JobReads struct {
	Gate *Gate
	DB   Querier
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// GetSQL is the read of the job with id: the statement and its
	// arguments.
	GetSQL func(id uuid.UUID) (string, []any)
	// ListSQL is the read of up to limit jobs with an id above after, of
	// status (any when empty, a valid one otherwise), in id order.
	ListSQL func(after uuid.UUID, status spi.Status, limit int) (string, []any)
	// Decoder returns the decoder of the current row of rows (one per
	// read: it may keep its scan buffers between rows).
	Decoder func(rows *sql.Rows) func() (*spi.Job, error)
}

// GetJob returns one job with its tags and params, an error wrapping
// spi.ErrNotFound that names the id, or one wrapping spi.ErrCorruptJob when
// the row cannot be read back. It implements [spi.Store].
func (r JobReads) GetJob(ctx context.Context, id uuid.UUID) (*spi.Job, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	query, args := r.GetSQL(id)
	rows, err := r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, r.Fail("get job "+id.String(), err)
	}
	defer rows.Close()
	j, err := ReadOne(rows, id, r.Decoder(rows))
	if err != nil {
		return nil, r.Fail("get job", err)
	}
	return j, nil
}

// ListJobs returns up to p.Limit jobs (DefaultPageSize when zero or less)
// with an id greater than p.After, in id order (the byte order of the
// ids, which is the order of the UUIDs), optionally filtered by status,
// and the cursor of the next page: the last listed id when more jobs
// follow, the zero UUID otherwise. A row that cannot be read back fails
// the page with an error wrapping spi.ErrCorruptJob. An unknown status
// lists nothing. It implements [spi.Store].
func (r JobReads) ListJobs(ctx context.Context, p spi.ListParams) ([]*spi.Job, uuid.UUID, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return nil, uuid.Nil, err
	}
	defer done()
	limit := PageSize(p)
	if p.Status != "" && !p.Status.Valid() {
		return []*spi.Job{}, uuid.Nil, nil
	}
	query, args := r.ListSQL(p.After, p.Status, limit+1)
	rows, err := r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, uuid.Nil, r.Fail("list jobs", err)
	}
	defer rows.Close()
	jobs, next, err := ReadPage(rows, limit, r.Decoder(rows))
	if err != nil {
		return nil, uuid.Nil, r.Fail("list jobs", err)
	}
	return jobs, next, nil
}
