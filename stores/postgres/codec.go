package postgres

import (
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/ratchet-go/ratchet/sdk/spi"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// coreColumns selects one job in the form of sqlcore.JobColumns (the tags
// as a JSON array), read by the dialect's Decode through database/sql and
// pgx alike. The tags are looked up per job only when the tag table holds
// any row at all (an uncorrelated EXISTS, evaluated once per statement):
// an application that never tags its jobs saves a probe of the tag index
// per row, a tenth of the database's time in a claim of 500.
var coreColumns = sqlcore.JobColumns(sqlcore.CaseNull,
	"CASE WHEN (SELECT EXISTS (SELECT 1 FROM {tag})) THEN (SELECT json_agg(t.tag ORDER BY t.tag) FROM {tag} t WHERE t.job_id = j.job_id) END")

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

// rowReader reads job rows of coreColumns, followed by one column read
// into extra (nil: none), from pgx rows: the same columns as the dialect's
// Decode (sqlcore.Dialect.Decode) reads, into pgx's own types, then
// sqlcore.Dialect.Finish as Decode does, so the result is Decode's.
// Decode's database/sql types (a Scanner per nullable text, a boxed value
// per time) and its separate variables (each moved to the heap by the
// scan) made most of its cost, which the claim pays on its critical path
// for up to 1,000 rows. A rowReader is made once per result and its
// variables reused row after row (pgx scans byte columns into new slices,
// and the texts every claimed job repeats, its task, backoff kind and
// owner, are interned): a row costs the allocations of its job alone.
type rowReader struct {
	s                                 *Store
	r                                 sqlcore.Row
	raw, workflow                     pgtype.UUID
	task, backoff, owner, tags        pgtype.DriverBytes // interned (see texts), or copied
	lastErr, rtype, idem, params, res pgtype.Text
	payloadNull, resultNull           int64
	times                             [4]pgtype.Timestamptz // scheduled, created, claimed, finished
	dest                              []any
}

func (s *Store) newRowReader() *rowReader {
	v := &rowReader{s: s}
	r := &v.r
	v.dest = []any{&v.raw, &v.task, &r.Payload, &v.payloadNull, &r.Status, &r.Priority,
		&v.times[0], &v.times[1], &r.Attempts, &r.MaxRetries, &v.backoff, &r.BackoffParamUS,
		&r.ClaimSeq, &r.CrashCount, &v.owner, &v.times[2], &v.times[3], &v.lastErr,
		&r.Result, &v.resultNull, &v.rtype, &v.idem, &v.params, &v.res, &r.ResourceLimit,
		&v.workflow, &r.DepCount, &r.DepWaiting, &r.DepChildren, &r.TraceContext, &r.Snoozes, &v.tags}
	return v
}

// read decodes the current row of rows.
func (v *rowReader) read(rows pgx.Rows) (*spi.Job, pgtype.UUID, int64, error) {
	v.r = sqlcore.Row{}
	r := &v.r
	err := rows.Scan(v.dest...)
	texts := &v.s.texts
	r.Task, r.Backoff, r.OwnerNode = texts.get(v.task), texts.get(v.backoff), texts.get(v.owner)
	r.LastError = v.lastErr.String
	r.ResultType, r.IdempotencyKey, r.Resource = v.rtype.String, v.idem.String, v.res.String
	r.Params = sql.NullString{String: v.params.String, Valid: v.params.Valid}
	r.Payload, r.Result = sqlcore.Blob(r.Payload, v.payloadNull != 0), sqlcore.Blob(r.Result, v.resultNull != 0)
	var timeErr error
	for i, out := range [...]*time.Time{&r.Scheduled, &r.Created, &r.Claimed, &r.Finished} {
		switch t := v.times[i]; {
		case !t.Valid:
		case t.InfinityModifier != pgtype.Finite:
			timeErr = fmt.Errorf("a time column holds %s", t.InfinityModifier)
		default:
			*out = t.Time.UTC()
		}
	}
	return v.s.dialect.Finish(r, v.raw, sql.Null[pgtype.UUID]{V: v.workflow, Valid: v.workflow.Valid},
		sql.NullString{String: string(v.tags), Valid: v.tags != nil}, err, timeErr)
}

// interned holds the texts that the claims read for every job and that
// repeat across jobs (task names, backoff kinds, node ids), so that a
// claim of 1,000 jobs does not make 3,000 strings: lookups take no lock,
// and an addition copies the map (they stop at maxInterned texts).
type interned struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]string]
}

// maxInterned bounds interned: past it, texts are made as they come.
const maxInterned = 1024

// get returns b as a string ("" for nil), shared when it was seen before.
func (in *interned) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if m := in.m.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok {
			return s
		}
	}
	s := string(b)
	in.mu.Lock()
	defer in.mu.Unlock()
	old := in.m.Load()
	n := 0
	if old != nil {
		n = len(*old)
	}
	if n >= maxInterned {
		return s
	}
	m := make(map[string]string, n+1)
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[s] = s
	in.m.Store(&m)
	return s
}
