package sqlcore

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// Row is one job row as a store read it from its columns, before
// validation: the store converts its database's types (ids, times, NULLs,
// tag lists) into these fields, and Job checks and builds the job.
type Row struct {
	// ID is the job id; messages name the job by its text. Columns that
	// cannot be converted (an id that is not a UUID, an unreadable time or
	// tag list) are reported corrupt before Job, by Dialect.Finish.
	ID uuid.UUID

	Task, Status, Backoff string
	// Payload and Result are nil for NULL.
	Payload, Result []byte
	Priority        int64
	// Scheduled, Created, Claimed and Finished are UTC; zero for NULL.
	Scheduled, Created, Claimed, Finished time.Time

	Attempts, MaxRetries, BackoffParamUS, ClaimSeq, CrashCount, Snoozes int64

	OwnerNode, LastError, ResultType, IdempotencyKey, Resource string
	ResourceLimit                                              int64
	// Params is the params column, a JSON object of strings.
	Params sql.NullString
	// Tags are the job's tags, in the store's order.
	Tags []string
	// The workflow columns: the workflow's id (zero for none), the
	// number of dependencies, of those not finished, and of dependents.
	WorkflowID                        uuid.UUID
	DepCount, DepWaiting, DepChildren int64
	// TraceContext is the trace_context column; nil for NULL or empty.
	TraceContext []byte
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
	st := spi.Status(r.Status)
	if !st.Valid() {
		return nil, Corrupt(r.ID.String(), "unknown status %q", r.Status)
	}
	p := spi.Priority(r.Priority)
	if !p.Valid() {
		return nil, Corrupt(r.ID.String(), "priority %d out of range 0..4", r.Priority)
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
		Snoozes:        int(r.Snoozes),
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

		WorkflowID:      r.WorkflowID,
		DependencyCount: int(r.DepCount),
		Waiting:         int(r.DepWaiting),
		Dependents:      int(r.DepChildren),
	}
	if len(r.TraceContext) > 0 {
		j.TraceContext = r.TraceContext
	}
	if r.Params.Valid {
		var err error
		if j.Params, err = DecodeParams(r.Params.String); err != nil {
			return nil, Corrupt(r.ID.String(), "params are not a JSON object of strings: %v", err)
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

// jobColumnNames are the columns of one job row, in the order of Row's
// stores' scans; "payload_null" and "result_null" stand for whether payload
// and job_result are NULL (an empty BLOB is not NULL), "tags" for the job's
// tags.
//
// NumJobColumns is their number.
var jobColumnNames = []string{
	"job_id", "task_name", "payload", "payload_null", "status", "priority",
	"scheduled_time", "created_time", "attempts", "max_retries", "backoff_kind", "backoff_param_us",
	"claim_seq", "crash_count", "owner_node", "claimed_time", "finished_time", "last_error",
	"job_result", "result_null", "result_type", "idempotency_key", "params", "resource_name", "resource_limit",
	"workflow_id", "dep_count", "dep_waiting", "dep_children", "trace_context", "snoozes", "tags",
}

// NumJobColumns is the number of columns of JobColumns.
var NumJobColumns = len(jobColumnNames)

// JobColumns returns the select list of one job from the table aliased j,
// in the order the stores scan it: isNull renders the NULL flag of a column
// (payload, job_result), and tags is the dialect's aggregate of the job's
// tags.
func JobColumns(isNull func(col string) string, tags string) string {
	parts := make([]string, len(jobColumnNames))
	for i, c := range jobColumnNames {
		switch c {
		case "payload_null":
			parts[i] = isNull("payload")
		case "result_null":
			parts[i] = isNull("job_result")
		case "tags":
			parts[i] = tags
		default:
			parts[i] = "j." + c
		}
	}
	return strings.Join(parts, ", ")
}

// JobColumnNames returns the names of the job row's columns in scan order
// (see JobColumns), for tests that fake a database's answers.
func JobColumnNames() []string { return slices.Clone(jobColumnNames) }
