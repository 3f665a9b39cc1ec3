package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"
)

// jobColumns selects one job with its tags (sorted), in the order of
// rowScan.dest, from the table aliased j. It also serves as the RETURNING
// list of the claim.
const jobColumns = `j.job_id, j.task_name, j.payload, j.status, j.priority,
	j.scheduled_time, j.created_time, j.attempts, j.max_retries, j.backoff_kind, j.backoff_param_us,
	j.claim_seq, j.crash_count, j.owner_node, j.claimed_time, j.finished_time, j.last_error,
	j.job_result, j.result_type, j.idempotency_key, j.params, j.resource_name, j.resource_limit,
	(SELECT array_agg(t.tag ORDER BY t.tag) FROM {tag} t WHERE t.job_id = j.job_id)`

// numJobColumns is the number of columns of jobColumns.
const numJobColumns = 24

// rowScan holds the raw columns of one job row.
type rowScan struct {
	id                                         pgtype.UUID
	task, status, backoff                      string
	payload, result                            []byte
	priority, attempts, maxRetries, crash      int32
	backoffParam, claimSeq                     int64
	scheduled, created, claimed, finished      pgtype.Timestamptz
	owner, lastError, resultType, idem, params pgtype.Text
	resource                                   pgtype.Text
	resourceLimit                              int64
	tags                                       []string
}

func (r *rowScan) dest() []any {
	return []any{&r.id, &r.task, &r.payload, &r.status, &r.priority,
		&r.scheduled, &r.created, &r.attempts, &r.maxRetries, &r.backoff, &r.backoffParam,
		&r.claimSeq, &r.crash, &r.owner, &r.claimed, &r.finished, &r.lastError,
		&r.result, &r.resultType, &r.idem, &r.params, &r.resource, &r.resourceLimit, &r.tags}
}

// scan reads one row. A column that cannot be converted is a corrupt row;
// the id, read first, is already set when that happens.
func (r *rowScan) scan(rows pgx.Rows, extra ...any) error {
	*r = rowScan{}
	dest := append(r.dest(), extra...)
	if err := rows.Scan(dest...); err != nil {
		return corrupt(r.idString(), "unreadable column: %v", err)
	}
	return nil
}

func (r *rowScan) idString() string {
	if !r.id.Valid {
		return "(unknown id)"
	}
	return uuid.UUID(r.id.Bytes).String()
}

// job decodes the row, or returns an error wrapping spi.ErrCorruptJob that
// names the job and the problem.
func (r *rowScan) job() (*spi.Job, error) {
	if !r.id.Valid {
		return nil, corrupt(r.idString(), "NULL job_id")
	}
	id := uuid.UUID(r.id.Bytes)
	st := spi.Status(r.status)
	if !st.Valid() {
		return nil, corrupt(id.String(), "unknown status %q", r.status)
	}
	p := spi.Priority(r.priority)
	if !p.Valid() {
		return nil, corrupt(id.String(), "priority %d out of range 0..4", r.priority)
	}
	var times [4]time.Time
	for i, ts := range []pgtype.Timestamptz{r.scheduled, r.created, r.claimed, r.finished} {
		if ts.Valid && ts.InfinityModifier != pgtype.Finite {
			return nil, corrupt(id.String(), "infinite timestamp")
		}
		if ts.Valid {
			times[i] = ts.Time.UTC()
		}
	}
	if !r.scheduled.Valid {
		return nil, corrupt(id.String(), "NULL scheduled_time")
	}
	j := &spi.Job{
		ID:             id,
		TaskName:       r.task,
		Payload:        r.payload,
		Status:         st,
		Priority:       p,
		ScheduledAt:    times[0],
		CreatedAt:      times[1],
		Attempts:       int(r.attempts),
		MaxRetries:     int(r.maxRetries),
		Backoff:        spi.BackoffKind(r.backoff),
		BackoffParam:   time.Duration(r.backoffParam) * time.Microsecond,
		CrashCount:     int(r.crash),
		ClaimSeq:       r.claimSeq,
		OwnerNode:      r.owner.String,
		ClaimedAt:      times[2],
		FinishedAt:     times[3],
		LastError:      r.lastError.String,
		Result:         r.result,
		ResultType:     r.resultType.String,
		IdempotencyKey: r.idem.String,
		Tags:           r.tags,
		Resource:       r.resource.String,
		ResourceLimit:  int(r.resourceLimit),
	}
	if r.params.Valid {
		if err := json.Unmarshal([]byte(r.params.String), &j.Params); err != nil {
			return nil, corrupt(id.String(), "params are not a JSON object of strings: %v", err)
		}
	}
	return j, nil
}

func corrupt(id, format string, args ...any) error {
	return fmt.Errorf("%w: job %s: %s", spi.ErrCorruptJob, id, fmt.Sprintf(format, args...))
}

// pgUUID is the pgx form of a job id.
func pgUUID(id uuid.UUID) pgtype.UUID { return pgtype.UUID{Bytes: id, Valid: true} }

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) pgtype.Timestamptz {
	if t.IsZero() {
		return pgtype.Timestamptz{}
	}
	return pgtype.Timestamptz{Time: t, Valid: true}
}

// nullText stores "" as NULL.
func nullText(s string) pgtype.Text {
	return pgtype.Text{String: s, Valid: s != ""}
}
