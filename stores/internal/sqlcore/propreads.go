package sqlcore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// PropertyReads implements the reads of spi.JobPropertyStore that every
// database/sql store shapes the same way, GetPropertiesByPrefix and
// FindJobsByProperty, over the dialect's statements; T is the Go type the
// dialect scans a job id into. A store embeds it (under a local alias, so
// the field stays unexported) and fills it when it builds itself.
type PropertyReads[T any] struct {
	Gate *Gate
	DB   Querier
	// Fail wraps an error with the operation's name, as the store does.
	Fail func(op string, err error) error
	// GetSQL reads the job's (prop_key, prop_value) for key LEFT JOINed
	// to the job: no row means no job, a NULL key no such property.
	GetSQL func(jobID uuid.UUID, key string) (string, []any)
	// PrefixSQL reads the job's (key, value) rows whose key starts with
	// prefix, byte for byte, LEFT JOINed to the job (see ReadProperties).
	PrefixSQL func(jobID uuid.UUID, prefix string) (string, []any)
	// FindSQL reads the ids of the jobs whose property key equals value,
	// in ascending order, at most limit of them (all when limit <= 0).
	FindSQL func(key, value string, limit int) (string, []any)
	// ParseID converts a scanned id, naming a malformed one.
	ParseID func(T) (uuid.UUID, error)
}

// GetProperty returns the job's property key and whether it is set. It
// wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (r PropertyReads[T]) GetProperty(ctx context.Context, jobID uuid.UUID, key string) (string, bool, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return "", false, err
	}
	defer done()
	var k, v sql.NullString
	query, args := r.GetSQL(jobID, key)
	err = r.DB.QueryRowContext(ctx, query, args...).Scan(&k, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, r.Fail("get property", fmt.Errorf("%w: %s", spi.ErrNotFound, jobID))
	}
	if err != nil {
		return "", false, r.Fail("get property", err)
	}
	return v.String, k.Valid, nil
}

// GetPropertiesByPrefix returns the job's properties whose key starts with
// prefix, byte for byte ("" for all; no character of the prefix is a
// wildcard). It wraps spi.ErrNotFound for an unknown job. It implements
// [spi.JobPropertyStore].
func (r PropertyReads[T]) GetPropertiesByPrefix(ctx context.Context, jobID uuid.UUID, prefix string) (map[string]string, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	query, args := r.PrefixSQL(jobID, prefix)
	rows, err := r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, r.Fail("get properties", err)
	}
	defer rows.Close()
	out, err := ReadProperties(rows, jobID)
	if err != nil {
		return nil, r.Fail("get properties", err)
	}
	return out, nil
}

// FindJobsByProperty returns up to limit ids (all when limit <= 0), in
// ascending order, of the jobs whose property key equals value, from the
// index on (prop_key, prop_value, job_id). It implements
// [spi.JobPropertyStore].
func (r PropertyReads[T]) FindJobsByProperty(ctx context.Context, key, value string, limit int) ([]uuid.UUID, error) {
	done, err := r.Gate.Enter()
	if err != nil {
		return nil, err
	}
	defer done()
	query, args := r.FindSQL(key, value, limit)
	rows, err := r.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, r.Fail("find jobs by property", err)
	}
	defer rows.Close()
	out, err := ReadIDs(rows, r.ParseID)
	if err != nil {
		return nil, r.Fail("find jobs by property", err)
	}
	return out, nil
}
