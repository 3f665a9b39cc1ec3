package sqlite

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ratchet-go/ratchet/stores/internal/sqlcore"
)

// jobColumns selects one job with its tags, in the order of
// sqlcore.JobColumns (see Dialect.Decode).
// It also serves as the RETURNING list of the claim. The tags are read
// only when the tag table holds any row (an uncorrelated EXISTS, which
// SQLite evaluates once per statement): without tags, a claim of 500 jobs
// saves 500 lookups and sorts.
const jobColumns = `job_id, task_name, payload, payload IS NULL, status, priority,
	scheduled_time, created_time, attempts, max_retries, backoff_kind, backoff_param_us,
	claim_seq, crash_count, owner_node, claimed_time, finished_time, last_error,
	job_result, job_result IS NULL, result_type, idempotency_key, params,
	resource_name, resource_limit, workflow_id, dep_count, dep_waiting, dep_children, trace_context, snoozes,
	CASE WHEN EXISTS (SELECT 1 FROM scheduler_job_tag) THEN
		(SELECT json_group_array(t.tag ORDER BY t.rowid) FROM scheduler_job_tag t WHERE t.job_id = scheduler_job.job_id) END`

// ParseID reads a stored id: the canonical UUID text.
func (database) ParseID(raw string) (uuid.UUID, error) {
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 || strings.ToLower(raw) != raw { // canonical form, without formatting it again
		return uuid.Nil, sqlcore.Corrupt(raw, "job_id %q is not a canonical UUID", raw)
	}
	return id, nil
}

// micros is the stored form of a time: unix microseconds.
func micros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros is the UTC time of a stored value. The zero time round-trips.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// nullMicros stores the zero time as NULL.
func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonList encodes strings as a JSON array, for json_each.
func jsonList(items []string) string {
	if items == nil {
		items = []string{}
	}
	b, _ := json.Marshal(items)
	return string(b)
}

// idList encodes job ids as a JSON array of their text, for json_each.
func idList(ids []uuid.UUID) string {
	text := make([]string, len(ids))
	for i, id := range ids {
		text[i] = id.String()
	}
	return jsonList(text)
}
