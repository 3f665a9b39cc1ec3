package sqlcore

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Row is one job row as a store read it from its columns, before
// validation: the store converts its database's types (ids, times, NULLs,
// tag lists) into these fields, and Job checks and builds the job.
type Row struct {
	// ID is the job id; IDText names the stored id in messages, also
	// when it could not be read as a UUID.
	ID     uuid.UUID
	IDText string
	// Problem, when not empty, is what the store found wrong while
	// converting the columns (an id that is not a UUID, an infinite or
	// missing timestamp): the row is corrupt.
	Problem string

	Task, Status, Backoff string
	// Payload and Result are nil for NULL.
	Payload, Result []byte
	Priority        int64
	// Scheduled, Created, Claimed and Finished are UTC; zero for NULL.
	Scheduled, Created, Claimed, Finished time.Time

	Attempts, MaxRetries, BackoffParamUS, ClaimSeq, CrashCount int64

	OwnerNode, LastError, ResultType, IdempotencyKey, Resource string
	ResourceLimit                                              int64
	// Params is the params column, a JSON object of strings.
	Params sql.NullString
	// Tags are the job's tags, in the store's order.
	Tags []string
}

// Corrupt returns an error wrapping spi.ErrCorruptJob that names the job
// (by the text of its stored id) and the problem.
func Corrupt(id, format string, args ...any) error {
	return fmt.Errorf("%w: job %s: %s", spi.ErrCorruptJob, id, fmt.Sprintf(format, args...))
}

// Job validates the row and returns its job, or an error wrapping
// spi.ErrCorruptJob that names the job and the problem: a malformed id, an
// unknown status, a priority out of range, params that are not a JSON
// object of strings. GetJob and ListJobs report such a row; ClaimJobs
// fails it into the dead-letter queue instead of returning it.
func (r *Row) Job() (*spi.Job, error) {
	if r.Problem != "" {
		return nil, Corrupt(r.IDText, "%s", r.Problem)
	}
	st := spi.Status(r.Status)
	if !st.Valid() {
		return nil, Corrupt(r.IDText, "unknown status %q", r.Status)
	}
	p := spi.Priority(r.Priority)
	if !p.Valid() {
		return nil, Corrupt(r.IDText, "priority %d out of range 0..4", r.Priority)
	}
	j := &spi.Job{
		ID:             r.ID,
		TaskName:       r.Task,
		Payload:        r.Payload,
		Status:         st,
		Priority:       p,
		ScheduledAt:    r.Scheduled,
		CreatedAt:      r.Created,
		Attempts:       int(r.Attempts),
		MaxRetries:     int(r.MaxRetries),
		Backoff:        spi.BackoffKind(r.Backoff),
		BackoffParam:   time.Duration(r.BackoffParamUS) * time.Microsecond,
		CrashCount:     int(r.CrashCount),
		ClaimSeq:       r.ClaimSeq,
		OwnerNode:      r.OwnerNode,
		ClaimedAt:      r.Claimed,
		FinishedAt:     r.Finished,
		LastError:      r.LastError,
		Result:         r.Result,
		ResultType:     r.ResultType,
		IdempotencyKey: r.IdempotencyKey,
		Resource:       r.Resource,
		ResourceLimit:  int(r.ResourceLimit),
		Tags:           r.Tags,
	}
	if r.Params.Valid {
		if err := json.Unmarshal([]byte(r.Params.String), &j.Params); err != nil {
			return nil, Corrupt(r.IDText, "params are not a JSON object of strings: %v", err)
		}
	}
	return j, nil
}

// Blob restores nil for NULL and an empty slice for an empty BLOB (drivers
// return nil for both).
func Blob(b []byte, isNull bool) []byte {
	switch {
	case isNull:
		return nil
	case b == nil:
		return []byte{}
	}
	return b
}
